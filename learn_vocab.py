"""Learns a WordPiece vocabulary (vocab.txt) from raw text, for pretraining from scratch.

The input is create_pretraining_data.py's: UTF-8 text, one sentence per line,
a blank line between documents. The text is split into words as bert_tf's
tokenizer splits it, and tensorflow-text's WordPiece learner chooses the
pieces. The special tokens are where bert-base-uncased has them: [PAD] 0,
[unused0]-[unused98] 1-99, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103
(with the default --num_unused=99). The vocab.txt feeds
create_pretraining_data.py and run_pretraining.py (with vocab_size in
bert_config.json set to its number of lines) as it is; see
bert_tf/pretraining_data/vocab_learning.py.

Example:
  python learn_vocab.py \\
    --input_file=corpus/*.txt --output_file=my_model/vocab.txt \\
    --vocab_size=30522 --do_lower_case=True
"""

from absl import app, flags, logging

from bert_tf import cli
from bert_tf.cli import vocab_flags
from bert_tf.pretraining_data import vocab_learning

FLAGS = flags.FLAGS
DEFAULTS = vocab_learning.VocabLearningConfig

flags.DEFINE_string(
    "input_file", None,
    "Input text: a file, or comma-separated files and globs. One sentence per "
    "line, a blank line between documents (create_pretraining_data.py's input).")
flags.DEFINE_string(
    "output_file", None,
    "The vocab.txt to write, one token a line; it appears only when complete.")
flags.DEFINE_integer(
    "vocab_size", DEFAULTS.vocab_size,
    "Target size of the vocab, special tokens and unused slots included (bert-base-uncased's "
    "is 30522). The result is at most this and, when the text holds enough frequent pieces, "
    "within 5% below; the summary says why when it is smaller.", lower_bound=1)
vocab_flags.define_do_lower_case_flag(
    "Lower-case the text and strip accents: True for an uncased model, False for a cased "
    "one. Pass the same value to create_pretraining_data.py and the fine-tuning scripts.")
vocab_flags.define_errors_flag(DEFAULTS.errors)
flags.adopt_module_key_flags(vocab_flags)
flags.DEFINE_integer(
    "num_unused", DEFAULTS.num_unused,
    "[unusedN] slots to reserve for tokens added later without resizing the model; the "
    "first 99 go before [UNK], the rest after [MASK], as in bert-base-uncased (which has "
    "994).", lower_bound=0)
flags.DEFINE_integer(
    "min_count", DEFAULTS.min_count,
    "A word piece seen fewer times than this is never chosen (characters always are); "
    "lower it for a small text.", lower_bound=1)
flags.DEFINE_integer(
    "max_lines", None,
    "Read at most this many non-blank lines: a sample that bounds time and memory. "
    "Default: all of them.", lower_bound=1)
flags.DEFINE_integer(
    "max_unique_chars", DEFAULTS.max_unique_chars,
    "Keep at most this many characters, the most frequent; words with another character "
    "are left out of the learning and become [UNK].", lower_bound=1)


def main(argv):
    """Turns the flags into a config, learns and writes the vocab, and logs a summary."""
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    config = vocab_learning.VocabLearningConfig(
        vocab_size=FLAGS.vocab_size,
        do_lower_case=FLAGS.do_lower_case,
        num_unused=FLAGS.num_unused,
        min_count=FLAGS.min_count,
        max_lines=FLAGS.max_lines,
        max_unique_chars=FLAGS.max_unique_chars,
        errors=FLAGS.errors)
    summary = vocab_learning.learn_vocab_file(FLAGS.input_file, FLAGS.output_file, config)
    logging.info("wrote %s", FLAGS.output_file)
    for line in summary.describe().splitlines():
        logging.info("%s", line)


if __name__ == "__main__":
    flags.mark_flags_as_required(["input_file", "output_file"])
    cli.run(main)
