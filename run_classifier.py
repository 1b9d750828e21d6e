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

import os

from absl import app, flags, logging

from bert_tf import classifier_data, cli, distribution, finetune, glue, input_pipeline, training
from bert_tf.tasks import ClassificationTask
from bert_tf.tasks.classification import ClassificationReferences

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with the task's .tsv files (GLUE layout).")
flags.DEFINE_string(
    "tfds_name", None, "Read the task from TensorFlow Datasets instead, e.g. glue/mrpc.")
flags.DEFINE_string(
    "task_name", None, f"The task, case-insensitive: {', '.join(sorted(glue.PROCESSORS))}.")
finetune.define_finetune_flags()
finetune.define_padding_flags()
training.define_training_flags()
distribution.define_tpu_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(finetune)
flags.adopt_module_key_flags(training)
flags.adopt_module_key_flags(distribution)
flags.mark_flags_as_required(["task_name", "output_dir"])


def main(_):
    export_only = finetune.check_actions(FLAGS)
    if not (FLAGS.data_dir or FLAGS.tfds_name or export_only):
        raise app.UsageError("Give --data_dir (GLUE .tsv files) or --tfds_name.")
    try:
        processor = glue.get_processor(FLAGS.task_name)
        if FLAGS.tfds_name and glue.get_processor(FLAGS.tfds_name).name != processor.name:
            raise ValueError(f"--tfds_name={FLAGS.tfds_name} is not the task "
                             f"--task_name={FLAGS.task_name}")
        padding = finetune.padding_args(FLAGS)
        files = finetune.model_files_from_flags(FLAGS)
        strategy = finetune.setup(FLAGS, static_shapes=not FLAGS.dynamic_padding)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    # Every split this run needs is read and checked before training, so that a
    # missing file or a bad row in dev or test fails now, not after the training.
    splits = {split: glue.read_split(processor, split, FLAGS.data_dir, FLAGS.tfds_name)
              for split in ((["train"] if FLAGS.do_train else [])
                            + list(processor.eval_splits if FLAGS.do_eval else [])
                            + list(processor.predict_splits if FLAGS.do_predict else []))}
    num_train_steps, num_warmup_steps = 0, 0
    if FLAGS.do_train:
        try:
            num_train_steps, num_warmup_steps = finetune.train_steps(
                len(splits["train"]), FLAGS.train_batch_size, FLAGS.num_train_epochs,
                FLAGS.warmup_proportion)
        except finetune.FinetuneError as e:
            raise app.UsageError(str(e)) from None

    task = ClassificationTask(len(processor.get_labels()), processor.is_regression,
                              glue_task=processor.name,
                              sentence_pairs=processor.tfds_text_keys[1] is not None,
                              max_seq_length=FLAGS.max_seq_length,
                              label_list=processor.get_labels())
    trainer = finetune.create_trainer(task, files, strategy, training.TrainingConfig.from_flags(
        FLAGS, max(num_train_steps, 1), num_warmup_steps, strategy), trained_required=export_only)
    tokenizer = files.tokenizer()

    def input_fn(records_dir, split, batch_size, is_training):
        """Writes one split's records; their input function for the trainer."""
        path = os.path.join(records_dir, f"{split}.tf_record")
        # A TPU needs every batch full: padding examples (is_real_example = 0)
        # fill the last batch of a dev or test set, and are dropped from results.
        classifier_data.write_tfrecord(
            path, splits[split], processor.get_labels(), FLAGS.max_seq_length, tokenizer,
            processor.is_regression, None if is_training else batch_size)
        return finetune.dataset_fn(
            input_pipeline.classification_dataset, path, batch_size, is_training,
            max_seq_length=FLAGS.max_seq_length, is_regression=processor.is_regression,
            **padding)

    with finetune.records_dir(trainer) as records_dir:
        if FLAGS.do_train:
            logging.info("Training on %d examples: %d steps, %d warmup.", len(splits["train"]),
                         num_train_steps, num_warmup_steps)
            micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
            trainer.train(input_fn(records_dir, "train", micro_batch, True), num_train_steps,
                          FLAGS.train_batch_size)
        if FLAGS.do_eval:
            results = {}
            for split in processor.eval_splits:
                metrics, _ = finetune.evaluate(
                    trainer, input_fn(records_dir, split, FLAGS.eval_batch_size, False),
                    ClassificationReferences(processor.label_ids(splits[split])))
                prefix = f"{split}_" if len(processor.eval_splits) > 1 else ""
                results.update({prefix + k: v for k, v in metrics.items()})
            finetune.write_eval_results(trainer, results)
        for split in processor.predict_splits if FLAGS.do_predict else ():
            predictions = finetune.predict(
                trainer, input_fn(records_dir, split, FLAGS.predict_batch_size, False))
            finetune.write_outputs(trainer, predictions,
                                   ClassificationReferences(examples=splits[split], split=split))
    if FLAGS.export_dir and trainer.is_chief:
        finetune.export_model(FLAGS.export_dir, trainer, files, FLAGS.max_seq_length,
                              FLAGS.export_shapes)


if __name__ == "__main__":
    cli.run(main)
