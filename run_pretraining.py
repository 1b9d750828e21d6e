"""Pretrains BERT with masked LM and next-sentence prediction.

The original README's command lines run unchanged, e.g.:

  python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \\
    --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \\
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
    --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \\
    --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

It runs on a TPU, GPUs or the CPU with no change (see bert_tf/distribution.py),
and resumes from the newest checkpoint in --output_dir after an interruption.
Under a TF_CONFIG that lists several workers, start it on each of them.
"""

import functools
import os

from absl import app, flags, logging

from bert_tf import (
    checkpoints,
    cli,
    dynamic_masking,
    input_pipeline,
    run_dir,
    run_setup,
    script_flags,
    training,
    vocab_flags,
)
from bert_tf.tasks import PretrainingTask

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "input_file", None,
    "TFRecord files from create_pretraining_data.py (this one's or the original's): "
    "comma-separated, globs allowed.")
flags.DEFINE_string(
    "eval_input_file", None,
    "Files to evaluate on; default: --input_file, as the original does.")
flags.DEFINE_integer(
    "max_predictions_per_seq", 20,
    "Masked LM predictions per sequence. Must match data generation.", lower_bound=1)
flags.DEFINE_integer(
    "num_train_steps", 100000,
    "Optimizer updates to train for in all; a resumed run stops there too. The "
    "learning rate decays linearly to 0 at this step.", lower_bound=1)
flags.DEFINE_integer(
    "num_warmup_steps", 10000, "Steps over which the learning rate rises linearly to "
    "--learning_rate.", lower_bound=0)
flags.DEFINE_integer(
    "max_eval_steps", 100, "Evaluate on at most this many batches of --eval_batch_size.",
    lower_bound=1)
flags.DEFINE_bool(
    "dynamic_masking", False,
    "Draw new masks for each training batch in the input pipeline, from the unmasked "
    "tokens, instead of using the stored ones (as RoBERTa does); works on any "
    "--input_file. Evaluation keeps the stored masks, so that its results compare "
    "across runs. Needs --vocab_file.")
vocab_flags.define_vocab_file_flag(
    "With --dynamic_masking: the vocab.txt of the data, for the ids of [CLS], [SEP], "
    "[MASK] and of the word pieces that random replacements draw from.")
flags.DEFINE_float(
    "masked_lm_prob", 0.15, "With --dynamic_masking: the share of the tokens to mask.")
script_flags.define_training_flags()
script_flags.define_tpu_flags()
flags.mark_flags_as_required(["input_file", "output_dir"])
flags.register_multi_flags_validator(
    ["max_predictions_per_seq", "max_seq_length"],
    lambda f: f["max_predictions_per_seq"] <= f["max_seq_length"],
    "--max_predictions_per_seq cannot exceed --max_seq_length")
# Show the shared flags in --help too, not only in --helpfull.
flags.adopt_module_key_flags(script_flags)
flags.adopt_module_key_flags(vocab_flags)


def _check_input(flag_name, patterns):
    """Checks that the files hold records the flags fit.

    A missing, truncated or corrupt file, or a --max_seq_length or
    --max_predictions_per_seq other than the data's, would otherwise fail only
    after the model is built, in the middle of training.

    Args:
      flag_name: The flag that named the files, for the message.
      patterns: Its value: comma-separated file patterns.

    Raises:
      ValueError: naming the flag, the file and what does not fit.
    """
    try:
        input_pipeline.check_pretraining_records(
            patterns, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq)
    except ValueError as e:
        raise ValueError(f"--{flag_name}: {e}") from None


@functools.cache
def _masking_config(vocab_file, masked_lm_prob):
    """The DynamicMaskingConfig, read once for the validator and all input pipelines."""
    return dynamic_masking.DynamicMaskingConfig.from_vocab_file(vocab_file, masked_lm_prob)


@flags.multi_flags_validator(["dynamic_masking", "vocab_file", "masked_lm_prob"])
def _check_dynamic_masking(values):
    """Checks at start-up, not at the first training step, that masking can be set up."""
    if not values["dynamic_masking"]:
        return True
    if not values["vocab_file"]:
        raise flags.ValidationError("--dynamic_masking needs --vocab_file")
    try:
        _masking_config(values["vocab_file"], values["masked_lm_prob"])
    except ValueError as e:
        raise flags.ValidationError(f"--dynamic_masking: {e}") from e
    return True


