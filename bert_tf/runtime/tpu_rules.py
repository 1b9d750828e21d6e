"""The rules a TPU program must follow, checked on any device.

A TPU runs each step as one XLA program, compiled for one set of input
shapes. So a step must have:

- static shapes: every batch the same size (drop_remainder in training;
  evaluation and prediction files padded to whole batches), every sequence
  max_seq_length long;
- no string op and no Python callback (tf.py_function, tf.numpy_function)
  inside it: XLA cannot compile them;
- int32 features, the integer type TPUs compute in.

Under TPUStrategy these rules always apply: the Trainer and the feature
extractor check their inputs and compile every train, eval and predict step
with XLA. With BERT_TF_TPU_RULES=1 they do the same on a CPU or GPU, so that
a run that would fail on a TPU fails here first, in seconds and for free:

  BERT_TF_TPU_RULES=1 python run_classifier.py ... --jit_compile=true

The string-op and callback rules are XLA's own: it refuses to compile a step
that breaks them. The shape and type rules are checked here, on the input's
element_spec, before the first step: XLA on a CPU or GPU would quietly
compile once per batch shape instead.
"""

import os

import tensorflow as tf

ENV = "BERT_TF_TPU_RULES"

# Integer and float types a TPU step takes; int64 and float64 are emulated
# or refused, and strings cannot enter a step at all.
ALLOWED_DTYPES = (tf.int32, tf.float32, tf.bfloat16, tf.bool)


class TpuRuleError(ValueError):
    """An input breaks a rule of TPU programs; the message names the feature."""


def enforced(strategy):
    """Whether the TPU's rules apply: under TPUStrategy, or with BERT_TF_TPU_RULES=1.

    Args:
      strategy: The tf.distribute.Strategy in use.

    Returns:
      A bool.
    """
    return (isinstance(strategy, tf.distribute.TPUStrategy)
            or os.environ.get(ENV, "0") == "1")


def check_input(element_spec, what):
    """Checks that every feature of an input has a static shape and a TPU type.

    Args:
      element_spec: A dataset's (or distributed dataset's) element_spec: a
        dict of feature name to tf.TensorSpec, or to per-replica specs.
      what: What the input is for ("training", "evaluation", ...), for the
        message.

    Raises:
      TpuRuleError: naming the first feature with an unknown dimension or a
        type other than ALLOWED_DTYPES.
    """
    features = element_spec if isinstance(element_spec, dict) else {"input": element_spec}
    for name, spec in sorted(features.items()):
        for tensor in tf.nest.flatten(spec, expand_composites=True):
            shape = tensor.shape
            if not shape.is_fully_defined():
                raise TpuRuleError(
                    f"the {what} input's feature {name!r} has shape {shape}: a TPU needs "
                    "static shapes (batch with drop_remainder=True, pad every sequence to "
                    "max_seq_length)")
            if tensor.dtype not in ALLOWED_DTYPES:
                raise TpuRuleError(
                    f"the {what} input's feature {name!r} is {tensor.dtype.name}: a TPU step "
                    "takes int32, float32, bfloat16 or bool (cast int64 to int32; strings "
                    "cannot enter a step)")
