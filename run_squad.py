"""Fine-tunes BERT for question answering on SQuAD 1.1 or 2.0: train, predict, evaluate, export.

The original README's command lines run unchanged, e.g. SQuAD 1.1:

  python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \\
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_train=True \\
    --train_file=$SQUAD_DIR/train-v1.1.json --do_predict=True \\
    --predict_file=$SQUAD_DIR/dev-v1.1.json --train_batch_size=12 \\
    --learning_rate=3e-5 --num_train_epochs=2.0 --max_seq_length=384 \\
    --doc_stride=128 --output_dir=/tmp/squad_base/

and SQuAD 2.0 with --version_2_with_negative=True (and a tuned
--null_score_diff_threshold). Each context is cut into windows of
max_seq_length pieces ([CLS] question [SEP] part of the context [SEP]) that
start doc_stride pieces apart; each question's answer is the best span over
its windows, as the original chose it.

Outputs in output_dir: train.tf_record and eval.tf_record (the windows),
predictions.json ({question id: answer text}), nbest_predictions.json (the
n_best_size best answers of each question, with their probabilities) and,
for SQuAD 2.0, null_odds.json (each question's null score minus its best
span's). New flags: --do_eval scores the predictions of --predict_file
against its gold answers with the official evaluation script's metrics
(exact_match and f1 for 1.1; exact, f1, HasAns_*, NoAns_* and best_* for
2.0) into eval_results.txt; --export_dir writes a SavedModel that answers a
question about a raw context (one window: a longer context is cut).
"""

import os
import random

from absl import app, flags, logging

from bert_tf import cli, distribution, finetune, input_pipeline, squad, training
from bert_tf.tasks import QuestionAnsweringTask
from bert_tf.tasks.question_answering import SquadReferences

FLAGS = flags.FLAGS

flags.DEFINE_string("train_file", None, "The SQuAD JSON file to train on (train-v1.1.json, "
                    "train-v2.0.json).")
flags.DEFINE_string("predict_file", None, "The SQuAD JSON file to answer with --do_predict "
                    "and to score with --do_eval (dev-v1.1.json, dev-v2.0.json).")
flags.DEFINE_integer("doc_stride", 128, "Word pieces between the starts of consecutive "
                     "windows of a context too long for one.", lower_bound=1)
flags.DEFINE_integer("max_query_length", 64, "Word pieces kept of each question; a longer "
                     "one is cut (and counted in a warning).", lower_bound=1)
flags.DEFINE_integer("n_best_size", 20, "Candidate answers kept per question, in "
                     "nbest_predictions.json and in the search for the best one.",
                     lower_bound=1)
flags.DEFINE_integer("max_answer_length", 30, "The maximum length of an answer that can be "
                     "generated, in word pieces (start and end are predicted apart).",
                     lower_bound=1)
flags.DEFINE_bool("verbose_logging", False, "Log every answer whose text could not be mapped "
                  "back onto the context. A number of these are expected on SQuAD.")
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: some questions have no "
                  "answer.")
flags.DEFINE_float("null_score_diff_threshold", 0.0, "SQuAD 2.0: predict no answer when the "
                   "null score minus the best span's is greater than this.")
flags.DEFINE_enum(
    "epoch_unit", "questions", ["questions", "windows"],
    "What --num_train_epochs counts. questions (the original's): steps = questions / "
    "train_batch_size x epochs, so a question cut into several windows has its windows "
    "seen fewer than num_train_epochs times each. windows (as Hugging Face counts): steps = "
    "windows / train_batch_size x epochs. See docs/benchmarks.md for the measured "
    "difference.")
finetune.define_finetune_flags()
training.define_training_flags()
distribution.define_tpu_flags()
# The shared definition's default is run_classifier's 128; SQuAD's is 384,
# as in the original run_squad.py.
FLAGS.set_default("max_seq_length", 384)
flags.adopt_module_key_flags(finetune)
flags.adopt_module_key_flags(training)
flags.adopt_module_key_flags(distribution)
flags.mark_flags_as_required(["output_dir"])
flags.register_multi_flags_validator(
    ["max_seq_length", "max_query_length"],
    lambda f: f["max_seq_length"] > f["max_query_length"] + 3,
    "--max_seq_length must be greater than --max_query_length + 3 ([CLS], [SEP], [SEP]), "
    "to leave room for the context")

# The original shuffled the training questions once, with this seed, before
# cutting them into windows (so the shuffle buffer need not be large).
_TRAIN_SHUFFLE_SEED = 12345


def _read_examples(path, is_training):
    """The questions of a SQuAD json; what was skipped is logged as warnings."""
    examples, stats = squad.read_squad_examples(path, is_training,
                                                FLAGS.version_2_with_negative)
    if stats.get("skipped_answer_mismatch"):
        logging.warning("%s: skipped %d questions whose answer text is not found where its "
                        "answer_start points (the original skipped them too)", path,
                        stats["skipped_answer_mismatch"])
    if stats.get("skipped_unanswerable"):
        logging.warning("%s: skipped %d questions without an answer: only a "
                        "--version_2_with_negative model can answer them", path,
                        stats["skipped_unanswerable"])
    return examples