def _dataset_fn(patterns, batch_size, is_training, input_context):
    """Builds one input pipeline's dataset for distribute_datasets_from_function."""
    dynamic = FLAGS.dynamic_masking and is_training
    return input_pipeline.pretraining_dataset(
        patterns, input_context.get_per_replica_batch_size(batch_size),
        FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, is_training,
        input_context=input_context,
        dynamic_masking=_masking_config(FLAGS.vocab_file, FLAGS.masked_lm_prob)
        if dynamic else None)


def _training_data_settings():
    """What the training input is: run_dir's "training data" group of settings."""
    settings = {"input_files": run_dir.fingerprints(input_pipeline.expand_patterns(
                    FLAGS.input_file)),
                "max_seq_length": FLAGS.max_seq_length,
                "max_predictions_per_seq": FLAGS.max_predictions_per_seq,
                "dynamic_masking": FLAGS.dynamic_masking}
    if FLAGS.dynamic_masking:
        settings["masked_lm_prob"] = FLAGS.masked_lm_prob
    return settings


def main(argv):
    """Checks the flags and the data, then trains and/or evaluates."""
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {' '.join(argv[1:])} (write --flag=value)")
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise app.UsageError("at least one of --do_train or --do_eval must be True")
    if not FLAGS.bert_config_file and not FLAGS.init_checkpoint:
        raise app.UsageError("give --bert_config_file, or an --init_checkpoint that has one")
    script_flags.check_pretraining_run(FLAGS)
    strategy = run_setup.prepare(FLAGS.seed, script_flags.tpu_config(FLAGS),
                                FLAGS.mixed_precision, script_flags.jit_compile(FLAGS))
    # ConfigError, CheckpointError: they name the file or the flag.
    config = checkpoints.find_config(FLAGS.init_checkpoint, FLAGS.bert_config_file)
    config.check_max_seq_length(FLAGS.max_seq_length)
    micro_batch = run_setup.validate_batch_sizes(
        strategy, FLAGS.train_batch_size, FLAGS.gradient_accumulation_steps,
        do_train=FLAGS.do_train, eval_batch_size=FLAGS.eval_batch_size)
    if FLAGS.do_train:
        _check_input("input_file", FLAGS.input_file)
    if FLAGS.do_eval:
        _check_input("eval_input_file" if FLAGS.eval_input_file else "input_file",
                     FLAGS.eval_input_file or FLAGS.input_file)

    task = PretrainingTask(FLAGS.max_seq_length, FLAGS.max_predictions_per_seq)
    trainer = training.Trainer(task, config, strategy, script_flags.training_config(
        FLAGS, FLAGS.num_train_steps, FLAGS.num_warmup_steps, strategy))
    try:
        trainer.restore(FLAGS.init_checkpoint)
    except ValueError as e:  # CheckpointError: names the variable
        raise ValueError(f"--init_checkpoint: {e}") from None
    if trainer.is_chief:
        config.to_json_file(os.path.join(FLAGS.output_dir, "bert_config.json"))
        if FLAGS.do_train:
            # Training on in a folder means training on the same records.
            run_dir.check_settings(FLAGS.output_dir, "training data", _training_data_settings(),
                                   resuming=trainer.global_step > 0)

    if FLAGS.do_train:
        logging.info("Training: %d steps, batch %d (%d per replica and micro-batch).",
                     FLAGS.num_train_steps, FLAGS.train_batch_size, micro_batch)
        trainer.train(
            functools.partial(_dataset_fn, FLAGS.input_file,
                              FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps,
                              True),
            FLAGS.num_train_steps, FLAGS.train_batch_size)
    if FLAGS.do_eval:
        results = trainer.evaluate(
            functools.partial(_dataset_fn, FLAGS.eval_input_file or FLAGS.input_file,
                              FLAGS.eval_batch_size, False),
            max_steps=FLAGS.max_eval_steps)
        trainer.write_eval_results(results)


if __name__ == "__main__":
    cli.run(main)
