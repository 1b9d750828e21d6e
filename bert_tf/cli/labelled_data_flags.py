"""run_classifier.py's flags for labelled CSV or TSV files of one's own, and their config.

define_flags() defines them, from the settings of a
csv.LabelledDataConfig; config() checks them and builds the
config; given() says whether a run names any of them (run_classifier.py then
reads one's own data instead of a GLUE task).
"""

from absl import app, flags

from bert_tf.cli import config_flags, path_flags
from bert_tf.data import csv


def define_flags(flag_values=flags.FLAGS):
    """Defines the flags of data of one's own: every setting of a LabelledDataConfig.

    Args:
      flag_values: The absl FlagValues to define them in.

    Returns:
      A config_flags.ConfigFlags of csv.LabelledDataConfig.
    """
    defined = config_flags.define(csv.LabelledDataConfig, flag_values=flag_values)
    path_flags.set_role("eval_file", path_flags.INPUT, flag_values)
    path_flags.set_role("labels_file", path_flags.INPUT, flag_values)
    return defined


def given(defined):
    """Whether the command line names any flag of data of one's own.

    Args:
      defined: define_flags()'s ConfigFlags, parsed.

    Returns:
      A bool.
    """
    return any(defined.flag_values[field.name].present for field in defined.fields())


def config(defined):
    """The LabelledDataConfig of the flags, checked.

    Args:
      defined: define_flags()'s ConfigFlags, parsed.

    Returns:
      A csv.LabelledDataConfig.

    Raises:
      app.UsageError: --labels with --labels_file, or multi-label flags for
        another problem type.
    """
    data_config = defined.config()
    flag_values = defined.flag_values
    if data_config.labels and data_config.labels_file:
        raise app.UsageError("Give --labels or --labels_file, not both.")
    problem_type = data_config.problem_type
    if problem_type != csv.MULTI_LABEL:
        for name in ("threshold", "label_separator"):
            if flag_values[name].present:
                raise app.UsageError(f"--{name} is for --problem_type=multi_label, not "
                                     f"{problem_type}")
    if problem_type == csv.REGRESSION and (data_config.labels
                                                     or data_config.labels_file):
        raise app.UsageError("--problem_type=regression predicts a number: it has no "
                             "--labels or --labels_file")
    if not data_config.label_separator:
        raise app.UsageError("--label_separator must not be empty")
    return data_config