def _windows(examples, tokenizer, is_training):
    """The questions' windows (squad.InputFeatures); cut questions are logged."""
    features, stats = squad.convert_examples_to_features(
        examples, tokenizer, FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length,
        is_training)
    if stats.get("truncated_questions"):
        logging.warning("%d questions are longer than --max_query_length=%d pieces and were "
                        "cut", stats["truncated_questions"], FLAGS.max_query_length)
    if stats.get("answer_out_of_window"):
        # Expected with long contexts: as in the original, such a window
        # learns "no answer here" ([CLS]).
        logging.info("%d of %d training windows miss their question's answer and point at "
                     "[CLS]", stats["answer_out_of_window"], len(features))
    return features


def main(_):
    predicting = FLAGS.do_predict or FLAGS.do_eval
    export_only = finetune.check_actions(FLAGS)
    if FLAGS.do_train and not FLAGS.train_file:
        raise app.UsageError("--do_train needs --train_file.")
    if predicting and not FLAGS.predict_file:
        raise app.UsageError("--do_predict and --do_eval need --predict_file.")
    # A bad file or flag raises an error that names it; cli.run prints it as
    # one line. Every file this run needs is read and cut into windows before
    # the model is built, so that a bad predict file fails before training.
    files = finetune.model_files_from_flags(FLAGS)
    task = QuestionAnsweringTask(
        FLAGS.max_seq_length, FLAGS.version_2_with_negative, FLAGS.n_best_size,
        FLAGS.max_answer_length, files.do_lower_case, FLAGS.null_score_diff_threshold,
        FLAGS.max_query_length, FLAGS.verbose_logging, FLAGS.doc_stride)
    strategy = finetune.setup(FLAGS)
    tokenizer = files.tokenizer()
    num_train_steps, num_warmup_steps = 0, 0
    if FLAGS.do_train:
        train_examples = _read_examples(FLAGS.train_file, is_training=True)
        random.Random(_TRAIN_SHUFFLE_SEED).shuffle(train_examples)
        train_windows = _windows(train_examples, tokenizer, is_training=True)
        # The original counted questions, not windows (--epoch_unit).
        per_epoch = len(train_windows if FLAGS.epoch_unit == "windows" else train_examples)
        num_train_steps, num_warmup_steps = finetune.train_steps(
            per_epoch, FLAGS.train_batch_size, FLAGS.num_train_epochs,
            FLAGS.warmup_proportion)
    if predicting:
        predict_examples = _read_examples(FLAGS.predict_file, is_training=False)
        predict_windows = _windows(predict_examples, tokenizer, is_training=False)
        if not predict_windows:
            raise ValueError(f"{FLAGS.predict_file}: no question to predict")

    trainer = finetune.create_trainer(task, files, strategy, training.TrainingConfig.from_flags(
        FLAGS, max(num_train_steps, 1), num_warmup_steps, strategy), trained_required=export_only)

    def input_fn(path, batch_size, is_training):
        """The trainer's input function for one records file."""
        features = task.feature_specs() if is_training else task.prediction_feature_specs()
        return finetune.dataset_fn(input_pipeline.finetuning_dataset, path, batch_size,
                                   is_training, features=features)

    with finetune.records_dir(trainer) as records_dir:
        if FLAGS.do_train:
            path = os.path.join(records_dir, "train.tf_record")
            squad.write_tfrecord(path, train_windows, FLAGS.max_seq_length, is_training=True)
            logging.info("Training on %d questions in %d windows: %d steps, %d warmup.",
                         len(train_examples), len(train_windows), num_train_steps,
                         num_warmup_steps)
            del train_windows
            micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
            trainer.train(input_fn(path, micro_batch, True), num_train_steps,
                          FLAGS.train_batch_size)
        if predicting:
            path = os.path.join(records_dir, "eval.tf_record")
            # Padded with is_real_example = 0 records to full batches, which
            # a TPU needs; finetune.predict drops them again.
            squad.write_tfrecord(path, predict_windows, FLAGS.max_seq_length, is_training=False,
                                 pad_to_multiple_of=FLAGS.predict_batch_size)
            logging.info("Predicting %d questions in %d windows.", len(predict_examples),
                         len(predict_windows))
            predictions = finetune.predict(
                trainer, input_fn(path, FLAGS.predict_batch_size, False))
            references = SquadReferences(predict_examples, predict_windows, FLAGS.predict_file)
            finetune.write_outputs(trainer, predictions, references)
            if FLAGS.do_eval:
                finetune.write_eval_results(trainer, task.score(predictions, references))
    if FLAGS.export_dir and trainer.is_chief:
        finetune.export_model(FLAGS.export_dir, trainer, files, FLAGS.max_seq_length,
                              FLAGS.export_shapes)


if __name__ == "__main__":
    cli.run(main)
