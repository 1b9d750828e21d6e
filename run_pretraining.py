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
"""

import functools

from absl import app, flags, logging

from bert_tf import checkpoints, distribution, input_pipeline, training
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
    "Masked LM predictions per sequence. Must match data generation.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
training.define_training_flags()
distribution.define_tpu_flags()
flags.mark_flags_as_required(["input_file", "output_dir"])


def _dataset_fn(patterns, batch_size, is_training, input_context):
    """Builds one input pipeline's dataset for distribute_datasets_from_function."""
    return input_pipeline.pretraining_dataset(
        patterns, input_context.get_per_replica_batch_size(batch_size),
        FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, is_training,
        input_context=input_context)


def main(_):
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise app.UsageError("At least one of --do_train or --do_eval must be True.")
    if not FLAGS.bert_config_file and not FLAGS.init_checkpoint:
        raise app.UsageError("Give --bert_config_file, or an --init_checkpoint that has one.")

    strategy = distribution.strategy_from_flags()
    training.set_precision_policy(FLAGS.mixed_precision, strategy)
    config = checkpoints.find_config(FLAGS.init_checkpoint, FLAGS.bert_config_file)
    if FLAGS.max_seq_length > config.max_position_embeddings:
        raise app.UsageError(
            f"--max_seq_length={FLAGS.max_seq_length} exceeds the model's "
            f"max_position_embeddings={config.max_position_embeddings}")
    micro_batch = training.validate_batch_flags(FLAGS, strategy)

    trainer = training.Trainer(
        PretrainingTask(), config, strategy, FLAGS.output_dir,
        learning_rate=FLAGS.learning_rate, num_train_steps=FLAGS.num_train_steps,
        num_warmup_steps=FLAGS.num_warmup_steps, optimizer_type=FLAGS.optimizer,
        bias_correction=FLAGS.adam_bias_correction,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
        iterations_per_loop=FLAGS.iterations_per_loop,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max, jit_compile=FLAGS.jit_compile)
    trainer.restore(FLAGS.init_checkpoint)
    config.to_json_file(f"{FLAGS.output_dir}/bert_config.json")

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
        for key in sorted(results):
            print(f"{key} = {results[key]}")


if __name__ == "__main__":
    app.run(main)
