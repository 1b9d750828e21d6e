"""Converts BERT checkpoints between the original TF1, Hugging Face and bert_tf formats.

Examples:
  python convert_checkpoint.py --input=uncased_L-12_H-768_A-12/bert_model.ckpt \\
      --output=bert_hf --output_format=hf
  python convert_checkpoint.py --input=bert_hf --output=google/bert_model.ckpt \\
      --output_format=google
"""

from absl import flags

import bert_tf.tasks  # noqa: F401  (defines every task's heads, which heads.head_types() finds)
from bert_tf import cli
from bert_tf.model import checkpoints, heads
from bert_tf.model.checkpoint_names import FORMATS

flags.DEFINE_string(
    "input", None,
    "Checkpoint to read: an original bert_model.ckpt prefix, a Hugging Face folder "
    "(config.json + model.safetensors), or a bert_tf output folder or prefix.")
flags.DEFINE_string(
    "output", None, "Where to write: a checkpoint prefix for google/tf2, a folder for hf.")
flags.DEFINE_enum(
    "output_format", None, list(FORMATS),
    "google: original TF1 names; hf: Hugging Face safetensors; tf2: bert_tf's own.")
flags.DEFINE_string(
    "bert_config_file", None,
    "bert_config.json for the input, when it is not next to the checkpoint.")
flags.mark_flags_as_required(["input", "output", "output_format"])


def main(_):
    # A CheckpointError or ConfigError names the file and the tensor;
    # cli.run prints it as one line. Nothing is written then.
    report = checkpoints.convert(
        flags.FLAGS.input, flags.FLAGS.output, flags.FLAGS.output_format,
        heads.head_types(), flags.FLAGS.bert_config_file)
    print(report.summary())
    print(f"Wrote {flags.FLAGS.output_format} checkpoint to {flags.FLAGS.output}")


if __name__ == "__main__":
    cli.run(main)
