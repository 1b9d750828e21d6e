"""Quality check: fine-tune all-MiniLM-L6-v2 on SWAG with bert_tf and with HF transformers.

For each seed it runs run_swag.py (this venv) and bench/hf_swag_finetune.py
(a PyTorch venv given by --torch_python) with the same checkpoint, data and
hyperparameters, one after the other, and prints one JSON line per run: the
dev accuracy, the wall time and where it ran (machine.describe()); --out
appends them to a file too. --report reads --out instead and prints each
library's mean [min, max] over the seeds.

--data_dir holds SWAG's train.csv and val.csv (the dev set), in SWAG's
layout; a subset of the rows works alike.

  .venv/bin/python bench/swag_quality.py --data_dir=/tmp/swag_subset --seeds=1,2 \\
      --torch_python=/tmp/hfvenv/bin/python --out=bench/results/swag_quality-$(date +%F).jsonl
  .venv/bin/python bench/swag_quality.py --report --out=bench/results/swag_quality-....jsonl
"""

import collections
import json
import os
import statistics
import subprocess
import sys
import time

import machine
import minilm
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None, "Folder with train.csv and val.csv in SWAG's layout.")
flags.DEFINE_list("seeds", ["1", "2"], "Seeds; each runs once per library.")
flags.DEFINE_list("libraries", ["bert_tf", "hf-transformers"], "Which implementations to run.")
flags.DEFINE_integer("max_seq_length", 64, "Tokens per choice.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("train_batch_size", 16, "Questions per batch.")
flags.DEFINE_float("num_train_epochs", 3.0, "Epochs.")
flags.DEFINE_string("torch_python", "/tmp/hfvenv/bin/python",
                    "Python of a venv with torch and transformers.")
flags.DEFINE_string("work_dir", "/tmp/swag_quality", "Output folders of the runs.")
flags.DEFINE_string("out", None, "Also append the JSON lines to this file; --report reads it.")
flags.DEFINE_bool("report", False, "Print the seed spread of each library from --out.")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_bert_tf(seed):
    """run_swag.py --do_train --do_eval; returns the JSON line's fields."""
    output_dir = os.path.join(FLAGS.work_dir, f"bert_tf_seed{seed}_{int(time.time())}")
    command = [sys.executable, os.path.join(ROOT, "run_swag.py"), "--do_train", "--do_eval",
               f"--data_dir={FLAGS.data_dir}", f"--init_checkpoint={minilm.model_dir()}",
               f"--max_seq_length={FLAGS.max_seq_length}",
               f"--train_batch_size={FLAGS.train_batch_size}", "--eval_batch_size=32",
               f"--learning_rate={FLAGS.learning_rate}",
               f"--num_train_epochs={FLAGS.num_train_epochs}", "--mixed_precision=float32",
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


def run_hf(seed):
    """bench/hf_swag_finetune.py; returns its JSON line's fields."""
    command = [FLAGS.torch_python, os.path.join(HERE, "hf_swag_finetune.py"),
               f"--train_file={os.path.join(FLAGS.data_dir, 'train.csv')}",
               f"--dev_file={os.path.join(FLAGS.data_dir, 'val.csv')}",
               f"--model_dir={minilm.model_dir()}", f"--max_seq_length={FLAGS.max_seq_length}",
               f"--train_batch_size={FLAGS.train_batch_size}",
               f"--learning_rate={FLAGS.learning_rate}",
               f"--num_train_epochs={FLAGS.num_train_epochs}", f"--seed={seed}"]
    start = time.time()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
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


def main(argv):
    del argv
    if FLAGS.report:
        report(FLAGS.out.split(","))
        return
    os.makedirs(FLAGS.work_dir, exist_ok=True)
    runs = {"bert_tf": run_bert_tf, "hf-transformers": run_hf}
    for seed in FLAGS.seeds:
        for library in FLAGS.libraries:
            line = runs[library](int(seed))
            line.update(data_dir=FLAGS.data_dir, max_seq_length=FLAGS.max_seq_length,
                        learning_rate=FLAGS.learning_rate,
                        train_batch_size=FLAGS.train_batch_size,
                        num_train_epochs=FLAGS.num_train_epochs, **machine.describe())
            machine.emit(line, FLAGS.out)


if __name__ == "__main__":
    app.run(main)
