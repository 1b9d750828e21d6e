"""Fine-tunes BERT for token tagging (named entities, CoNLL-2003): train, evaluate, predict.

  python run_ner.py --data_dir=$CONLL_DIR --init_checkpoint=$BERT_BASE_DIR \\
    --do_train=true --do_eval=true --do_predict=true --max_seq_length=128 \\
    --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=3.0 \\
    --output_dir=/tmp/ner_output/ --export_dir=/tmp/ner_model

--data_dir holds train.txt, valid.txt (or dev.txt) and test.txt: one word a
line with its tag in the last column ("word TAG", "word POS chunk TAG" or
"word TAG 0"), a blank line between sentences, -DOCSTART- lines between
documents. The first word piece of each word carries its tag; later pieces
are ignored in the loss and in prediction. Each sentence is encoded alone
(no context from its neighbours); one longer than max_seq_length - 2 pieces
is cut into overlapping windows, and each word is tagged in exactly one.

The predict file's tag column, when it has one, is not used: a tag the
model was not trained with is no error there.

Outputs in output_dir: label_list.txt (the tags, in id order, which
prediction reads back), eval_results.txt (entity precision, recall and F1
overall and per type, as conlleval counts them; token accuracy; loss) and,
with --do_predict, <name>_predictions.txt: the predict file with one more
column, the predicted tag, for conlleval-style tools. --export_dir writes a
SavedModel that finds the entities in raw sentences (see predict_entities.py).
"""

from absl import app, flags

from bert_tf import cli, finetune
from bert_tf.cli import config_flags, script_flags
from bert_tf.data import conll
from bert_tf.tasks import TaggingTask

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with train.txt, valid.txt (or dev.txt) and "
                    "test.txt in CoNLL layout.")
flags.DEFINE_string("predict_file", None, "The file --do_predict tags; default: "
                    "<data_dir>/test.txt. Any file of the same layout; the tag column may "
                    "be absent.")
flags.DEFINE_list("labels", None, "The tags, in id order; default: those of train.txt "
                  "when training, else output_dir/label_list.txt.")
CONLL_FLAGS = config_flags.define(conll.ConllSettings)
CONFIG_FLAGS = script_flags.finetuning_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(config_flags)
flags.mark_flags_as_required(["output_dir"])


def main(_):
    config = CONFIG_FLAGS.config()
    finetune.check_actions(config)
    if (config.run.do_train or config.run.do_eval) and not FLAGS.data_dir:
        raise app.UsageError("--do_train and --do_eval need --data_dir.")
    # One object for the task and the data; it refuses a stride that does not fit.
    settings = CONLL_FLAGS.config(max_seq_length=config.model.max_seq_length)
    files, runtime = finetune.start(config)
    data = conll.ConllData(settings, files.tokenizer(), FLAGS.data_dir, FLAGS.predict_file,
                           FLAGS.labels, config.run.output_dir)
    # The task's tags come from the training file: read before the task.
    data.read(finetune.splits_to_read(data, config))
    task = TaggingTask(data.labels(), settings)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
