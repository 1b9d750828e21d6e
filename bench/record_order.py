"""Where in a pretraining file each part of the corpus lies: a check of the shuffle.

Counts, in each tenth of a file's records (an .npz of decoded records, as
bench/pretraining_quality.py writes them), the occurrences of words that
belong to one book each. In a file shuffled across the whole corpus every
tenth holds about the same count; in a file written in corpus order a book's
words crowd into the tenths where its text was. A reader that shuffles in a
small buffer, as run_pretraining.py's does, reads the file in about that
order. Prints one JSON line per file.

Example, from the repository root:
  .venv/bin/python -m bench.record_order --records=/tmp/pretraining_quality/train.npz \\
      --out=bench/results/record_order-2026-11-26.jsonl
"""

import argparse

import numpy as np

from bench import machine, minilm
from bert_tf.text import tokenization

# Names of one book each of ../shared/data/corpus/gutenberg_11books.txt.
WORDS = ("alice", "holmes", "darcy", "whale")


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", required=True, action="append",
                        help="An .npz of decoded records; may be given several times.")
    parser.add_argument("--vocab_file", default=None)
    parser.add_argument("--out", default=None)
    return parser.parse_args(argv)


def main(args):
    vocab = tokenization.load_vocab(args.vocab_file or minilm.vocab_file())
    for path in args.records:
        with np.load(path) as data:
            input_ids = data["input_ids"]
        tenths = np.array_split(input_ids, 10)
        counts = {word: [int(np.sum(part == vocab[word])) for part in tenths]
                  for word in WORDS}
        machine.emit({"records": path, "instances": len(input_ids), "counts_per_tenth": counts,
                      **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
