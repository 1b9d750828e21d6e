"""A fine-tuning script run on a finished run's --output_dir takes the run's own settings.

A run folder holds what its model was trained with: bert_config.json and
vocab.txt beside the checkpoints (finetune.create_trainer writes them), and
run_settings.json's "task" and "training data" groups (run_dir.py): the
casing, the task, max_seq_length and the data's other lengths. A command
that does not train (--export_dir, --do_eval, --do_predict alone) on such a
folder takes each of these that has a flag of the same name and was not
given, so that

  python run_classifier.py --task_name=SST-2 --output_dir=RUN --export_dir=EXPORT

exports the model at the length it was trained at, with its config, vocab
and casing. An export fixes its lengths for good: a flag given that
contradicts the training data's is refused, in one line. (Evaluation and
prediction may run at other lengths; the task's own settings, the vocab and
the config are checked against the folder by the run itself.)
"""

import os

import tensorflow as tf
from absl import app

from bert_tf.training import run_dir

# The groups of run_settings.json whose settings are taken: what the model is
# for, and the lengths its inputs were cut to.
_GROUPS = ("task", "training data")
# The data reads a run's labels from its label_list.txt, beside --labels_file.
_NOT_TAKEN = ("labels",)


def _recorded_flags(settings, flag_values):
    """{(group, flag name): value} of the recorded settings that are flags of the script."""
    return {(group, key): value for group in _GROUPS
            for key, value in settings.get(group, {}).items()
            if key in flag_values and key not in _NOT_TAKEN}


def _model_files(output_dir):
    """{flag name: path} of the model files a run folder holds."""
    files = {"bert_config_file": os.path.join(output_dir, "bert_config.json"),
             "vocab_file": os.path.join(output_dir, "vocab.txt")}
    # tf.io.gfile: a run folder may be remote (gs://), as run_dir reads it.
    return {name: path for name, path in files.items() if tf.io.gfile.exists(path)}


def take_finished_run(flag_values):
    """Gives the flags not given the values of the finished run in --output_dir.

    Nothing happens when the command trains (the run itself checks its
    settings against the folder's), or when --output_dir records no run.

    Args:
      flag_values: The parsed absl FlagValues of a fine-tuning script.

    Raises:
      app.UsageError: an export (--export_dir without --do_train) with a flag
        given that contradicts the training data's settings, naming both
        values.
    """
    output_dir = flag_values["output_dir"].value
    if flag_values["do_train"].value or not output_dir:
        return
    settings = run_dir.read_settings(output_dir)
    if "task" not in settings:
        return
    exports = bool(flag_values["export_dir"].value)
    for (group, name), value in _recorded_flags(settings, flag_values).items():
        flag = flag_values[name]
        if not flag.present and group == "task":
            # As if given: where a setting's None lets the library choose
            # (the casing), the run's own choice must win.
            flag.parse(value)
        elif not flag.present:
            # A new default, not a flag given: the data's checks of flags
            # that go together (--label_separator with --problem_type) leave
            # it alone.
            flag.value = value
        elif exports and group == "training data" and flag.value != value:
            raise app.UsageError(
                f"{run_dir.as_flag(name, flag.value)}: {output_dir}'s model was trained with "
                f"{run_dir.as_flag(name, value)}, and an export keeps it: drop the flag")
    if not (flag_values["init_checkpoint"].present or flag_values["bert_config_file"].present):
        for name, path in _model_files(output_dir).items():
            if not flag_values[name].present:
                flag_values[name].parse(path)
