"""Where a pretraining step's CPU time goes: the harness's step, profiled op by op.

Builds bert_tf's model exactly as the bench-peers harness trains it
(bench/peer_adapter.py, Keras AdamW, Keras sparse cross-entropy; XLA unless
--nojit_compile; float32 unless --precision=mixed_bfloat16), runs --steps
steps under the TensorFlow profiler with XLA's per-thunk trace events on,
and adds up each optimized-HLO instruction's time. The HLO dump maps every
instruction back to the TensorFlow op it came from; without XLA, each
kernel's trace event names its op and type. The time is reported in a few
groups:

  mlm_projection  the [positions, hidden] x [hidden, vocab] logits matmul and
                  its two gradients (fixed by the task: 20 positions x 30522)
  mlm_loss        the harness's softmax cross-entropy on those logits, and
                  the output bias (its add and its gradient)
  encoder_matmul  the encoder's, pooler's and heads' other matmuls, attention
                  included
  encoder_other   everything else in the model: LayerNorm, GELU, softmax,
                  dropout, transposes
  optimizer       the harness's Keras AdamW update
  other           anything left

One thread does all the work, so the groups add up to the step and show
how much work each one is, free of how the cores overlap it. It also
reports the matmul FLOPs, the same thread's matmul rate (2048^3, in the
step's compute dtype and compiled as the step is), and
from these a bound: the seq/s the step could reach if everything but the
MLM projection and loss ran at that matmul rate with no overhead, on every
core with perfect scaling.

Prints one JSON line per group, then a summary line, each with where it ran
(machine.describe()); --out appends them to a file too.

The harness's configs, workload, batch and FLOP count come from
bench/pretraining_step.py.

Example, from the repository root:
  .venv/bin/python -m bench.step_profile --config=bert_tiny
  .venv/bin/python -m bench.step_profile --config=bert_base --precision=mixed_bfloat16 \\
      --nojit_compile
"""

import argparse
import collections
import glob
import os
import re
import tempfile
import time

from bench import arguments, machine, pretraining_step, step_ab

# Trace events that wrap others rather than doing work themselves.
_WRAPPERS = re.compile(r"^(one_step_on_data|EagerExecute|TFE_Py_ExecuteCancelable"
                       r"|EagerKernelExecute|EagerLocalExecute.*|__inference.*"
                       r"|CpuExecutable::.*|BlockUntilReady"
                       r"|ThunkExecutor::Execute|SlinkyThreadPool::Await"
                       r"|KernelAndDeviceFunc::Run|ExecutorState::Process.*)$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%(\S+) = (?:\([^)]*\)|\S+) (\w[\w-]*)\((?:%([\w.-]+))?")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALLS = re.compile(r"(?:calls|to_apply)=%([\w.-]+)")
# TensorFlow's (oneDNN) matmul kernels, as graph mode's trace names their op types.
_MATMUL_TYPE = re.compile(r"MatMul|Einsum")


def _group(opcode, op_name):
    """The report group of one HLO instruction, from its opcode and TF op name.

    bert_tf's model is named "bert_tf" (its MLM head's scope "predictions");
    keras-hub's is a functional model ("functional", its head's scope
    "mlm_head", the projection "token_embedding").
    """
    if "adam_w" in op_name:
        return "optimizer"
    if (("predictions" in op_name and "transform" not in op_name and opcode == "dot")
            or ("mlm_head/token_embedding" in op_name and opcode == "dot")):
        return "mlm_projection"
    if "compile_loss" in op_name or re.search(r"(predictions|mlm_head)[_\d]*/add", op_name):
        return "mlm_loss"
    # bert_tf's custom gradients build their matmuls outside any layer's scope.
    if opcode == "dot":
        return "encoder_matmul"
    if "bert_tf" in op_name or "functional" in op_name:
        return "encoder_other"
    return "other"


