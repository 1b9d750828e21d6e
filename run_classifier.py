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

from absl import app, flags

from bert_tf import cli, finetune, glue
from bert_tf.cli import script_flags
from bert_tf.tasks import ClassificationTask

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder with the task's .tsv files (GLUE layout).")
flags.DEFINE_string(
    "tfds_name", None, "Read the task from TensorFlow Datasets instead, e.g. glue/mrpc.")
flags.DEFINE_string(
    "task_name", None, f"The task, case-insensitive: {', '.join(sorted(glue.PROCESSORS))}.")
script_flags.define_finetuning_script_flags()
# Show the shared flags in --help, not only --helpfull.
flags.adopt_module_key_flags(script_flags)
flags.mark_flags_as_required(["task_name", "output_dir"])


def main(_):
    config = script_flags.finetune_config(FLAGS)
    export_only = finetune.check_actions(config)
    if not (FLAGS.data_dir or FLAGS.tfds_name or export_only):
        raise app.UsageError("Give --data_dir (GLUE .tsv files) or --tfds_name.")
    processor = glue.get_processor(FLAGS.task_name)
    if FLAGS.tfds_name and glue.get_processor(FLAGS.tfds_name).name != processor.name:
        raise ValueError(f"--tfds_name={FLAGS.tfds_name} is not the task "
                         f"--task_name={FLAGS.task_name}")
    files, runtime = finetune.start(config)
    task = ClassificationTask(len(processor.get_labels()), processor.is_regression,
                              sentence_pairs=processor.tfds_text_keys[1] is not None,
                              max_seq_length=config.max_seq_length,
                              label_list=processor.get_labels())
    data = glue.GlueData(processor, files.tokenizer(), config.max_seq_length, FLAGS.data_dir,
                         FLAGS.tfds_name)
    finetune.run(config, task, data, files, runtime)


if __name__ == "__main__":
    cli.run(main)
