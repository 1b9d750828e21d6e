"""Creates masked-LM and next-sentence pretraining TFRecords from raw text.

The input is UTF-8 text with one sentence per line and a blank line between
documents, as the original's; or, with --input_format, plain text whose
documents are paragraphs, lines or files; or, with --tfds_name, a
TensorFlow Datasets data set. Plain text is split into sentences by a
simple rule (bert_tf/pretraining_data/sentences.py). The original's flags
and output format are kept; the algorithm and its fixes, the streaming
window and the determinism guarantee are described in
bert_tf/pretraining_data/__init__.py.

Examples:
  python create_pretraining_data.py \\
    --input_file=corpus/*.txt --output_file=out/train-0.tfrecord,out/train-1.tfrecord \\
    --vocab_file=vocab.txt --max_seq_length=128 --max_predictions_per_seq=20 \\
    --dupe_factor=5 --num_workers=2

  python create_pretraining_data.py \\
    --tfds_name=imdb_reviews/plain_text --tfds_split=unsupervised \\
    --output_file=out/train.tfrecord --vocab_file=vocab.txt
"""

from absl import app, flags, logging

from bert_tf import cli, messages, pretraining_data
from bert_tf.cli import config_flags

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "input_file", None,
    "Input text: a file, or comma-separated files and globs. One sentence per "
    "line, a blank line between documents, unless --input_format says otherwise. "
    "Or give --tfds_name instead.")
flags.DEFINE_string(
    "output_file", None,
    "Output TFRecord file, or comma-separated files; records are dealt to them "
    "in turn. Each appears only when complete.")
CONFIG_FLAGS = config_flags.define(pretraining_data.PretrainingDataConfig)
flags.adopt_module_key_flags(config_flags)
flags.DEFINE_integer(
    "num_workers", 1,
    "Processes that tokenize and generate in parallel. The output is the same for any number.",
    lower_bound=1)


def main(argv):
    """Validates the flags, writes the records and logs a summary."""
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    config = CONFIG_FLAGS.config()
    try:
        config.validate()
    except ValueError as e:
        raise SystemExit(f"create_pretraining_data.py: bad flag: {e}") from e
    try:
        summary = pretraining_data.create_pretraining_data(
            FLAGS.input_file, FLAGS.output_file, config, num_workers=FLAGS.num_workers)
    except pretraining_data.PretrainingDataError as e:
        raise SystemExit(f"create_pretraining_data.py: error: {e}") from e
    for line in summary.describe().splitlines():
        logging.info("%s", line)
    for warning in summary.warnings(config.max_seq_length):
        messages.warn(warning)


if __name__ == "__main__":
    flags.mark_flags_as_required(["output_file", "vocab_file"])
    cli.run(main)
