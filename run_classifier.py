"""Fine-tunes BERT on a GLUE task: train, evaluate, predict, export.

The original README's command line runs unchanged, e.g. for MRPC:

  python run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \\
    --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_BASE_DIR/vocab.txt \\
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \\
    --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \\
    --output_dir=/tmp/mrpc_output/

--init_checkpoint may also be a Hugging Face folder (its vocab.txt and
config.json are then used when --vocab_file and --bert_config_file are not
given) or a bert_tf pretraining output_dir. --tfds_name=glue/<task> reads the
data through TensorFlow Datasets instead of --data_dir. --export_dir writes a
SavedModel that takes raw text.
"""

import functools
import json
import os
import shutil
import tempfile

import tensorflow as tf
from absl import app, flags, logging

from bert_tf import (
    checkpoints,
    classifier_data,
    distribution,
    export,
    glue,
    input_pipeline,
    tokenization,
    training,
)
from bert_tf.tasks import ClassificationTask

FLAGS = flags.FLAGS

# --dynamic_padding's length granularity: XLA compiles the step once per
# distinct length, so at most max_seq_length / 16 times.
_PAD_MULTIPLE = 16
# --group_by_length sorts this many batches' worth of examples at a time:
# enough for batches of similar length, few enough to keep the order random.
_LENGTH_GROUP_BATCHES = 50

flags.DEFINE_string("data_dir", None, "Folder with the task's .tsv files (GLUE layout).")
flags.DEFINE_string(
    "tfds_name", None, "Read the task from TensorFlow Datasets instead, e.g. glue/mrpc.")
flags.DEFINE_string(
    "task_name", None, f"The task, case-insensitive: {', '.join(sorted(glue.PROCESSORS))}.")
flags.DEFINE_string(
    "vocab_file", None, "vocab.txt the model was trained with; default: the one in a "
    "Hugging Face --init_checkpoint folder.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Lower-case the input: True for uncased models, False for cased ones. Default: a "
    "Hugging Face --init_checkpoint folder's tokenizer_config.json setting, else True.")
flags.DEFINE_bool("do_predict", False, "Predict on the test set and write submission files.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("num_train_epochs", 3.0, "Training epochs.")
flags.DEFINE_float(
    "warmup_proportion", 0.1, "Share of training with a linear learning-rate warmup.")
flags.DEFINE_string("export_dir", None, "Write a raw-text SavedModel here after training.")
flags.DEFINE_bool(
    "dynamic_padding", False,
    "Cut each batch's padding down to its longest example, rounded up to a multiple of "
    f"{_PAD_MULTIPLE}: the same results, faster on CPU and GPU when most examples are "
    "much shorter than max_seq_length. Not on TPU, which needs one static shape.")
flags.DEFINE_bool(
    "group_by_length", False,
    "With --dynamic_padding: fill each training batch with examples of similar length, "
    f"drawn from a shuffled group of {_LENGTH_GROUP_BATCHES} batches sorted by length. "
    "Much less padding, hence faster; but batches are no longer uniformly random, so "
    "results can differ a little from the original's recipe.")
training.define_training_flags()
distribution.define_tpu_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(training)
flags.adopt_module_key_flags(distribution)
flags.mark_flags_as_required(["task_name", "output_dir"])


def _vocab_file():
    """--vocab_file, or the vocab.txt of a Hugging Face init_checkpoint folder."""
    if FLAGS.vocab_file:
        return FLAGS.vocab_file
    if FLAGS.init_checkpoint and os.path.isdir(FLAGS.init_checkpoint):
        candidate = os.path.join(FLAGS.init_checkpoint, "vocab.txt")
        if os.path.exists(candidate):
            return candidate
    raise app.UsageError("--vocab_file is required (the checkpoint folder has no vocab.txt)")


def _do_lower_case():
    """--do_lower_case; when not given, a Hugging Face init_checkpoint folder's own setting.

    A Hugging Face folder records in tokenizer_config.json whether its model
    is cased, so a cased model needs no extra flag. A flag given on the command
    line always wins.
    """
    folder = FLAGS.init_checkpoint
    if FLAGS["do_lower_case"].present or not (folder and os.path.isdir(folder)):
        return FLAGS.do_lower_case
    path = os.path.join(folder, "tokenizer_config.json")
    if not os.path.exists(path):
        return FLAGS.do_lower_case
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f).get("do_lower_case")
    except (OSError, ValueError) as e:
        raise app.UsageError(f"cannot read {path}: {e}") from None
    if not isinstance(value, bool):
        return FLAGS.do_lower_case
    logging.info("do_lower_case=%s, from %s", value, path)
    return value


# The processors' split names that TFDS's GLUE builder calls otherwise.
_TFDS_SPLITS = {"dev": "validation", "dev_matched": "validation_matched",
                "dev_mismatched": "validation_mismatched"}


