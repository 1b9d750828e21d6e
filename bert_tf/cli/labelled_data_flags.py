"""run_classifier.py's flags for labelled CSV or TSV files of one's own, and their config.

define_flags() defines them; config() checks them and turns them into a
labelled_data.LabelledDataConfig; given() says whether a run names any of
them (run_classifier.py then reads one's own data instead of a GLUE task).
"""

from absl import app, flags

from bert_tf import labelled_data
from bert_tf.cli import path_flags

# The flags that say a run is on data of one's own.
FILE_FLAGS = ("train_file", "eval_file", "predict_file")
_FLAGS = FILE_FLAGS + ("delimiter", "text_column", "text_b_column", "label_column",
                       "id_column", "problem_type", "labels", "labels_file",
                       "label_separator", "threshold")


def define_flags(flag_values=flags.FLAGS):
    """Defines the flags of data of one's own.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    defaults = labelled_data.LabelledDataConfig
    flags.DEFINE_string(
        "train_file", None, "Your own training data instead of a GLUE --task_name: a .csv or "
        ".tsv file whose header row names its columns (see --text_column, --label_column).",
        **fv)
    flags.DEFINE_string("eval_file", None, "Your own dev data for --do_eval and "
                        "--eval_every_steps, with the columns of --train_file.", **fv)
    flags.DEFINE_string(
        "predict_file", None, "Your own data to label with --do_predict: the text "
        "column(s) of --train_file; a label column is not read. Writes test_results.tsv and "
        "predictions.csv (or .tsv): each row's id, text, predicted label name(s) and "
        "probabilities.", **fv)
    flags.DEFINE_string(
        "delimiter", None, "The files' column separator (\\t or tab for a tab); default: by "
        "extension, .csv comma (quoted cells as spreadsheets write them), .tsv tab (no "
        "quoting).", **fv)
    flags.DEFINE_string(
        "text_column", None, "The text's column; default: the first of "
        f"{', '.join(labelled_data.config.TEXT_COLUMNS)} in the header.", **fv)
    flags.DEFINE_string(
        "text_b_column", None, "The second text's column, for pairs; default: "
        f"{' or '.join(labelled_data.config.TEXT_B_COLUMNS)} when the header has it, else "
        "single texts.", **fv)
    flags.DEFINE_string(
        "label_column", None, "The label's column; default: "
        f"{' or '.join(labelled_data.config.LABEL_COLUMNS)}.", **fv)
    flags.DEFINE_string(
        "id_column", None, "The column that names each row in predictions.csv; default: "
        f"{', '.join(labelled_data.config.ID_COLUMNS)} when the header has one, else the "
        "row's line number.", **fv)
    flags.DEFINE_enum(
        "problem_type", defaults.problem_type, labelled_data.PROBLEM_TYPES,
        "single_label: one label per row, softmax and cross-entropy (eval_results: "
        "accuracy, macro F1, each label's precision, recall and F1; the best model by "
        "accuracy). multi_label: any number of labels per row in one cell, separated by "
        "--label_separator; one sigmoid per label, binary cross-entropy, a label predicted "
        "at --threshold (micro and macro F1, exact match, each label's scores; the best "
        "by micro F1). regression: a number per row, squared error (eval_loss is the mean "
        "squared error, pearson, spearman; the best by pearson). Hugging Face calls them "
        "single_label_classification, multi_label_classification and regression.", **fv)
    flags.DEFINE_list(
        "labels", None, "The labels, comma-separated, in the model's order; default: "
        "--labels_file's, else the training file's sorted (as numbers when all are "
        "integers), else --output_dir/label_list.txt, which every training run writes and "
        "every later run must match.", **fv)
    flags.DEFINE_string("labels_file", None, "A file of the labels, one a line, in the "
                        "model's order (labels holding commas).", **fv)
    flags.DEFINE_string("label_separator", defaults.label_separator,
                        "multi_label: what separates the labels of one cell.", **fv)
    flags.DEFINE_float(
        "threshold", defaults.threshold, "multi_label: a label is predicted when its "
        "probability is at least this, in eval_results, predictions.csv and the export.",
        lower_bound=0.0, upper_bound=1.0, **fv)
    path_flags.set_role("eval_file", path_flags.INPUT, flag_values)
    path_flags.set_role("labels_file", path_flags.INPUT, flag_values)


def given(flag_values):
    """Whether the command line names any flag of data of one's own.

    Args:
      flag_values: The parsed flags.

    Returns:
      A bool.
    """
    return any(flag_values[name].present for name in _FLAGS)


def config(flag_values):
    """The LabelledDataConfig of the flags, checked.

    Args:
      flag_values: The parsed flags.

    Returns:
      A labelled_data.LabelledDataConfig.

    Raises:
      app.UsageError: --labels with --labels_file, or multi-label flags for
        another problem type.
    """
    if flag_values.labels and flag_values.labels_file:
        raise app.UsageError("Give --labels or --labels_file, not both.")
    problem_type = flag_values.problem_type
    if problem_type != labelled_data.MULTI_LABEL:
        for name in ("threshold", "label_separator"):
            if flag_values[name].present:
                raise app.UsageError(f"--{name} is for --problem_type=multi_label, not "
                                     f"{problem_type}")
    if problem_type == labelled_data.REGRESSION and (flag_values.labels
                                                     or flag_values.labels_file):
        raise app.UsageError("--problem_type=regression predicts a number: it has no "
                             "--labels or --labels_file")
    if not flag_values.label_separator:
        raise app.UsageError("--label_separator must not be empty")
    return labelled_data.LabelledDataConfig(
        train_file=flag_values.train_file, eval_file=flag_values.eval_file,
        predict_file=flag_values.predict_file, delimiter=flag_values.delimiter,
        text_column=flag_values.text_column, text_b_column=flag_values.text_b_column,
        label_column=flag_values.label_column, id_column=flag_values.id_column,
        problem_type=problem_type,
        labels=tuple(flag_values.labels) if flag_values.labels else None,
        labels_file=flag_values.labels_file, label_separator=flag_values.label_separator,
        threshold=flag_values.threshold)
