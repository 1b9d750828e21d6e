"""How much next-sentence signal the instances carry that a model without context could use.

Reads pretraining instances decoded to numpy (bench/pretraining_quality.py
writes train.npz and heldout.npz in its --work_dir) and measures, for each
instance, how many of segment B's word types also occur in segment A (the
stored masks undone, [CLS], [SEP] and punctuation left out). A "random
next" segment is drawn from another document, so it shares fewer words with
segment A, and a single threshold on that overlap, fitted on the training
instances, is a classifier of next-sentence labels that cannot memorize.
Its held-out accuracy is a floor for what a model that learned topic or
vocabulary continuity would reach; chance is the majority label's share.
Prints one JSON line.

Example, from the repository root:
  .venv/bin/python -m bench.nsp_signal --work_dir=/tmp/pretraining_quality \\
      --out=bench/results/nsp_signal-2026-11-26.jsonl
"""

import argparse

import numpy as np

from bench import machine

# bert-base-uncased ids below this are [PAD], [unused*], [CLS], [SEP], [MASK]
# and punctuation; word pieces start above it.
FIRST_WORD_ID = 1996


def overlaps(path):
    """(share of B's word types found in A, next_sentence_labels) of every instance."""
    with np.load(path) as data:
        ids = data["input_ids"].copy()
        segments, mask = data["segment_ids"], data["input_mask"]
        positions, originals = data["masked_lm_positions"], data["masked_lm_ids"]
        weights, labels = data["masked_lm_weights"], data["next_sentence_labels"][:, 0]
    rows = np.nonzero(weights > 0)[0]
    ids[rows, positions[weights > 0]] = originals[weights > 0]
    shares = np.zeros(len(ids))
    for i in range(len(ids)):
        words = (ids[i] >= FIRST_WORD_ID) & (mask[i] == 1)
        first = set(ids[i][words & (segments[i] == 0)].tolist())
        second = set(ids[i][words & (segments[i] == 1)].tolist())
        shares[i] = len(first & second) / max(len(second), 1)
    return shares, labels


def best_threshold(shares, labels):
    """The overlap threshold (B shares at least this much: "actual next") that fits best."""
    candidates = np.unique(shares)
    accuracy = [np.mean((shares >= t) == (labels == 0)) for t in candidates]
    return candidates[int(np.argmax(accuracy))], max(accuracy)


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work_dir", required=True)
    parser.add_argument("--out", default=None)
    return parser.parse_args(argv)


def main(args):
    train_shares, train_labels = overlaps(f"{args.work_dir}/train.npz")
    heldout_shares, heldout_labels = overlaps(f"{args.work_dir}/heldout.npz")
    threshold, train_accuracy = best_threshold(train_shares, train_labels)
    heldout_accuracy = np.mean((heldout_shares >= threshold) == (heldout_labels == 0))
    line = {"work_dir": args.work_dir, "threshold": round(float(threshold), 4),
            "train_accuracy": round(float(train_accuracy), 4),
            "heldout_accuracy": round(float(heldout_accuracy), 4),
            "heldout_majority": round(float(max(np.mean(heldout_labels),
                                                1 - np.mean(heldout_labels))), 4)}
    for name, shares, labels in (("train", train_shares, train_labels),
                                 ("heldout", heldout_shares, heldout_labels)):
        for label, kind in ((0, "actual_next"), (1, "random_next")):
            line[f"{name}_{kind}_mean_overlap"] = round(float(shares[labels == label].mean()), 4)
        line[f"{name}_random_next_share"] = round(float(np.mean(labels == 1)), 4)
    machine.emit({**line, **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
