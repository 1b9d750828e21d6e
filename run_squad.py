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
start doc_stride pieces apart (or, with --doc_stride_means=overlap, share
doc_stride pieces, as Hugging Face's tokenizers place them); each question's
answer is the best valid span over every pair of its windows' start and
end pieces (bert_tf/squad/answer_rule.py, the export's rule too).

Outputs in output_dir: train.tf_record and eval.tf_record (the windows),
predictions.json ({question id: answer text}), nbest_predictions.json (the
n_best_size best answers of each question, with their probabilities) and,
for SQuAD 2.0, null_odds.json (each question's null score minus its best
span's). New flags: --do_eval scores the predictions of --predict_file
against its gold answers with the official evaluation script's metrics
(exact_match and f1 for 1.1; exact, f1, HasAns_*, NoAns_* and best_* for
2.0) into eval_results.txt; --export_dir writes a SavedModel that answers a
question about a raw context (a long one read in windows, as here).
"""

import dataclasses

from absl import app, flags

from bert_tf import cli, finetune, squad
from bert_tf.cli import script_flags
from bert_tf.tasks import QuestionAnsweringTask

FLAGS = flags.FLAGS

flags.DEFINE_string("train_file", None, "The SQuAD JSON file to train on (train-v1.1.json, "
                    "train-v2.0.json).")
flags.DEFINE_string("predict_file", None, "The SQuAD JSON file to answer with --do_predict "
                    "and to score with --do_eval (dev-v1.1.json, dev-v2.0.json).")
flags.DEFINE_integer("doc_stride", 128, "Word pieces between the starts of consecutive "
                     "windows of a context too long for one.", lower_bound=1)
flags.DEFINE_integer("max_query_length", 64, "Word pieces kept of each question; a longer "
                     "one is cut (and counted in a warning).", lower_bound=1)
flags.DEFINE_integer("n_best_size", 20, "Candidate answers kept per question in "
                     "nbest_predictions.json (the answer is the best of every valid span).",
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
    "epoch_unit", "windows", ["questions", "windows"],
    "What --num_train_epochs counts. windows (as Hugging Face counts): steps = windows / "
    "train_batch_size x epochs, so each window is seen num_train_epochs times. questions "
    "(the original's): steps = questions / train_batch_size x epochs, so a question cut "
    "into several windows has its windows seen fewer times. See docs/benchmarks.md for "
    "the measured difference.")
flags.DEFINE_enum(
    "doc_stride_means", "step", list(squad.DOC_STRIDE_MEANINGS),
    "How --doc_stride places a long context's windows. step (the original's): windows start "
    "doc_stride pieces apart. overlap (Hugging Face's): consecutive windows share doc_stride "
    "pieces, so they start max_seq_length - question - 3 - doc_stride pieces apart.")
script_flags.define_finetuning_script_flags(padding=False)
# The shared definition's default is run_classifier's 128; SQuAD's is 384,
# as in the original run_squad.py.
FLAGS.set_default("max_seq_length", 384)
flags.adopt_module_key_flags(script_flags)
flags.mark_flags_as_required(["output_dir"])


@flags.multi_flags_validator(["max_seq_length", "max_query_length", "doc_stride",
                              "doc_stride_means"])
def _check_windows(values):
    """Refuses windows without room for the context, or that would not move
    forward, when the flags are parsed (squad.SquadSettings' checks)."""
    try:
        squad.SquadSettings(**values)
    except ValueError as e:
        raise flags.ValidationError(str(e)) from None
    return True


def main(_):
    config = script_flags.finetune_config(FLAGS)
    finetune.check_actions(config)
    if FLAGS.do_train and not FLAGS.train_file:
        raise app.UsageError("--do_train needs --train_file.")
    if (FLAGS.do_predict or FLAGS.do_eval) and not FLAGS.predict_file:
        raise app.UsageError("--do_predict and --do_eval need --predict_file.")
    files, runtime = finetune.start(config)
    # One object for the task and the data: every SquadSettings field is a flag.
    settings = squad.SquadSettings(**{field.name: getattr(FLAGS, field.name)
                                      for field in dataclasses.fields(squad.SquadSettings)})
    task = QuestionAnsweringTask(settings)
    data = squad.SquadData(settings, files.tokenizer(), FLAGS.train_file, FLAGS.predict_file,
                           FLAGS.epoch_unit)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
