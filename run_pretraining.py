"""Pretrains BERT with masked LM and next-sentence prediction.

The original README's command lines run unchanged, e.g.:

  python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \\
    --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \\
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
    --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \\
    --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

It runs on a TPU, GPUs or the CPU with no change (see bert_tf/runtime/distribution.py),
and resumes from the newest checkpoint in --output_dir after an interruption.
Under a TF_CONFIG that lists several workers, start it on each of them.
The job itself is bert_tf.pretrain.run(), which Python callers use directly.
"""

from absl import app, flags

from bert_tf import cli, pretrain
from bert_tf.cli import config_flags, script_flags

FLAGS = flags.FLAGS

CONFIG_FLAGS = script_flags.pretraining_flags()
flags.mark_flags_as_required(["input_file", "output_dir"])
# Show the shared flags in --help too, not only in --helpfull.
flags.adopt_module_key_flags(config_flags)


def main(argv):
    """Checks the flags and the data, then trains and/or evaluates."""
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {' '.join(argv[1:])} (write --flag=value)")
    pretrain.run(CONFIG_FLAGS.config())


if __name__ == "__main__":
    cli.run(main)
