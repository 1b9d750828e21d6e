"""The reference fine-tuning run: Hugging Face transformers BertForSequenceClassification.

Runs in a PyTorch venv (torch + transformers), never imports bert_tf, and
reads the GLUE .tsv files itself, so that it is an independent reference for
bench/glue_quality.py. The recipe is the original run_classifier.py's:
AdamW (weight decay 0.01, not on LayerNorm or biases, eps 1e-6), a linear
warmup over warmup_proportion of the steps then a linear decay to 0,
gradient clipping at global norm 1.0, dropout as in config.json, and every
example padded to max_seq_length (or, with --dynamic_padding, each batch cut
to its longest example rounded up to a multiple of 16, as bert_tf's
run_classifier.py --dynamic_padding does; --group_by_length also fills each
batch with examples of similar length, from groups of 50 batches sorted by
length, as bert_tf's --group_by_length does). torch.optim.AdamW applies Adam's bias
correction, as Hugging Face users run it and as bert_tf does by default (the
original did not).

Prints one JSON line: task, seed, dev metrics, train and eval seconds, and where
it ran (bench/machine.py's describe(), standard library only); --out appends it
to a file too.
"""

import argparse
import csv
import math
import random
import sys
import time

import numpy as np
import torch
from transformers import BertForSequenceClassification, BertTokenizerFast

from bench import machine
from bench.peers import recipe

# (file has a header, text_a column, text_b column or None, label column, labels)
TASKS = {
    "mrpc": (True, 3, 4, 0, ["0", "1"]),
    "cola": (False, 3, None, 1, ["0", "1"]),
    "sst-2": (True, 0, None, 1, ["0", "1"]),
}


def read_split(data_dir, task, split):
    """(text_a, text_b, label id) rows of one split's .tsv file."""
    header, col_a, col_b, col_label, labels = TASKS[task]
    path = f"{data_dir}/{split}.tsv"
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if header:
        rows = rows[1:]
    return [(r[col_a], r[col_b] if col_b is not None else None, labels.index(r[col_label]))
            for r in rows]


def encode(tokenizer, rows, max_seq_length):
    """Tensors of ids, mask, token types and labels, padded to max_seq_length."""
    a = [r[0] for r in rows]
    b = [r[1] for r in rows] if rows[0][1] is not None else None
    enc = tokenizer(a, b, padding="max_length", truncation="longest_first",
                    max_length=max_seq_length, return_tensors="pt")
    return (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"],
            torch.tensor([r[2] for r in rows]))