def _instruction_groups(dump_dir):
    """Maps each instruction of the step's optimized HLO module to its group.

    A fusion or call made by XLA often carries no op name itself; it then
    takes the most common op name inside the computation it calls, or failing
    that, the group of its first operand.
    """
    modules = glob.glob(os.path.join(dump_dir, "*one_step_on_data*cpu_after_optimizations.txt"))
    if not modules:
        raise FileNotFoundError(f"no optimized HLO of the train step in {dump_dir}")
    names_in = collections.defaultdict(collections.Counter)  # computation -> op names
    instructions = []  # (name, opcode, first operand, op name or None, called computation)
    computation = None
    with open(max(modules, key=os.path.getsize)) as f:
        for line in f:
            if line.startswith(("%", "ENTRY")):
                computation = line.split()[1 if line.startswith("ENTRY") else 0].lstrip("%")
            match = _INSTRUCTION.match(line)
            if not match:
                continue
            op_name, calls = _OP_NAME.search(line), _CALLS.search(line)
            if op_name:
                names_in[computation][op_name.group(1)] += 1
            instructions.append((*match.groups(), op_name and op_name.group(1),
                                 calls and calls.group(1)))
    groups = {}
    for name, opcode, operand, op_name, calls in instructions:
        if op_name is None and names_in[calls]:
            op_name = names_in[calls].most_common(1)[0][0]
        groups[name] = (_group(opcode, op_name) if op_name
                        else groups.get(operand, "other"))
    return groups


def _kernel_group(event_name):
    """The report group of one graph-mode event: a kernel, "op_name:op_type", or an XLA thunk.

    Without XLA for the step, the compiled functions left are bert_tf's
    fused elementwise pieces (its dropout masks, its GELU), so XLA's thunks
    count as encoder_other.
    """
    op_name, _, op_type = event_name.rpartition(":")
    if not op_name:
        return "encoder_other"
    return _group("dot" if _MATMUL_TYPE.search(op_type) else op_type, op_name)


# Op types of the elementwise work that bert_tf's written-out gradients do; those
# ops carry no layer scope in their names (custom_gradient builds them apart).
_ELEMENTWISE = ("Mul", "AddV2", "Sub", "Tanh", "Sum", "Mean", "Square", "RealDiv", "Neg")


def _part(event_name):
    """Which part of the step one graph-mode event belongs to, by its op name and type.

    The parts the step's time is usually asked about: matmuls, casts, softmax,
    LayerNorm, GELU, dropout, bert_tf's written-out gradients (their
    recomputations included), the optimizer, the loss, XLA's fused loops
    (bert_tf's dropout masks and GELU) and the rest.
    """
    op_name, _, op_type = event_name.rpartition(":")
    lowered = op_name.lower()
    if not op_name:
        return "fused loops (XLA)"
    if "adam_w" in op_name:
        return "optimizer"
    if _MATMUL_TYPE.search(op_type) or "Transpose" in op_type:
        return "matmuls"
    if op_type == "Cast":
        return "casts"
    if "compile_loss" in op_name:
        return "loss"
    if "dropout" in lowered or op_type.startswith("StatelessRandom"):
        return "dropout"
    if "gelu" in lowered or (op_type in ("Tanh", "TanhGrad") and "/" in op_name):
        return "GELU"
    if "layer_norm" in lowered or "layernorm" in lowered or "moments" in lowered:
        return "LayerNorm"
    if "softmax" in op_type.lower():
        return "softmax"
    if "/" not in op_name and op_type in _ELEMENTWISE:
        return "written-out gradients"
    return "other"


