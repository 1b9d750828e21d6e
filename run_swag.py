"""Fine-tunes BERT on SWAG (multiple choice): train, evaluate, predict, export.

The same command line as run_classifier.py, on SWAG's CSV files:

  python run_swag.py --do_train=true --do_eval=true --do_predict=true \\
    --data_dir=$SWAG_DIR --vocab_file=$BERT_BASE_DIR/vocab.txt \\
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \\
    --train_batch_size=16 --learning_rate=2e-5 --num_train_epochs=3.0 \\
    --output_dir=/tmp/swag_output/ --export_dir=/tmp/swag_model

--data_dir holds train.csv, val.csv (--do_eval: eval_results.txt with
eval_accuracy) and test.csv (--do_predict: predictions.csv, each question's
chosen ending and every ending's probability, in input order). Each question
is packed as one [CLS] sent1 [SEP] sent2 + ending [SEP] sequence per ending.
--export_dir writes a SavedModel that takes raw text (a context and its
endings); predict_choices.py runs it on a file.
"""

from absl import app, flags

from bert_tf import cli, finetune
from bert_tf.cli import config_flags, script_flags
from bert_tf.data import swag
from bert_tf.tasks import MultipleChoiceTask

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with SWAG's train.csv, val.csv and test.csv.")
SWAG_FLAGS = config_flags.define(swag.SwagSettings)
CONFIG_FLAGS = script_flags.finetuning_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(config_flags)
flags.mark_flags_as_required(["output_dir"])


def main(_):
    config = CONFIG_FLAGS.config()
    export_only = finetune.check_actions(config)
    if not (FLAGS.data_dir or export_only):
        raise app.UsageError("Give --data_dir (SWAG's .csv files).")
    files, runtime = finetune.start(config)
    # One object for the task and the data.
    settings = SWAG_FLAGS.config(max_seq_length=config.model.max_seq_length)
    task = MultipleChoiceTask(settings)
    data = swag.SwagData(settings, files.tokenizer(), FLAGS.data_dir)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
