"""Extracts pre-computed feature vectors from BERT, as the original extract_features.py.

  python extract_features.py --input_file=input.txt --output_file=output.jsonl \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --layers=-1,-2,-3,-4 \\
    --max_seq_length=128 --batch_size=8

Each line of --input_file is one example: a text, or two joined by " ||| ".
The default output is the original's JSON lines: for each line, every token's
([CLS] and [SEP] included) values in each of --layers, rounded to 6 decimals.
--bert_config_file and --vocab_file default to the files beside
--init_checkpoint, which may also be a Hugging Face folder.

New: --output_format=npz|tfrecord, --pooling=cls|mean (one vector per line),
--word_level (one vector per whitespace-separated word, to line up with a
tagging file), "emb" in --layers (the embedding output). The input is read
lazily and the output written as it goes, under a temporary name until it is
complete. See bert_tf/feature_extraction/writers.py for the output layouts.
"""

import dataclasses

from absl import app, flags

from bert_tf import cli, configs, feature_extraction
from bert_tf.cli import config_flags
from bert_tf.runtime import run_setup

flags.DEFINE_string("input_file", None,
                    "Text to encode, one example a line: 'text' or 'text_a ||| text_b'.")
flags.DEFINE_string("output_file", None, "Where to write the features (see --output_format).")
flags.DEFINE_string(
    "layers", "-1,-2,-3,-4",
    "Comma-separated layers to output: -1 is the last transformer layer, -N the first of N; "
    f"0..N-1 count from the first; '{feature_extraction.EMBEDDINGS}' is the embedding output.")
MODEL_FLAGS = config_flags.define(configs.ModelSettings)
VOCAB_FLAGS = config_flags.define(configs.VocabSettings)
flags.DEFINE_integer("batch_size", 32, "Lines encoded at a time.")
# float32, the default, gives the same features on every device, as the original did; the
# features are written as float32 whatever the computation's precision.
# Of the runtime's settings, the two that extraction has: no seed (it draws nothing at
# random) and no training precision.
RUNTIME_FLAGS = config_flags.define(configs.RuntimeSettings,
                                    only=("inference_precision", "jit_compile"))
flags.register_validator(
    "inference_precision", lambda value: value != "as_trained",
    "--inference_precision=as_trained: extract_features.py trains nothing; give float32, "
    "bfloat16 or float16")
# The flag's earlier name here.
flags.DEFINE_alias("mixed_precision", "inference_precision")
flags.DEFINE_bool("use_one_hot_embeddings", False,
                  "Original flag, accepted and ignored: the embedding lookup needs no choice.")
flags.DEFINE_enum("output_format", "jsonl", feature_extraction.OUTPUT_FORMATS,
                  "jsonl: the original's JSON lines. npz: one numpy zip with arrays "
                  "example_{i}_layer_{layer} and example_{i}_tokens. tfrecord: one "
                  "tf.train.Example per line.")
flags.DEFINE_enum("pooling", "none", feature_extraction.POOLINGS,
                  "none: a vector per token. cls: the [CLS] token's. mean: the mean over the "
                  "line's tokens, [CLS] and [SEP] included (padding excluded).")
flags.DEFINE_bool("word_level", False,
                  "One vector per whitespace-separated word of the line (of both texts of a "
                  "pair, ' ||| ' left out) instead of per word piece: features line up with "
                  "the words of a tagging file.")
flags.DEFINE_enum("word_pooling", "first", feature_extraction.WORD_POOLINGS,
                  "With --word_level: the word's first piece's vector, or its pieces' mean.")
flags.DEFINE_integer("log_every_n_examples", 1000, "Log progress every this many examples.")
TPU_FLAGS = config_flags.define(configs.TpuConfig)
# Show the model, TPU and XLA flags in --help, not only --helpfull.
flags.adopt_module_key_flags(config_flags)
flags.mark_flags_as_required(["input_file", "output_file", "init_checkpoint"])

FLAGS = flags.FLAGS


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    requested = RUNTIME_FLAGS.config()
    # The features compute in --inference_precision, the model's only precision here.
    runtime = run_setup.prepare(dataclasses.replace(
        requested, mixed_precision=requested.inference_precision, tpu=TPU_FLAGS.config()))
    model, vocab = MODEL_FLAGS.config(), VOCAB_FLAGS.config()
    # ExtractionError (a ValueError) names the flag, or the file and line:
    # cli.run prints it as one line.
    files = feature_extraction.model_files(
        model.init_checkpoint, model.bert_config_file, vocab.vocab_file, vocab.do_lower_case,
        model.max_seq_length)
    feature_extraction.extract(
        files, FLAGS.input_file, FLAGS.output_file, layers=FLAGS.layers,
        max_seq_length=model.max_seq_length, batch_size=FLAGS.batch_size,
        output_format=FLAGS.output_format, pooling=FLAGS.pooling,
        word_level=FLAGS.word_level, word_pooling=FLAGS.word_pooling,
        log_every_n_examples=FLAGS.log_every_n_examples, runtime=runtime)

if __name__ == "__main__":
    cli.run(main)
