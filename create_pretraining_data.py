"""Creates masked-LM and next-sentence pretraining TFRecords from raw text.

The input is UTF-8 text with one sentence per line and a blank line between
documents. The flags and the output format are those of the original
google-research/bert script; the algorithm and its fixes, the streaming
window and the determinism guarantee are described in
bert_tf/pretraining_data/__init__.py.

Example:
  python create_pretraining_data.py \\
    --input_file=corpus/*.txt --output_file=out/train-0.tfrecord,out/train-1.tfrecord \\
    --vocab_file=vocab.txt --max_seq_length=128 --max_predictions_per_seq=20 \\
    --dupe_factor=5 --num_workers=2
"""

from absl import app, flags, logging

from bert_tf import cli, messages, pretraining_data
from bert_tf.cli import vocab_flags

FLAGS = flags.FLAGS
# The flags' defaults are the config's: each is written once.
DEFAULTS = pretraining_data.PretrainingDataConfig

flags.DEFINE_string(
    "input_file", None,
    "Input text: a file, or comma-separated files and globs. One sentence per "
    "line, a blank line between documents.")
flags.DEFINE_string(
    "output_file", None,
    "Output TFRecord file, or comma-separated files; records are dealt to them "
    "in turn. Each appears only when complete.")
vocab_flags.define_vocab_file_flag("The WordPiece vocab the BERT model was trained with.")
vocab_flags.define_do_lower_case_flag(
    "Lower-case the text and strip accents: True for uncased models, False for cased ones.")
vocab_flags.define_errors_flag(DEFAULTS.errors)
flags.adopt_module_key_flags(vocab_flags)
flags.DEFINE_bool(
    "do_whole_word_mask", DEFAULTS.do_whole_word_mask,
    "Mask whole words (a piece and the ## pieces after it) rather than single word pieces.")
flags.DEFINE_bool(
    "wwm_decision_per_piece", DEFAULTS.wwm_decision_per_piece,
    "With --do_whole_word_mask, choose [MASK]/random/keep for each piece as the original "
    "did, instead of once for the whole word.")
flags.DEFINE_integer(
    "max_seq_length", DEFAULTS.max_seq_length,
    "Tokens per record, [CLS] and [SEP]s included; at least 5.")
flags.DEFINE_integer(
    "max_predictions_per_seq", DEFAULTS.max_predictions_per_seq,
    "Most masked positions a record holds.")
flags.DEFINE_integer(
    "random_seed", DEFAULTS.random_seed,
    "Seed of every random choice; the same seed gives the same files.")
flags.DEFINE_integer(
    "dupe_factor", DEFAULTS.dupe_factor,
    "Passes over the input, each with different pairs and masks.")
flags.DEFINE_float("masked_lm_prob", DEFAULTS.masked_lm_prob, "Share of the tokens to mask.")
flags.DEFINE_float(
    "short_seq_prob", DEFAULTS.short_seq_prob,
    "Probability that a document's pairs target a random length shorter than "
    "max_seq_length, to resemble short fine-tuning inputs.")
flags.DEFINE_integer(
    "num_workers", 1,
    "Processes that tokenize and generate in parallel. The output is the same for any number.",
    lower_bound=1)
flags.DEFINE_float(
    "window_mb", DEFAULTS.window_mb,
    "Megabytes of text processed at a time. Memory grows with it, not with the corpus; "
    "random-next spans come from other documents of the same window. Records are "
    "shuffled across the whole input whatever its value, but changing it changes the "
    "output.")


def main(argv):
    """Validates the flags, writes the records and logs a summary."""
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    config = pretraining_data.PretrainingDataConfig(
        vocab_file=FLAGS.vocab_file,
        do_lower_case=FLAGS.do_lower_case,
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        random_seed=FLAGS.random_seed,
        dupe_factor=FLAGS.dupe_factor,
        masked_lm_prob=FLAGS.masked_lm_prob,
        short_seq_prob=FLAGS.short_seq_prob,
        do_whole_word_mask=FLAGS.do_whole_word_mask,
        wwm_decision_per_piece=FLAGS.wwm_decision_per_piece,
        window_mb=FLAGS.window_mb,
        errors=FLAGS.errors)
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
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"])
    cli.run(main)