def _event_ms(log_dir, steps):
    """Milliseconds per step of every leaf trace event, by event name."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with open(glob.glob(os.path.join(log_dir, "**", "*.xplane.pb"), recursive=True)[0], "rb") as f:
        space.ParseFromString(f.read())
    totals = collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if not _WRAPPERS.match(name):
                    totals[name] += event.duration_ps / 1e9 / steps
    return totals


def _matmul_gflops(tf, dtype, jit_compile):
    """One thread's matmul rate on 2048^3 in dtype, GFLOP/s (median of 5), compiled as the step."""
    a = tf.cast(tf.random.normal([2048, 2048]), dtype)
    matmul = tf.function(lambda x: tf.matmul(x, x), jit_compile=jit_compile)
    matmul(a).numpy()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        matmul(a).numpy()
        times.append(time.perf_counter() - start)
    return 2 * 2048 ** 3 / sorted(times)[2] / 1e9


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="bert_tiny", choices=["bert_tiny", "bert_base"],
                        help="The harness's config.")
    parser.add_argument("--steps", type=int, default=3,
                        help="Profiled steps (after 3 warm-up steps).")
    parser.add_argument("--precision", default="float32", choices=["float32", "mixed_bfloat16"],
                        help="Keras dtype policy.")
    arguments.add_boolean(parser, "jit_compile", True,
                          "XLA (groups from the optimized HLO) or TensorFlow's own graph "
                          "kernels (groups from each kernel's op name and type).")
    parser.add_argument("--variant", default="bert_tf", choices=step_ab.VARIANTS,
                        help="Which model: bert_tf as shipped, with a piece swapped for "
                             "Keras's, or keras-hub's (bench/step_ab.py).")
    parser.add_argument("--top_events", type=int, default=0,
                        help="Also report this many of the heaviest ops (or XLA loops) by "
                             "name, with their part, to see what a part is made of.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Profiles the step and prints its groups and summary."""
    work_dir = tempfile.mkdtemp(prefix="step_profile_")
    # XLA reads its flags once, at the first compilation: set them before.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_cpu_enable_xprof_traceme=true"
                               f" --xla_dump_to={work_dir}/hlo --xla_dump_hlo_as_text")
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    keras = tf.keras
    cfg = pretraining_step.CONFIGS[args.config]
    batch, seq = pretraining_step.TRAIN_WORKLOADS[args.config]
    keras.mixed_precision.set_global_policy(args.precision)
    model = step_ab.build(args.config, args.variant, args.jit_compile)
    x, y = pretraining_step.make_batch(cfg, batch, seq, pretraining_step.MAX_PREDICTIONS,
                                       np.random.default_rng(0))
    for _ in range(3):
        model.train_on_batch(x, y)
    tf.profiler.experimental.start(f"{work_dir}/trace")
    start = time.perf_counter()
    for _ in range(args.steps):
        model.train_on_batch(x, y)
    step_ms = (time.perf_counter() - start) / args.steps * 1e3
    tf.profiler.experimental.stop()

    if args.jit_compile:
        groups = _instruction_groups(f"{work_dir}/hlo")

        def group_of(name):
            return groups.get(name, "other")
    else:
        group_of = _kernel_group
    by_group = collections.Counter()
    # Without XLA: TensorFlow's op types (an XLA thunk has none: bert_tf's fused pieces).
    by_op_type = collections.Counter()
    by_part = collections.Counter()
    event_ms = _event_ms(f"{work_dir}/trace", args.steps)
    for name, ms in event_ms.items():
        by_group[group_of(name)] += ms
        by_op_type[name.rpartition(":")[2] if ":" in name else "XLA (fused pieces)"] += ms
        by_part[_part(name)] += ms
    traced_ms = sum(by_group.values())
    base = {"config": args.config, "variant": args.variant, "batch": batch, "seq_len": seq,
            "threads": 1, "precision": args.precision, "jit_compile": args.jit_compile}
    for group, ms in by_group.most_common():
        machine.emit({**base, "group": group, "ms_per_step": round(ms, 1),
                      "share": round(ms / traced_ms, 3), **machine.describe()}, args.out)
    if not args.jit_compile:
        machine.emit({**base, "ms_per_step_by_part": {
            part: round(ms, 1) for part, ms in by_part.most_common()},
            "ms_per_step_by_op_type": {
            op_type: round(ms, 1) for op_type, ms in by_op_type.most_common() if ms >= 0.5},
            **machine.describe()}, args.out)
    if args.top_events:
        # The twelve layers' copies of an op as one name, digits as N.
        by_name = collections.Counter()
        for name, ms in event_ms.items():
            by_name[re.sub(r"\d+", "N", name)] += ms
        machine.emit({**base, "heaviest_events_ms_per_step": {
            name: [round(ms, 1), _part(name)]
            for name, ms in by_name.most_common(args.top_events)},
            **machine.describe()}, args.out)

    hidden, vocab = cfg["hidden"], cfg["vocab_size"]
    predictions = batch * pretraining_step.MAX_PREDICTIONS
    mlm_flops = 3 * 2 * predictions * hidden * vocab
    rest_flops = pretraining_step.train_flops(cfg, batch, seq, predictions) - mlm_flops
    gflops = _matmul_gflops(tf, keras.mixed_precision.Policy(args.precision).compute_dtype,
                            args.jit_compile)
    fixed_ms = by_group["mlm_projection"] + by_group["mlm_loss"]
    bound_ms = (fixed_ms + rest_flops / gflops / 1e6) / os.cpu_count()
    machine.emit({
        **base, "step_ms": round(step_ms, 1), "traced_ms": round(traced_ms, 1),
        "mlm_gflop": round(mlm_flops / 1e9, 2), "rest_gflop": round(rest_flops / 1e9, 2),
        "matmul_gflops_one_thread": round(gflops, 1), "cores": os.cpu_count(),
        "bound_seq_per_s": round(batch / bound_ms * 1e3, 2),
        "bound_assumes": "MLM projection + loss as measured; the rest at the matmul rate, no "
                         "overhead; perfect scaling over all cores", **machine.describe()},
                 args.out)


if __name__ == "__main__":
    main(parse_args())