def batch(tensors, index, dynamic_padding):
    """The rows `index` of (ids, mask, token types, labels), maybe cut to their longest."""
    ids, mask, types, labels = (t[index] for t in tensors)
    if dynamic_padding:
        length = min(-(-int(mask.sum(1).max()) // 16) * 16, ids.shape[1])
        ids, mask, types = ids[:, :length], mask[:, :length], types[:, :length]
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}, labels


def epoch_batches(mask, batch_size, group_by_length):
    """One epoch's batches of example indices, shuffled (the last partial batch dropped).

    With group_by_length, each group of 50 batches' worth of shuffled
    examples is sorted by length and cut into batches, which are shuffled
    within the group.
    """
    order = torch.randperm(len(mask))
    if group_by_length:
        lengths, group = mask.sum(1), batch_size * 50
        order = torch.cat([chunk[torch.argsort(lengths[chunk], stable=True)]
                           for chunk in order.split(group)])
    batches = list(order.split(batch_size))
    if len(batches[-1]) < batch_size:
        batches.pop()
    if group_by_length:
        groups = [batches[start:start + 50] for start in range(0, len(batches), 50)]
        batches = [b for group in groups for b in random.sample(group, len(group))]
    return batches


def metrics(task, predictions, labels):
    """GLUE's dev metrics: MCC for CoLA, F1 and accuracy for MRPC, else accuracy."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    out = {"accuracy": float((predictions == labels).mean())}
    tp = float(((predictions == 1) & (labels == 1)).sum())
    fp = float(((predictions == 1) & (labels == 0)).sum())
    fn = float(((predictions == 0) & (labels == 1)).sum())
    tn = float(((predictions == 0) & (labels == 0)).sum())
    if task == "mrpc":
        out["f1"] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    if task == "cola":
        denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        out["mcc"] = (tp * tn - fp * fn) / denominator if denominator else 0.0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True, choices=sorted(TASKS))
    ap.add_argument("--data_dir", required=True)
    ap.add_argument("--model_dir", required=True, help="HF folder: config, weights, vocab")
    ap.add_argument("--max_seq_length", type=int, default=128)
    ap.add_argument("--train_batch_size", type=int, default=32)
    ap.add_argument("--eval_batch_size", type=int, default=32)
    ap.add_argument("--learning_rate", type=float, default=5e-5)
    ap.add_argument("--num_train_epochs", type=float, default=3.0)
    ap.add_argument("--warmup_proportion", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dynamic_padding", action="store_true",
                    help="cut each batch to its longest example, rounded up to 16")
    ap.add_argument("--group_by_length", action="store_true",
                    help="batches of similar length (needs --dynamic_padding)")
    ap.add_argument("--out", default=None, help="Also append the JSON line to this file.")
    args = ap.parse_args()
    if args.group_by_length and not args.dynamic_padding:
        ap.error("--group_by_length needs --dynamic_padding")

    recipe.seed_everything(args.seed)
    tokenizer = BertTokenizerFast.from_pretrained(args.model_dir, do_lower_case=True)
    train = encode(tokenizer, read_split(args.data_dir, args.task, "train"), args.max_seq_length)
    dev = encode(tokenizer, read_split(args.data_dir, args.task, "dev"), args.max_seq_length)
    model = BertForSequenceClassification.from_pretrained(args.model_dir, num_labels=2)

    num_examples = len(train[3])
    num_steps = int(num_examples / args.train_batch_size * args.num_train_epochs)
    num_warmup = int(num_steps * args.warmup_proportion)
    optimizer = torch.optim.AdamW(recipe.parameter_groups(model), lr=args.learning_rate,
                                  eps=1e-6)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, recipe.learning_rate_factor("linear", num_warmup, num_steps))

    start = time.time()
    model.train()
    step, batches = 0, []
    while step < num_steps:
        if not batches:
            batches = epoch_batches(train[1], args.train_batch_size, args.group_by_length)
        inputs, labels = batch(train, batches.pop(0), args.dynamic_padding)
        out = model(**inputs, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        if step % 50 == 0:
            print(f"step {step}/{num_steps} loss {out.loss.item():.4f}", file=sys.stderr)
    train_s = time.time() - start

    start = time.time()
    model.eval()
    predictions = []
    with torch.inference_mode():
        for i in range(0, len(dev[3]), args.eval_batch_size):
            inputs, _ = batch(dev, slice(i, i + args.eval_batch_size), args.dynamic_padding)
            logits = model(**inputs).logits
            predictions += logits.argmax(-1).tolist()
    eval_s = time.time() - start
    machine.emit({"library": "hf-transformers", "task": args.task, "seed": args.seed,
                  "train_examples": num_examples, "steps": num_steps,
                  "max_seq_length": args.max_seq_length, "learning_rate": args.learning_rate,
                  "dynamic_padding": args.dynamic_padding,
                  "group_by_length": args.group_by_length,
                  "dev": metrics(args.task, predictions, dev[3].tolist()),
                  "train_s": round(train_s, 1), "eval_s": round(eval_s, 1),
                  "versions": {"torch": torch.__version__,
                               "transformers": sys.modules["transformers"].__version__},
                  "threads": torch.get_num_threads(), **machine.describe()}, args.out)


if __name__ == "__main__":
    main()
