"""Speed and peak memory of learn_vocab.py: a WordPiece vocab learned from raw text.

Each run is learn_vocab.py in a process of its own, as a user runs it, on
--input_file at one target --vocab_sizes entry; its peak resident memory
(RSS) is the kernel's count for that process (ru_maxrss from wait4). The
figures of the run's own summary are kept too: the seconds spent reading
and counting words against those of tensorflow-text's learner (pure Python,
most of the time), and how the vocab splits the input's words.

Prints one JSON line per run: vocab_size (the target), vocab_written, lines,
input_mb, wall_s, lines_per_s (lines over the whole wall time, the TensorFlow
import included), read_s, learn_s, cpu_s, peak_rss_mb, pieces_per_word,
whole_word_share, word_starts, continuations, and where it ran.

Example, from the repository root:
  .venv/bin/python -m bench.vocab_learning_speed --vocab_sizes=8000,30522 \\
      --out=bench/results/vocab_learning-$(date +%F).jsonl
"""

import argparse
import os
import re
import sys
import tempfile

from bench import arguments, machine
from bench.peak_rss import run_and_measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "data", "corpus",
                      "gutenberg_11books.txt")

# The summary lines learn_vocab.py logs (VocabLearningSummary.describe).
_SUMMARY = {
    "vocab_written": (r"vocab written: (\d+) tokens", int),
    "word_starts": (r"(\d+) word starts", int),
    "continuations": (r"(\d+) ## pieces", int),
    "lines": (r"input: (\d+) lines", int),
    "input_mb": (r"input: \d+ lines, ([\d.]+) MB", float),
    "read_s": (r"read in ([\d.]+) s", float),
    "learn_s": (r"learned in ([\d.]+) s", float),
    "pieces_per_word": (r"([\d.]+) word pieces per word", float),
    "whole_word_share": (r"([\d.]+)% of the words whole",
                         lambda value: round(float(value) / 100, 4)),
}


def parse_summary(log):
    """The figures of learn_vocab.py's summary lines.

    Args:
      log: The run's stderr.

    Returns:
      A dict with the keys of _SUMMARY.
    """
    figures = {}
    for key, (pattern, convert) in _SUMMARY.items():
        match = re.search(pattern, log)
        figures[key] = convert(match.group(1)) if match else None
    return figures


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input_file", default=CORPUS, help="The text to learn from.")
    parser.add_argument("--vocab_sizes", type=arguments.comma_list, default=["8000", "30522"],
                        help="One run per target size.")
    parser.add_argument("--learn_vocab_flags", type=arguments.comma_list, default=[],
                        help="Extra flags for learn_vocab.py, e.g. --learn_vocab_flags="
                        "--max_lines=10000")
    parser.add_argument("--repeats", type=int, default=1, help="Runs per target size.")
    parser.add_argument("--work_dir", default="/tmp/vocab_learning_speed", help="Scratch folder.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Runs learn_vocab.py at each target size and prints a line per run."""
    os.makedirs(args.work_dir, exist_ok=True)
    for vocab_size in args.vocab_sizes:
        for repeat in range(args.repeats):
            scratch = tempfile.mkdtemp(prefix=f"{vocab_size}_", dir=args.work_dir)
            log_path = os.path.join(scratch, "log.txt")
            command = [sys.executable, os.path.join(ROOT, "learn_vocab.py"),
                       f"--input_file={args.input_file}",
                       f"--output_file={os.path.join(scratch, 'vocab.txt')}",
                       f"--vocab_size={vocab_size}", *args.learn_vocab_flags]
            peak, wall, cpu, _ = run_and_measure(command, log_path, cwd=ROOT)
            with open(log_path, encoding="utf-8") as f:
                figures = parse_summary(f.read())
            machine.emit({"bench": "vocab_learning_speed", "vocab_size": int(vocab_size),
                          "repeat": repeat, "input_file": args.input_file,
                          "learn_vocab_flags": args.learn_vocab_flags, **figures,
                          "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                          "lines_per_s": round(figures["lines"] / wall) if figures["lines"]
                          else None,
                          "peak_rss_mb": round(peak / 2**20), **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
