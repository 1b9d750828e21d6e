"""Fine-tunes BERT on a GLUE task or on your own CSV or TSV: train, evaluate, predict, export.

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

Your own data instead of a GLUE task: --train_file, --eval_file and
--predict_file, each a .csv or .tsv with a header row, without --task_name:

  python run_classifier.py --train_file=tickets.csv --eval_file=dev.csv \\
    --predict_file=new.csv --text_column=text --label_column=label \\
    --do_train=true --do_eval=true --do_predict=true \\
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --output_dir=/tmp/tickets \\
    --export_dir=/tmp/tickets_model

--problem_type=multi_label reads several labels per cell (--label_separator)
and regression a number. The labels (--labels, --labels_file, else the
training file's, sorted, else the label_list.txt of --output_dir or of the
run folder --init_checkpoint names) are written to output_dir/label_list.txt;
every output names them: eval_results.txt's per-label scores, predictions.csv, the
export's "labels" output and predict_text.py's lines.
"""

from absl import app, flags

from bert_tf import cli, finetune
from bert_tf.cli import config_flags, labelled_data_flags, script_flags
from bert_tf.data import csv, glue
from bert_tf.tasks import ClassificationTask, MultiLabelTask

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with the task's .tsv files (GLUE layout).")
flags.DEFINE_string(
    "tfds_name", None, "Read the task from TensorFlow Datasets instead, e.g. glue/mrpc.")
flags.DEFINE_string(
    "task_name", None, f"The GLUE task, case-insensitive: {', '.join(sorted(glue.PROCESSORS))}; "
    "leave it out for your own data (--train_file, --eval_file, --predict_file).")
DATA_FLAGS = labelled_data_flags.define_flags()
CONFIG_FLAGS = script_flags.finetuning_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(config_flags)
flags.mark_flags_as_required(["output_dir"])


def main(_):
    config = CONFIG_FLAGS.config()
    export_only = finetune.check_actions(config)
    if not FLAGS.task_name:
        if not (labelled_data_flags.given(DATA_FLAGS) or export_only):
            raise app.UsageError("Give --task_name (a GLUE task), or --train_file, "
                                 "--eval_file or --predict_file (your own CSV or TSV).")
        own_data_main(config)
        return
    if labelled_data_flags.given(DATA_FLAGS):
        raise app.UsageError("--task_name reads a GLUE task; --train_file, --eval_file, "
                             "--predict_file and their column and label flags your own "
                             "data: give one or the other.")
    if not (FLAGS.data_dir or FLAGS.tfds_name or export_only):
        raise app.UsageError("Give --data_dir (GLUE .tsv files) or --tfds_name.")
    processor = glue.get_processor(FLAGS.task_name)
    if FLAGS.tfds_name and glue.get_processor(FLAGS.tfds_name).name != processor.name:
        raise ValueError(f"--tfds_name={FLAGS.tfds_name} is not the task "
                         f"--task_name={FLAGS.task_name}")
    files, runtime = finetune.start(config)
    task = ClassificationTask(len(processor.get_labels()), processor.is_regression,
                              sentence_pairs=processor.tfds_text_keys[1] is not None,
                              max_seq_length=config.model.max_seq_length,
                              label_list=processor.get_labels())
    data = glue.GlueData(processor, files.tokenizer(), config.model.max_seq_length, FLAGS.data_dir,
                         FLAGS.tfds_name)
    finetune.run(config, task, data, files, runtime)


def own_data_main(config):
    """Fine-tunes on your own CSV or TSV files (labelled_data)."""
    if FLAGS.data_dir or FLAGS.tfds_name:
        raise app.UsageError("--data_dir and --tfds_name read a GLUE task: give --task_name.")
    data_config = labelled_data_flags.config(DATA_FLAGS)
    files, runtime = finetune.start(config)
    data = csv.LabelledData(data_config, files.tokenizer(), config.model.max_seq_length,
                            config.run.output_dir,
                            finetune.init_run_folder(config.model.init_checkpoint))
    splits = finetune.splits_to_read(data, config)
    data.check_files_read(splits)
    # The labels may come from the training file: read before the task.
    data.read(splits)
    labels = data.labels()
    if data_config.problem_type == csv.MULTI_LABEL:
        task = MultiLabelTask(labels, config.model.max_seq_length, data_config.threshold,
                              data.sentence_pairs, data_config.label_separator)
    else:
        regression = data_config.problem_type == csv.REGRESSION
        task = ClassificationTask(len(labels), regression, sentence_pairs=data.sentence_pairs,
                                  max_seq_length=config.model.max_seq_length,
                                  label_list=labels or None)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