def _examples(processor, split):
    """The examples of one split, from --data_dir or --tfds_name.

    Args:
      processor: The task's glue.DataProcessor.
      split: A split name of the processor ("train", "dev", "test_matched").

    Returns:
      A non-empty list of glue.InputExample.

    Raises:
      ValueError: The split has no examples (glue's errors for bad files).
    """
    if FLAGS.tfds_name:
        tfds_split = _TFDS_SPLITS.get(split, split)
        examples = glue.examples_from_tfds(FLAGS.tfds_name, tfds_split)
        source = f"{FLAGS.tfds_name} split {tfds_split}"
    else:
        examples = processor.get_examples(FLAGS.data_dir, split)
        source = FLAGS.data_dir
    # An empty split would train for no step, or fail later on an empty batch.
    if not examples:
        raise ValueError(f"{processor.name}: no {split} examples in {source}")
    return examples


def _write_records(records_dir, name, examples, processor, tokenizer, pad_to_multiple_of=None):
    """Writes examples as <records_dir>/<name>.tf_record and returns the path."""
    path = os.path.join(records_dir, f"{name}.tf_record")
    classifier_data.write_tfrecord(
        path, examples, processor.get_labels(), FLAGS.max_seq_length, tokenizer,
        processor.is_regression, pad_to_multiple_of)
    return path


def _dataset_fn(path, batch_size, is_training, is_regression, input_context):
    """One input pipeline's dataset, for distribute_datasets_from_function.

    Training shards the records across workers. Evaluation and prediction do
    not: every worker reads the whole set in order, so that the chief's own
    predictions are complete and in input order (the others' are discarded).
    """
    return input_pipeline.classification_dataset(
        path, input_context.get_per_replica_batch_size(batch_size), FLAGS.max_seq_length,
        is_training, is_regression, input_context if is_training else None,
        trim_to_multiple_of=_PAD_MULTIPLE if FLAGS.dynamic_padding else None,
        length_group_batches=_LENGTH_GROUP_BATCHES if FLAGS.group_by_length else None)


def _predict(trainer, records_dir, name, examples, processor, tokenizer, batch_size):
    """Predictions for examples, padding dropped."""
    path = _write_records(records_dir, name, examples, processor, tokenizer, batch_size)
    predictions, real = trainer.predict(functools.partial(
        _dataset_fn, path, batch_size, False, processor.is_regression))
    return predictions[real == 1]


def main(_):
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict):
        raise app.UsageError("At least one of do_train, do_eval or do_predict must be True.")
    if FLAGS.group_by_length and not FLAGS.dynamic_padding:
        raise app.UsageError("--group_by_length only saves work with --dynamic_padding")
    if not (FLAGS.data_dir or FLAGS.tfds_name):
        raise app.UsageError("Give --data_dir (GLUE .tsv files) or --tfds_name.")
    try:
        processor = glue.get_processor(FLAGS.task_name)
        if FLAGS.tfds_name and glue.get_processor(FLAGS.tfds_name).name != processor.name:
            raise ValueError(f"--tfds_name={FLAGS.tfds_name} is not the task "
                             f"--task_name={FLAGS.task_name}")
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    if not (FLAGS.init_checkpoint or FLAGS.bert_config_file):
        raise app.UsageError("Give --bert_config_file (or an --init_checkpoint beside which "
                             "one is found).")
    do_lower_case = _do_lower_case()
    tokenizer = tokenization.FullTokenizer(_vocab_file(), do_lower_case)
    tokenization.validate_case_matches_checkpoint(do_lower_case, FLAGS.init_checkpoint)
    config = checkpoints.find_config(FLAGS.init_checkpoint, FLAGS.bert_config_file)
    if FLAGS.max_seq_length > config.max_position_embeddings:
        raise app.UsageError(
            f"--max_seq_length={FLAGS.max_seq_length} exceeds the model's "
            f"max_position_embeddings={config.max_position_embeddings}")
    if len(tokenizer.vocab) != config.vocab_size:
        raise app.UsageError(
            f"the vocab file has {len(tokenizer.vocab)} tokens but the model's vocab_size "
            f"is {config.vocab_size}: the checkpoint was trained with another vocab")

    training.set_random_seed(FLAGS.seed)
    strategy = distribution.strategy_from_flags()
    if FLAGS.dynamic_padding and isinstance(strategy, tf.distribute.TPUStrategy):
        raise app.UsageError("--dynamic_padding is for CPUs and GPUs: a TPU program needs "
                             "one static sequence length")
    training.set_precision_policy(FLAGS.mixed_precision, strategy)
    training.validate_batch_flags(FLAGS, strategy)
    tf.io.gfile.makedirs(FLAGS.output_dir)

    # Every split this run needs is read and checked before training, so that a
    # missing file or a bad row in dev or test fails now, not after the training.
    train_examples = _examples(processor, "train") if FLAGS.do_train else []
    eval_examples = {split: _examples(processor, split)
                     for split in (processor.eval_splits if FLAGS.do_eval else ())}
    predict_examples = {split: _examples(processor, split)
                        for split in (processor.predict_splits if FLAGS.do_predict else ())}

    num_train_steps, num_warmup_steps = 0, 0
    if FLAGS.do_train:
        num_train_steps = int(len(train_examples) / FLAGS.train_batch_size
                              * FLAGS.num_train_epochs)
        num_warmup_steps = int(num_train_steps * FLAGS.warmup_proportion)
        if num_train_steps < 1:
            # The original failed here too (Estimator.train: max_steps > 0).
            raise app.UsageError(
                f"{len(train_examples)} train examples at --train_batch_size="
                f"{FLAGS.train_batch_size} for --num_train_epochs={FLAGS.num_train_epochs} "
                "make no training step")
    task = ClassificationTask(len(processor.get_labels()), processor.is_regression)
    trainer = training.Trainer(
        task, config, strategy, FLAGS.output_dir, learning_rate=FLAGS.learning_rate,
        num_train_steps=max(num_train_steps, 1), num_warmup_steps=num_warmup_steps,
        optimizer_type=FLAGS.optimizer, bias_correction=FLAGS.adam_bias_correction,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
        iterations_per_loop=FLAGS.iterations_per_loop,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max, jit_compile=FLAGS.jit_compile)
    trainer.restore(FLAGS.init_checkpoint)
    if not trainer.is_chief:
        # Only the chief writes to output_dir; the other workers keep their
        # copies of the records in a folder of their own, deleted at the end.
        records_dir = tempfile.mkdtemp(prefix="bert_tf_records_")
        try:
            _train_evaluate_predict(trainer, records_dir, processor, tokenizer, num_train_steps,
                                    train_examples, eval_examples, predict_examples)
        finally:
            shutil.rmtree(records_dir, ignore_errors=True)
        return
    config.to_json_file(os.path.join(FLAGS.output_dir, "bert_config.json"))
    _train_evaluate_predict(trainer, FLAGS.output_dir, processor, tokenizer, num_train_steps,
                            train_examples, eval_examples, predict_examples)
    if FLAGS.export_dir:
        export.export_classifier(
            FLAGS.export_dir, trainer.encoder, trainer.heads[checkpoints.CLASSIFIER],
            _vocab_file(), do_lower_case, FLAGS.max_seq_length,
            is_regression=processor.is_regression,
            sentence_pairs=processor.tfds_text_keys[1] is not None)


