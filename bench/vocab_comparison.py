"""A small BERT pretrained from scratch with a learned vocab beside one with bert-base-uncased's.

The corpus is split by document as bench/pretraining_quality.py splits it
(every --heldout_every-th document held out). A vocab is learned from the
training documents only (bert_tf.pretraining_data.vocab_learning, learn_vocab.py's
library), so that the held-out text is new to it, as a user's later text
is. Then, for each vocab (the learned one and --vocab_file, by default
bert-base-uncased's):
  - how it splits the held-out text: word pieces per word (BasicTokenizer's
    words), the share of words kept whole, and [UNK] words;
  - bench/pretraining_quality.py --runs=bert_tf trains the same model (its
    embedding sized to the vocab) on records built with that vocab, one
    process per seed, and evaluates the held-out records.

Masked-LM accuracy is per masked word piece, so the two vocabs' figures
differ in what they count: a vocab that splits words into more pieces has
more, and easier, pieces to predict. Read the accuracy beside the pieces per
word.

Prints JSON lines: the split statistics of each vocab, pretraining_quality's
own lines (in --work_dir/<vocab>/points.jsonl), then per vocab the held-out
masked-LM and next-sentence accuracy at the last step, per seed and their
median, and where it ran.

Example, from the repository root: the run in docs/benchmarks.md (4 layers,
hidden 256, 1000 steps, 2 seeds; about 6 minutes per seed and vocab on 2
cores), then a small one that only checks the pipeline (a few minutes):
  .venv/bin/python -m bench.vocab_comparison \\
      --corpus=../shared/data/corpus/gutenberg_11books.txt --max_seq_length=64 \\
      --max_predictions_per_seq=10 --train_batch_size=16 --num_train_steps=1000 \\
      --eval_every=500 --seeds=1,2 --out=bench/results/vocab_comparison-$(date +%F).jsonl
  head -12000 ../shared/data/corpus/gutenberg_11books.txt > /tmp/small_corpus.txt
  .venv/bin/python -m bench.vocab_comparison --corpus=/tmp/small_corpus.txt \\
      --heldout_every=5 --learned_vocab_size=8000 --min_count=5 --num_layers=2 \\
      --hidden_size=64 --max_seq_length=64 --max_predictions_per_seq=10 --dupe_factor=2 \\
      --train_batch_size=16 --num_train_steps=300 --eval_every=150 --learning_rate=1e-3 \\
      --seeds=1 --out=bench/results/vocab_comparison-small-$(date +%F).jsonl
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench import arguments, machine, minilm, pretraining_corpus
from bert_tf import pretraining_data
from bert_tf.pretraining_data import vocab_learning
from bert_tf.text import tokenization

# pretraining_quality.py's flags that this script passes on unchanged.
_PASSED_ON = ("heldout_every", "num_layers", "hidden_size", "max_seq_length",
              "max_predictions_per_seq", "dupe_factor", "train_batch_size", "num_train_steps",
              "learning_rate", "eval_every")


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pretraining_corpus.add_arguments(parser, work_dir="/tmp/vocab_comparison")
    parser.add_argument("--learned_vocab_size", type=int, default=30522,
                        help="Target size of the learned vocab (bert-base-uncased's: 30522).")
    parser.add_argument("--min_count", type=int, default=10,
                        help="learn_vocab.py's --min_count.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2", "3"],
                        help="Each vocab's model is trained with each seed.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error("--corpus is required")
    return args


def num_reserved(vocab):
    """How many tokens at the start of vocab are bracketed special or unused ones."""
    for index, token in enumerate(vocab):
        if not (len(token) > 2 and token[0] == "[" and token[-1] == "]"):
            return index
    return len(vocab)


def split_statistics(vocab_file, word_counts):
    """How a vocab splits counted words.

    Args:
      vocab_file: The vocab.txt.
      word_counts: A Counter of BasicTokenizer's words.

    Returns:
      A dict for the JSON line.
    """
    vocab = list(tokenization.load_vocab(vocab_file))
    summary = vocab_learning.VocabLearningSummary()
    vocab_learning.describe_vocab(vocab, word_counts, num_reserved(vocab), summary)
    return {"vocab_size": summary.vocab_size, "characters": summary.num_characters,
            "word_starts": summary.num_word_starts, "continuations": summary.num_continuations,
            "heldout_words": summary.words,
            "heldout_pieces_per_word": round(summary.pieces_per_word, 4),
            "heldout_whole_word_share": round(summary.whole_word_share, 4),
            "heldout_unknown_share": round(summary.unknown_words / max(1, summary.words), 5)}


def last_evaluations(path):
    """The held-out metrics of each seed's last evaluation in a pretraining_quality file.

    Returns:
      {seed: (step, masked-LM accuracy, next-sentence accuracy)}.
    """
    last = {}
    with open(path, encoding="utf-8") as f:
        for text in f:
            line = json.loads(text)
            if line.get("impl") == "bert_tf" and line["step"] >= last.get(line["seed"], (0,))[0]:
                last[line["seed"]] = (line["step"], line["heldout_masked_lm_accuracy"],
                                      line["heldout_next_sentence_accuracy"])
    return last


def main(args):
    """Learns the vocab, measures both vocabs and pretrains with each."""
    os.makedirs(args.work_dir, exist_ok=True)
    texts, _ = pretraining_corpus.split_corpus(args.corpus, args.heldout_every, args.work_dir)
    vocabs = {"learned": os.path.join(args.work_dir, "learned_vocab.txt"),
              "reference": args.vocab_file or minilm.vocab_file()}
    config = vocab_learning.VocabLearningConfig(
        vocab_size=args.learned_vocab_size, min_count=args.min_count)
    learned = vocab_learning.learn_vocab_file(texts["train"], vocabs["learned"], config)
    machine.emit({"learned_vocab": learned.describe(), **machine.describe()}, args.out)
    heldout = pretraining_data.open_text_source([texts["heldout"]], config.text_input)
    heldout_words, _, _ = vocab_learning.count_words(heldout, config)
    passed_on = [f"--{name}={getattr(args, name)}" for name in _PASSED_ON]
    for name, vocab_file in vocabs.items():
        machine.emit({"vocab": name, "vocab_file": vocab_file,
                      **split_statistics(vocab_file, heldout_words), **machine.describe()},
                     args.out)
        work_dir = os.path.join(args.work_dir, name)
        points = os.path.join(work_dir, "points.jsonl")
        subprocess.run([sys.executable, "-m", "bench.pretraining_quality",
                        f"--corpus={args.corpus}", f"--vocab_file={vocab_file}",
                        f"--work_dir={work_dir}", "--runs=bert_tf",
                        f"--seeds={','.join(args.seeds)}", f"--out={points}", *passed_on],
                       check=True)
        last = last_evaluations(points)
        machine.emit({"vocab": name, "steps": sorted({step for step, _, _ in last.values()}),
                      "heldout_masked_lm_accuracy": {seed: mlm for seed, (_, mlm, _)
                                                     in sorted(last.items())},
                      "median_heldout_masked_lm_accuracy": statistics.median(
                          mlm for _, mlm, _ in last.values()),
                      "heldout_next_sentence_accuracy": {seed: nsp for seed, (_, _, nsp)
                                                         in sorted(last.items())},
                      **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
