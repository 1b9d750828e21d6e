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
end pieces (bert_tf/data/squad/answer_rule.py, the export's rule too).

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


from absl import app, flags

from bert_tf import cli, finetune
from bert_tf.cli import config_flags, script_flags
from bert_tf.data import squad
from bert_tf.tasks import QuestionAnsweringTask

FLAGS = flags.FLAGS

flags.DEFINE_string("train_file", None, "The SQuAD JSON file to train on (train-v1.1.json, "
                    "train-v2.0.json).")
flags.DEFINE_string("predict_file", None, "The SQuAD JSON file to answer with --do_predict "
                    "and to score with --do_eval (dev-v1.1.json, dev-v2.0.json).")
flags.DEFINE_enum(
    "epoch_unit", "windows", ["questions", "windows"],
    "What --num_train_epochs counts. windows (as Hugging Face counts): steps = windows / "
    "train_batch_size x epochs, so each window is seen num_train_epochs times. questions "
    "(the original's): steps = questions / train_batch_size x epochs, so a question cut "
    "into several windows has its windows seen fewer times. See docs/benchmarks.md for "
    "the measured difference.")
# The windows' and answers' settings, which the task and the data share.
SQUAD_FLAGS = config_flags.define(squad.SquadSettings)
# The shared default is run_classifier's 128; SQuAD's is 384, as in the
# original run_squad.py.
CONFIG_FLAGS = script_flags.finetuning_flags(
    padding=False, defaults={"max_seq_length": squad.SquadSettings.max_seq_length})
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(config_flags)
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
    config = CONFIG_FLAGS.config()
    finetune.check_actions(config)
    if config.run.do_train and not FLAGS.train_file:
        raise app.UsageError("--do_train needs --train_file.")
    if (config.do_predict or config.run.do_eval) and not FLAGS.predict_file:
        raise app.UsageError("--do_predict and --do_eval need --predict_file.")
    files, runtime = finetune.start(config)
    # One object for the task and the data, of the model's length.
    settings = SQUAD_FLAGS.config(max_seq_length=config.model.max_seq_length)
    task = QuestionAnsweringTask(settings)
    data = squad.SquadData(settings, files.tokenizer(), FLAGS.train_file, FLAGS.predict_file,
                           FLAGS.epoch_unit)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
