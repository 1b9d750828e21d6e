"""What XLA's CPU backend makes of a step's two kinds of work, against TensorFlow's kernels.

A BERT training step is matmuls and elementwise loops. This times one of each,
compiled by XLA (tf.function(jit_compile=True)) and on TensorFlow's own kernels
(oneDNN's matmuls, Eigen's elementwise ops), on one thread and on every core:
  matmul: BERT-Base's feed-forward up-projection at batch 8 x seq 128
    (1024 x 768 x 3072), forward and both gradients, in float32 and bfloat16;
  loop: the tanh GELU over a [64, 128, 3072] float32 tensor (BERT-Base's
    activations at batch 64, or eight layers' at batch 8), a dozen elementwise
    ops: one XLA loop, or a kernel each on TensorFlow's. Large enough that the
    copy of the result out of TensorFlow is a small part of the time.
TensorFlow sizes its thread pools once per process and XLA reads XLA_FLAGS
once, so each thread count and each --xla_flags value runs in a process of its
own; the first line of each set is XLA's defaults (XLA_FLAGS as inherited).

Usage, from the repository root:
  .venv/bin/python -m bench.xla_cpu [--xla_flags=--xla_cpu_use_onednn=true ...] [--out FILE]
Prints one JSON line per work item, thread count and XLA_FLAGS value.
"""

import argparse
import json
import os
import subprocess
import sys

from bench import machine, timing

M, K, N = 1024, 768, 3072
LOOP_SHAPE = (64, 128, 3072)
REPEATS = 21


def _matmul_gflops(tf, dtype, jit_compile):
    """GFLOP/s of y = x @ w with both gradients, for a fixed upstream gradient of y."""
    x = tf.random.normal((M, K), seed=1)
    w = tf.random.normal((K, N), seed=2)
    upstream = tf.random.normal((M, N), seed=3)

    def step():
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = tf.matmul(tf.cast(x, dtype), tf.cast(w, dtype))
            # The loss uses y, so that neither compiler can drop the forward matmul.
            loss = tf.reduce_sum(tf.cast(y, tf.float32) * upstream)
        return loss, tape.gradient(loss, [x, w])

    compiled = tf.function(step, jit_compile=jit_compile)
    compiled()
    _, seconds = timing.median_seconds(lambda: compiled()[0].numpy(), REPEATS)
    return 3 * 2 * M * K * N / seconds / 1e9


def _loop_ms(tf, jit_compile):
    """Milliseconds of the tanh GELU over a LOOP_SHAPE float32 tensor."""
    x = tf.random.normal(LOOP_SHAPE, seed=4)

    def gelu(x):
        return 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    compiled = tf.function(gelu, jit_compile=jit_compile)
    compiled(x)
    _, seconds = timing.median_seconds(lambda: compiled(x).numpy(), REPEATS)
    return seconds * 1e3


def measure(threads):
    """This process's figures, with TensorFlow limited to `threads` threads.

    Args:
      threads: TensorFlow's intra-op and inter-op thread counts; set before
        anything runs, so this is called once per process.

    Returns:
      A list of dicts, one per work item and compiler.
    """
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    lines = []
    for jit_compile in (False, True):
        compiler = "xla" if jit_compile else "tensorflow_kernels"
        for dtype in (tf.float32, tf.bfloat16):
            lines.append({"work": "matmul", "dtype": dtype.name, "compiler": compiler,
                          "gflops_per_s": round(_matmul_gflops(tf, dtype, jit_compile), 1)})
        lines.append({"work": "loop", "dtype": "float32", "compiler": compiler,
                      "ms": round(_loop_ms(tf, jit_compile), 2)})
    return lines


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xla_flags", action="append", default=[],
                        help="An XLA_FLAGS value to time beside the defaults; repeatable.")
    parser.add_argument("--worker_threads", type=int, default=None,
                        help=argparse.SUPPRESS)  # set by the parent for each child process
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Runs one child process per XLA_FLAGS value and thread count, and prints their lines."""
    if args.worker_threads:
        print(json.dumps(measure(args.worker_threads)))
        return
    inherited = os.environ.get("XLA_FLAGS", "")
    for xla_flags in (inherited, *(f"{inherited} {flags}".strip() for flags in args.xla_flags)):
        for threads in sorted({1, os.cpu_count()}):
            child = subprocess.run(
                [sys.executable, "-m", "bench.xla_cpu", f"--worker_threads={threads}"],
                env={**os.environ, "XLA_FLAGS": xla_flags, "TF_CPP_MIN_LOG_LEVEL": "2"},
                capture_output=True, text=True, check=True)
            for line in json.loads(child.stdout.splitlines()[-1]):
                machine.emit({"bench": "xla_cpu", **line, "threads": threads,
                              "xla_flags": xla_flags, **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
