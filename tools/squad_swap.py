"""Swaps between bert_tf and the Hugging Face SQuAD peer, one part at a time.

The post-processing: bert_tf's post-processing (max-context windows, the best valid span
of bert_tf/data/squad/answer_rule.py, the original's get_final_text) and the Hugging Face
peer's (bench/peers/hf_squad_finetune.py: every window, answer text from the fast
tokenizer's offsets) are fed the logits of the
same trained model, so that a difference in score is the post-processing's
alone. The windows differ too (the original's doc_stride against HF's overlap);
each pipeline reads its own. The training windows: bert_tf's windows and
labels (the original's doc_stride rule and improve_answer_span) are written out
for the peer to train on (`hf_squad_finetune.py --train_windows`), so that a
difference in score is the windows' alone. Four modes, on the answerable
questions of --predict_file (v1.1 mode) or --train_file:

  windows: write bert_tf's dev windows (input_ids, input_mask, segment_ids) to
      --out, for a Hugging Face model to compute logits on;
  logits: load a bert_tf run's newest checkpoint (--run_dir) and write its
      start and end logits on the windows of --windows (an npz written by
      `hf_squad_finetune.py --dev_windows_out` or by mode windows) to --out;
  score: score start and end logits computed on bert_tf's dev windows
      (--logits) with bert_tf's post-processing; prints one JSON line;
  train_windows: write bert_tf's training windows of --train_file
      (input_ids, input_mask, segment_ids, start_positions, end_positions),
      as run_squad.py cuts and labels them, to --out.

For example, a bert_tf model through HF's post-processing:

  /tmp/hfvenv/bin/python -m bench.peers.hf_squad_finetune ... --dev_windows_out=/tmp/hf_win.npz
  .venv/bin/python -m tools.squad_swap --mode=logits --run_dir=RUN \\
      --windows=/tmp/hf_win.npz --out=/tmp/bt_on_hf.npz
  /tmp/hfvenv/bin/python -m bench.peers.hf_squad_finetune ... --score_logits=/tmp/bt_on_hf.npz
"""

import argparse
import json
import os

import numpy as np

from bench import minilm

SEQ, STRIDE, QUERY = 256, 128, 64


def squad_windows(squad_file, is_training):
    """bert_tf's examples and windows of a SQuAD file, as run_squad.py cuts them."""
    from bert_tf.checkpoints import model_files
    from bert_tf.data import squad

    files = model_files.find(minilm.model_dir(), max_seq_length=SEQ)
    examples, _ = squad.read_squad_examples(squad_file, is_training, False)
    windows, _ = squad.convert_examples_to_features(
        examples, files.tokenizer(), SEQ, STRIDE, QUERY, is_training)
    return examples, windows


def write_windows(squad_file, out, is_training):
    _, windows = squad_windows(squad_file, is_training)
    arrays = {name: np.array([getattr(w, name) for w in windows], np.int32)
              for name in ("input_ids", "input_mask", "segment_ids")}
    if is_training:
        arrays["start_positions"] = np.array([w.start_position for w in windows], np.int32)
        arrays["end_positions"] = np.array([w.end_position for w in windows], np.int32)
        # Which answerable question (in file order) each window is cut from.
        arrays["question_index"] = np.array([w.example_index for w in windows], np.int32)
    np.savez_compressed(out, **arrays)
    mode = "train_windows" if is_training else "windows"
    print(json.dumps({"mode": mode, "windows": len(windows), "out": out}))


def write_logits(run_dir, windows_file, out):
    import tensorflow as tf

    from bert_tf.checkpoints import checkpoints
    from bert_tf.data import squad
    from bert_tf.model import config
    from bert_tf.model.modeling import BertModel
    from bert_tf.tasks import QuestionAnsweringTask

    data = np.load(windows_file)
    # HF's npz names the mask and segments as transformers does.
    batch = {"input_ids": data["input_ids"],
             "input_mask": data["input_mask"] if "input_mask" in data
             else data["attention_mask"],
             "segment_ids": data["segment_ids"] if "segment_ids" in data
             else data["token_type_ids"]}
    task = QuestionAnsweringTask(squad.SquadSettings(max_seq_length=batch["input_ids"].shape[1]))
    encoder = BertModel(config.BertConfig.from_json_file(
        os.path.join(run_dir, "bert_config.json")))
    heads = task.create_heads(encoder)
    checkpoints.load_weights(tf.train.latest_checkpoint(run_dir), encoder, heads)
    starts, ends = [], []
    for i in range(0, len(batch["input_ids"]), 64):
        part = {name: tf.constant(value[i:i + 64], tf.int32) for name, value in batch.items()}
        outputs = task.forward(encoder, heads, part, training=False)
        starts.append(outputs["start_logits"].numpy())
        ends.append(outputs["end_logits"].numpy())
    np.savez(out, start_logits=np.concatenate(starts), end_logits=np.concatenate(ends))
    print(json.dumps({"mode": "logits", "windows": len(batch["input_ids"]), "out": out}))


def score(predict_file, logits_file):
    from bert_tf.data import squad

    examples, windows = squad_windows(predict_file, False)
    data = np.load(logits_file)
    results = {w.unique_id: (s, e) for w, s, e in zip(
        windows, data["start_logits"], data["end_logits"], strict=True)}
    answers, _, _ = squad.write_predictions(examples, windows, results, 20, 30, True)
    metrics = squad.evaluate_v1(squad.answerable_questions(predict_file), answers)
    print(json.dumps({"mode": "score", "postprocess": "bert_tf", "logits": logits_file,
                      **{k: round(v, 2) for k, v in metrics.items()}}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["windows", "logits", "score", "train_windows"],
                        required=True)
    parser.add_argument("--predict_file", default="/tmp/squad_quality/dev-v1.1.json",
                        help="answerable-only v1.1 dev file (bench/squad_quality.py's)")
    parser.add_argument("--train_file", default="/tmp/squad_quality/train-v1.1.json",
                        help="mode train_windows: answerable-only v1.1 train file")
    parser.add_argument("--run_dir", help="mode logits: a run_squad.py output_dir")
    parser.add_argument("--windows", help="mode logits: windows npz")
    parser.add_argument("--logits", help="mode score: logits npz on bert_tf's windows")
    parser.add_argument("--out", help="modes windows, logits, train_windows: the npz to write")
    args = parser.parse_args()
    if args.mode == "windows":
        write_windows(args.predict_file, args.out, is_training=False)
    elif args.mode == "train_windows":
        write_windows(args.train_file, args.out, is_training=True)
    elif args.mode == "logits":
        write_logits(args.run_dir, args.windows, args.out)
    else:
        score(args.predict_file, args.logits)


if __name__ == "__main__":
    main()
