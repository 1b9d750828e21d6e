"""The reference SWAG run: Hugging Face transformers BertForMultipleChoice.

Runs in a PyTorch venv (torch + transformers), never imports bert_tf, and
reads SWAG's CSV files itself, so that it is an independent reference for
bench/swag_quality.py. Each question is four pairs, sent1 and "sent2
ending<i>", tokenized by BertTokenizerFast with truncation="longest_first"
and padded to max_seq_length, as Hugging Face's run_swag.py example packs
them. The recipe is the original BERT's fine-tuning one: AdamW (weight decay
0.01, not on LayerNorm or biases, eps 1e-6), a linear warmup over
warmup_proportion of the steps then a linear decay to 0, gradient clipping at
global norm 1.0, dropout as in config.json, every question once per epoch in
a new permutation (the last partial batch dropped). torch.optim.AdamW applies
Adam's bias correction, as bert_tf does by default.

Prints one JSON line: seed, dev accuracy, steps, train and eval seconds, and
where it ran (bench/machine.py's describe()); --out appends it to a file too.

  /tmp/hfvenv/bin/python -m bench.peers.hf_swag_finetune --train_file=train.csv \\
      --dev_file=val.csv --model_dir=$MODEL --seed=1
"""

import argparse
import csv
import sys
import time

import numpy as np
import torch
from transformers import BertForMultipleChoice, BertTokenizerFast

from bench import machine
from bench.peers import recipe


def read_questions(path, num_choices):
    """(sent1, [sent2 + " " + ending, ...], label) of each row of a SWAG CSV file."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    return [(row["sent1"], [f"{row['sent2']} {row[f'ending{i}']}".strip()
                            for i in range(num_choices)], int(row["label"]))
            for row in rows]


def encode(tokenizer, questions, max_seq_length):
    """ids, mask and token types [questions, choices, seq], and the labels."""
    num_choices = len(questions[0][1])
    first = [context for context, endings, _ in questions for _ in endings]
    second = [ending for _, endings, _ in questions for ending in endings]
    enc = tokenizer(first, second, padding="max_length", truncation="longest_first",
                    max_length=max_seq_length, return_tensors="pt")
    shape = (len(questions), num_choices, max_seq_length)
    return ({name: enc[name].view(shape)
             for name in ("input_ids", "attention_mask", "token_type_ids")},
            torch.tensor([label for _, _, label in questions]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train_file", required=True)
    ap.add_argument("--dev_file", required=True)
    ap.add_argument("--model_dir", required=True, help="HF folder: config, weights, vocab")
    ap.add_argument("--num_choices", type=int, default=4)
    ap.add_argument("--max_seq_length", type=int, default=64)
    ap.add_argument("--train_batch_size", type=int, default=16)
    ap.add_argument("--eval_batch_size", type=int, default=32)
    ap.add_argument("--learning_rate", type=float, default=5e-5)
    ap.add_argument("--num_train_epochs", type=float, default=3.0)
    ap.add_argument("--warmup_proportion", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="Also append the JSON line to this file.")
    args = ap.parse_args()

    recipe.seed_everything(args.seed)
    tokenizer = BertTokenizerFast.from_pretrained(args.model_dir, do_lower_case=True)
    train, train_labels = encode(tokenizer, read_questions(args.train_file, args.num_choices),
                                 args.max_seq_length)
    dev, dev_labels = encode(tokenizer, read_questions(args.dev_file, args.num_choices),
                             args.max_seq_length)
    model = BertForMultipleChoice.from_pretrained(args.model_dir)

    num_questions = len(train_labels)
    num_steps = int(num_questions / args.train_batch_size * args.num_train_epochs)
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
            batches = list(torch.randperm(num_questions).split(args.train_batch_size))
            if len(batches[-1]) < args.train_batch_size:
                batches.pop()
        index = batches.pop(0)
        out = model(**{name: value[index] for name, value in train.items()},
                    labels=train_labels[index])
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
    chosen = []
    with torch.inference_mode():
        for i in range(0, len(dev_labels), args.eval_batch_size):
            logits = model(**{name: value[i:i + args.eval_batch_size]
                              for name, value in dev.items()}).logits
            chosen += logits.argmax(-1).tolist()
    eval_s = time.time() - start
    machine.emit({"library": "hf-transformers", "seed": args.seed,
                  "train_questions": num_questions, "dev_questions": len(dev_labels),
                  "steps": num_steps, "max_seq_length": args.max_seq_length,
                  "learning_rate": args.learning_rate,
                  "dev_accuracy": float(np.mean(np.array(chosen) == dev_labels.numpy())),
                  "train_s": round(train_s, 1), "eval_s": round(eval_s, 1),
                  "versions": {"torch": torch.__version__,
                               "transformers": sys.modules["transformers"].__version__},
                  "threads": torch.get_num_threads(), **machine.describe()}, args.out)


if __name__ == "__main__":
    main()
