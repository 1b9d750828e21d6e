"""Converts BERT checkpoints between the original TF1, Hugging Face and bert_tf formats.

It also writes a model as TF Hub's encoder and preprocessor SavedModels or as
a keras-hub preset, and reads both back (as --init_checkpoint does).

Examples:
  python convert_checkpoint.py --input=uncased_L-12_H-768_A-12/bert_model.ckpt \\
      --output=bert_hf --output_format=hf
  python convert_checkpoint.py --input=bert_hf --output=google/bert_model.ckpt \\
      --output_format=google
  python convert_checkpoint.py --input=uncased_L-12_H-768_A-12 --output=bert_tf_hub \\
      --output_format=tf_hub
  python convert_checkpoint.py --input=uncased_L-12_H-768_A-12 --output=bert_preset \\
      --output_format=keras_hub
  python convert_checkpoint.py --list_models

--input takes a model's name too (uncased_L-12_H-768_A-12, bert-base-uncased,
bert_base_en_uncased, a TF Hub handle): it is downloaded once, into
$BERT_TF_CACHE (~/.cache/bert_tf). --list_models lists the names bert_tf knows.
"""

from absl import flags

import bert_tf.tasks  # noqa: F401  (defines every task's heads, which heads.head_types() finds)
from bert_tf import cli
from bert_tf.checkpoints import checkpoints, model_names, tf_hub
from bert_tf.model import heads

flags.DEFINE_string(
    "input", None,
    "Checkpoint to read: an original bert_model.ckpt prefix, a Hugging Face folder "
    "(config.json + model.safetensors), a bert_tf output folder or prefix, a TF Hub "
    "encoder SavedModel folder (bert_tf's or TF Hub's BERT), a keras-hub preset folder, or "
    "a model's name (see --list_models), downloaded once.")
flags.DEFINE_string(
    "output", None,
    "Where to write: a checkpoint prefix for google/tf2, a folder for the others.")
flags.DEFINE_enum(
    "output_format", None, list(checkpoints.OUTPUT_FORMATS),
    "google: original TF1 names; hf: Hugging Face safetensors; tf2: bert_tf's own; "
    "tf_hub: TF Hub's BERT encoder and preprocessor SavedModels (<output>/encoder, "
    "<output>/preprocessor); keras_hub: a keras-hub BertBackbone and BertTokenizer preset "
    "(needs keras-hub). tf_hub and keras_hub hold the encoder alone, without heads.")
flags.DEFINE_string(
    "bert_config_file", None,
    "bert_config.json for the input, when it is not next to the checkpoint.")
flags.DEFINE_string(
    "vocab_file", None,
    "tf_hub and keras_hub: the model's vocab.txt, when it is not beside the input.")
flags.DEFINE_bool(
    "do_lower_case", None,
    "tf_hub and keras_hub: whether the model is uncased. Default: what the input "
    "records (a Hugging Face or fine-tuning output folder, a TF Hub encoder, a preset), "
    "else True.")
flags.DEFINE_integer(
    "max_seq_length", None,
    "tf_hub: the sequence length of the preprocessor's outputs (its bert_pack_inputs "
    f"takes any). Default: {tf_hub.DEFAULT_SEQ_LENGTH}, as TF Hub's, or the model's "
    "max_position_embeddings when less.")
flags.DEFINE_bool(
    "list_models", False,
    "Print the models bert_tf knows by name (Google's releases, Hugging Face's and "
    "keras-hub's BERTs), with their sizes, and exit.")
_REQUIRED = ("input", "output", "output_format")


@flags.multi_flags_validator([*_REQUIRED, "list_models"],
                             message="--input, --output and --output_format are required "
                                     "(or --list_models)")
def _required_unless_listing(values):
    return values["list_models"] or all(values[name] is not None for name in _REQUIRED)


def print_models():
    """Prints each known model: its name, source, parameters, size, and whether it is cached."""
    print(f"{'name':42} {'source':9} {'params':>8} {'float32':>9}  cached  description")
    for model in model_names.known_models():
        print(f"{model.name:42} {model.source:9} {model.parameters / 1e6:>7.1f}M "
              f"{model.weight_bytes() / 1e6:>7.0f}MB  {'yes' if model.cached else 'no':6}  "
              f"{model.description}")
    print("Any Hugging Face id (owner/name) with model.safetensors, keras-hub preset, or TF "
          "Hub / Kaggle handle is a name too.")


def main(_):
    # A CheckpointError or ConfigError names the file and the tensor;
    # cli.run prints it as one line. Nothing is written then.
    args = flags.FLAGS
    if args.list_models:
        print_models()
        return
    # The conversion logs its load report and what it wrote, once each.
    checkpoints.convert(
        args.input, args.output, args.output_format, heads.head_types(),
        args.bert_config_file, vocab_file=args.vocab_file,
        do_lower_case=args.do_lower_case, seq_length=args.max_seq_length)


if __name__ == "__main__":
    cli.run(main)
