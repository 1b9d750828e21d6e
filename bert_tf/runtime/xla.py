"""Whether the train, eval and predict steps are compiled with XLA (--jit_compile)."""

import tensorflow as tf

from bert_tf.runtime import cpu, tpu_rules

# --jit_compile's values.
JIT_COMPILE_CHOICES = ("auto", "true", "false")


def parse_jit_compile(value):
    """--jit_compile's value as resolve_jit_compile takes it: True, False or None (auto)."""
    return {"auto": None, "true": True, "false": False}[value.lower()]


def resolve_jit_compile(jit_compile, strategy, policy):
    """Whether the train, eval and predict steps are compiled with XLA.

    Under the TPU's rules (tpu_rules.py) every step is compiled, whatever
    jit_compile says: a TPU runs nothing else. This is the one place the
    choice is made, once per run, by run_setup.Runtime; the Trainer, the
    feature extractor and the CPU allocator (run_setup.prepare) follow the
    Runtime.

    Args:
      jit_compile: True, False, or None for auto: XLA on GPUs and on most
        CPUs, but not on a CPU under the bfloat16 policy, because XLA's CPU
        backend leaves the bfloat16 matrix units unused that TensorFlow's own
        (oneDNN) kernels use, nor in float32 on a CPU whose oneDNN kernels
        outrun XLA (cpu.py: AMX, and AVX512-BF16, Intel's or AMD's). TPUs
        compile every step anyway. The measurements behind this choice are in
        docs/benchmarks.md, "`--jit_compile=auto`: the figures behind it".
      strategy: The strategy the model runs under.
      policy: The Keras dtype policy name it computes under
        (precision.choose_policy).

    Returns:
      A bool.
    """
    if tpu_rules.enforced(strategy):
        return True
    if jit_compile is not None:
        return jit_compile
    if not runs_on_cpu(strategy):
        return True
    if policy == "mixed_bfloat16":
        return False
    return cpu.this_cpu().float32_prefers_xla


def runs_on_cpu(strategy):
    """Whether the strategy's replicas are CPUs (no TPU, no GPU)."""
    return not (isinstance(strategy, tf.distribute.TPUStrategy)
                or tf.config.list_logical_devices("GPU"))
