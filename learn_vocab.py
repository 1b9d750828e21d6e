"""Learns a WordPiece vocabulary (vocab.txt) from raw text, for pretraining from scratch.

The input is create_pretraining_data.py's, with the same flags: UTF-8
text files (--input_file, laid out as --input_format says) or a TensorFlow
Datasets data set (--tfds_name). The text is split into words as bert_tf's
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
from bert_tf.cli import config_flags
from bert_tf.pretraining_data import vocab_learning

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "input_file", None,
    "Input text: a file, or comma-separated files and globs. One sentence per "
    "line, a blank line between documents, unless --input_format says otherwise "
    "(create_pretraining_data.py's input). Or give --tfds_name instead.")
flags.DEFINE_string(
    "output_file", None,
    "The vocab.txt to write, one token a line; it appears only when complete.")
CONFIG_FLAGS = config_flags.define(vocab_learning.VocabLearningConfig)
flags.adopt_module_key_flags(config_flags)


def main(argv):
    """Turns the flags into a config, learns and writes the vocab, and logs a summary."""
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    config = CONFIG_FLAGS.config()
    summary = vocab_learning.learn_vocab_file(FLAGS.input_file, FLAGS.output_file, config)
    logging.info("wrote %s", FLAGS.output_file)
    for line in summary.describe().splitlines():
        logging.info("%s", line)


if __name__ == "__main__":
    flags.mark_flags_as_required(["output_file"])
    cli.run(main)
