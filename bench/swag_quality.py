"""Quality check: fine-tune all-MiniLM-L6-v2 on SWAG with bert_tf and with HF transformers.

For each seed it runs run_swag.py (this venv) and bench/peers/hf_swag_finetune.py
(a PyTorch venv given by --torch_python) with the same checkpoint, data and
hyperparameters, one after the other, and prints one JSON line per run: the
dev accuracy, the wall time and where it ran (machine.describe()); --out
appends them to a file too. --report reads --out instead and prints each
library's mean [min, max] over the seeds.

--data_dir holds SWAG's train.csv and val.csv (the dev set), in SWAG's
layout; a subset of the rows works alike.

  .venv/bin/python -m bench.swag_quality --data_dir=/tmp/swag_subset --seeds=1,2 \\
      --torch_python=/tmp/hfvenv/bin/python --out=bench/results/swag_quality-$(date +%F).jsonl
  .venv/bin/python -m bench.swag_quality --report --out=bench/results/swag_quality-....jsonl
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

from bench import arguments, machine, minilm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_bert_tf(args, seed):
    """run_swag.py --do_train --do_eval; returns the JSON line's fields."""
    output_dir = os.path.join(args.work_dir, f"bert_tf_seed{seed}_{int(time.time())}")
    command = [sys.executable, os.path.join(ROOT, "run_swag.py"), "--do_train", "--do_eval",
               f"--data_dir={args.data_dir}", f"--init_checkpoint={minilm.model_dir()}",
               f"--max_seq_length={args.max_seq_length}",
               f"--train_batch_size={args.train_batch_size}", "--eval_batch_size=32",
               f"--learning_rate={args.learning_rate}",
               f"--num_train_epochs={args.num_train_epochs}", "--mixed_precision=float32",
               f"--seed={seed}", f"--output_dir={output_dir}"]
    start = time.time()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"run_swag.py failed:\n{result.stderr[-3000:]}")
    with open(os.path.join(output_dir, "eval_results.txt"), encoding="utf-8") as f:
        results = dict(line.strip().split(" = ") for line in f)
    return {"library": "bert_tf", "seed": seed, "steps": int(results["global_step"]),
            "dev_accuracy": float(results["eval_accuracy"]),
            "wall_s": round(time.time() - start, 1), "output_dir": output_dir}


def run_hf(args, seed):
    """bench/peers/hf_swag_finetune.py; returns its JSON line's fields."""
    command = [args.torch_python, "-m", "bench.peers.hf_swag_finetune",
               f"--train_file={os.path.join(args.data_dir, 'train.csv')}",
               f"--dev_file={os.path.join(args.data_dir, 'val.csv')}",
               f"--model_dir={minilm.model_dir()}", f"--max_seq_length={args.max_seq_length}",
               f"--train_batch_size={args.train_batch_size}",
               f"--learning_rate={args.learning_rate}",
               f"--num_train_epochs={args.num_train_epochs}", f"--seed={seed}"]
    start = time.time()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"hf_swag_finetune.py failed:\n{result.stderr[-3000:]}")
    line = json.loads(result.stdout.strip().splitlines()[-1])
    fields = {key: line[key] for key in ("library", "seed", "steps", "dev_accuracy",
                                         "versions")}
    return {**fields, "wall_s": round(time.time() - start, 1)}


def report(paths):
    """Each library's dev accuracy: mean [min, max] over its seeds."""
    accuracies = collections.defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                run = json.loads(line)
                accuracies[run["library"]].append(run["dev_accuracy"])
    for library, values in sorted(accuracies.items()):
        print(f"{library}: dev accuracy {statistics.fmean(values):.4f} "
              f"[{min(values):.4f}, {max(values):.4f}] over {len(values)} seeds")


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=None,
                        help="Folder with train.csv and val.csv in SWAG's layout.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2"],
                        help="Seeds; each runs once per library.")
    parser.add_argument("--libraries", type=arguments.comma_list,
                        default=["bert_tf", "hf-transformers"],
                        help="Which implementations to run.")
    parser.add_argument("--max_seq_length", type=int, default=64, help="Tokens per choice.")
    parser.add_argument("--learning_rate", type=float, default=5e-5, help="Peak learning rate.")
    parser.add_argument("--train_batch_size", type=int, default=16,
                        help="Questions per batch.")
    parser.add_argument("--num_train_epochs", type=float, default=3.0, help="Epochs.")
    parser.add_argument("--torch_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--work_dir", default="/tmp/swag_quality",
                        help="Output folders of the runs.")
    parser.add_argument("--out", default=None,
                        help="Also append the JSON lines to this file; --report reads it.")
    arguments.add_boolean(parser, "report", False,
                          "Print the seed spread of each library from --out.")
    return parser.parse_args(argv)


def main(args):
    if args.report:
        report(args.out.split(","))
        return
    os.makedirs(args.work_dir, exist_ok=True)
    runs = {"bert_tf": run_bert_tf, "hf-transformers": run_hf}
    for seed in args.seeds:
        for library in args.libraries:
            line = runs[library](args, int(seed))
            line.update(data_dir=args.data_dir, max_seq_length=args.max_seq_length,
                        learning_rate=args.learning_rate,
                        train_batch_size=args.train_batch_size,
                        num_train_epochs=args.num_train_epochs, **machine.describe())
            machine.emit(line, args.out)


if __name__ == "__main__":
    main(parse_args())
