"""TensorFlow's matmul rate on this CPU in float32 and bfloat16: the peak a train step can reach.

../shared/bench-peers/matmul_peak.py measures float32 only; this gives the
bfloat16 figure beside float32 for the same shapes, in one process, so that
a bfloat16 train step's GFLOP/s has a ceiling to be read against.

Usage, from the repository root (bench/peer_bfloat16.sh runs it with
`-m bench.matmul_bfloat16` in the bench-peers harness's TensorFlow venv):
  .venv/bin/python -m bench.matmul_bfloat16 [--reps 10] [--out FILE]
Prints one JSON line per dtype and shape: median and best GFLOP/s, and where it
ran (machine.describe(), with the TensorFlow version imported); --out appends
them to a file too.
"""

import argparse
import dataclasses
import statistics
import time

import tensorflow as tf

from bench import arguments, machine
from bert_tf.runtime import cpu

# (M, K, N): the square reference; BERT-Base's FFN up-projection at batch 8 x seq 128;
# an L4 H512 model's FFN up and down projections at batch 16 x seq 128; BERT-Base's FFN
# at batch 32 x seq 128.
SHAPES = {"sq2048": (2048, 2048, 2048), "ffn_b8": (1024, 768, 3072),
          "h512_ffn_up": (2048, 512, 2048), "h512_ffn_down": (2048, 2048, 512),
          "ffn_b32": (4096, 768, 3072)}


def rate(m, k, n, dtype, reps):
    """GFLOP/s of one eager matmul: (median, best) over reps timed calls after 3 warm-ups."""
    a = tf.cast(tf.random.normal((m, k), seed=1), dtype)
    b = tf.cast(tf.random.normal((k, n), seed=2), dtype)
    for _ in range(3):
        tf.linalg.matmul(a, b).numpy()
    seconds = []
    for _ in range(reps):
        start = time.perf_counter()
        tf.linalg.matmul(a, b).numpy()  # .numpy() waits for the result
        seconds.append(time.perf_counter() - start)
    flops = 2.0 * m * k * n
    return flops / statistics.median(seconds) / 1e9, flops / min(seconds) / 1e9


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--shapes", type=arguments.comma_list, default=list(SHAPES),
                        help="Comma-separated names of SHAPES to time; default: all.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Times every dtype and shape and prints their lines."""
    # What --mixed_precision=auto makes of this CPU, beside the timings that test it.
    kind = dataclasses.asdict(cpu.this_cpu())
    for dtype in (tf.float32, tf.bfloat16):
        for shape in args.shapes:
            median, best = rate(*SHAPES[shape], dtype, args.reps)
            # The version imported, even from a tensorflow-cpu or nightly wheel.
            machine.emit({"bench": "matmul_tf_dtype", "dtype": dtype.name, "shape": shape,
                          "gflops_per_s": round(median, 1), "best_gflops_per_s": round(best, 1),
                          "cpu_kind": kind, **machine.describe(),
                          "tensorflow": tf.__version__}, args.out)


if __name__ == "__main__":
    main(parse_args())