def _train_evaluate_predict(trainer, records_dir, processor, tokenizer, num_train_steps,
                            train_examples, eval_examples, predict_examples):
    """Trains, then evaluates and predicts; only the chief writes result files.

    Args:
      trainer: The training.Trainer, restored.
      records_dir: Where the TFRecords of the splits go.
      processor: The task's glue.DataProcessor.
      tokenizer: A tokenization.FullTokenizer.
      num_train_steps: Optimizer updates to train for.
      train_examples: The train split (empty without --do_train).
      eval_examples: {split: examples} to evaluate (empty without --do_eval).
      predict_examples: {split: examples} to predict (empty without --do_predict).
    """
    if FLAGS.do_train:
        logging.info("Training on %d examples: %d steps, %d warmup.", len(train_examples),
                     num_train_steps, int(num_train_steps * FLAGS.warmup_proportion))
        path = _write_records(records_dir, "train", train_examples, processor, tokenizer)
        micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
        trainer.train(functools.partial(_dataset_fn, path, micro_batch, True,
                                        processor.is_regression),
                      num_train_steps, FLAGS.train_batch_size)

    if eval_examples:
        results = {"global_step": trainer.global_step}
        label_map = {label: i for i, label in enumerate(processor.get_labels())}
        for split, examples in eval_examples.items():
            predictions = _predict(trainer, records_dir, split, examples, processor, tokenizer,
                                   FLAGS.eval_batch_size)
            labels = [e.label if processor.is_regression else label_map[e.label]
                      for e in examples]
            metrics = classifier_data.evaluation_metrics(
                processor.name, predictions, labels, processor.is_regression)
            prefix = f"{split}_" if len(processor.eval_splits) > 1 else ""
            results.update({prefix + k: v for k, v in metrics.items()})
        if trainer.is_chief:
            # Written once, with every split's metrics: a run that fails on the
            # way leaves no results file that looks complete.
            training.write_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)
            for key in sorted(results):
                print(f"{key} = {results[key]}")

    for split, examples in predict_examples.items():
        predictions = _predict(trainer, records_dir, split, examples, processor, tokenizer,
                               FLAGS.predict_batch_size)
        if trainer.is_chief:
            suffix = "" if len(processor.predict_splits) == 1 else f"_{split}"
            glue.write_test_results(
                os.path.join(FLAGS.output_dir, f"test_results{suffix}.tsv"), predictions)
            glue.write_submission(
                os.path.join(FLAGS.output_dir, processor.submission_file(split)),
                processor.name, examples, predictions)

if __name__ == "__main__":
    app.run(main)
