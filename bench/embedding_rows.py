"""The word-embedding rows of pretrained checkpoints: pieces of the pretraining text and the rest.

BERT's masked-LM output layer shares the word-embedding table, so every step
of pretraining moves every row, including the rows of word pieces that the
text never contains: the softmax pushes each of them away from the hidden
states it scored, all in much the same direction, and Adam scales those
small pushes up to full-size steps. This prints, per checkpoint, the median
norm of both kinds of rows and the mean cosine similarity between rows of
each kind (over 2,000 rows drawn at random): rows that have collapsed onto
one direction have a mean cosine near 1, random rows near 0.

The pieces of the text are those of bench/pretraining_carryover.py's
pieces_in_text: every input id of the training instances, with each masked
position's original piece.

Example, from the repository root:
  .venv/bin/python -m bench.embedding_rows --pretraining_records=/tmp/pq64fix/train.npz \\
      --checkpoints=/tmp/pq64fix/bert_tf-seed1,/tmp/pq64fix/hf-seed1 \\
      --out=bench/results/embedding_rows-$(date +%F).jsonl
"""

import argparse

import numpy as np

from bench import arguments, machine
from bench.pretraining_carryover import load_encoder, pieces_in_text

SAMPLE = 2000


def mean_cosine(rows, seed=0):
    """The mean cosine similarity between distinct rows of a sample of `rows`.

    Args:
      rows: [n, hidden] float array.
      seed: Seed of the sample's draw.

    Returns:
      A float in [-1, 1].
    """
    picked = np.random.default_rng(seed).choice(len(rows), min(SAMPLE, len(rows)),
                                                replace=False)
    unit = rows[picked] / np.linalg.norm(rows[picked], axis=1, keepdims=True)
    cosines = unit @ unit.T  # [sample, sample], ones on the diagonal
    count = len(unit)
    return float((cosines.sum() - count) / (count * (count - 1)))


def describe(folder, kept_ids):
    """The JSON line of one checkpoint's word-embedding rows.

    Args:
      folder: A checkpoint in any format bert_tf reads.
      kept_ids: The ids of the pieces in the pretraining text (pieces_in_text).

    Returns:
      A dict: the medians of the row norms and the mean cosines, per kind of row.
    """
    table = load_encoder(folder).get_embedding_table().numpy()  # [vocab, hidden]
    in_text = np.zeros(len(table), dtype=bool)
    in_text[kept_ids] = True
    norms = np.linalg.norm(table, axis=1)
    return {"check": "embedding_rows", "checkpoint": folder,
            "rows_in_text": int(in_text.sum()), "rows_not_in_text": int((~in_text).sum()),
            "median_norm_in_text": round(float(np.median(norms[in_text])), 4),
            "median_norm_not_in_text": round(float(np.median(norms[~in_text])), 4),
            "mean_cosine_in_text": round(mean_cosine(table[in_text]), 4),
            "mean_cosine_not_in_text": round(mean_cosine(table[~in_text]), 4)}


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pretraining_records", required=True,
                        help="The checkpoints' training instances (.npz of "
                        "bench/pretraining_quality.py's --work_dir).")
    parser.add_argument("--checkpoints", type=arguments.comma_list, required=True,
                        help="Checkpoints to describe, comma-separated.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    kept = pieces_in_text(args.pretraining_records)
    for folder in args.checkpoints:
        machine.emit({**describe(folder, kept), **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
