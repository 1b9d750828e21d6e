"""What a run on labelled data of one's own reads: files, columns, labels, problem type."""

import dataclasses

from bert_tf.settings import setting

SINGLE_LABEL = "single_label"
MULTI_LABEL = "multi_label"
REGRESSION = "regression"
# In the order --help lists them; Hugging Face calls them single_label_classification,
# multi_label_classification and regression (BertConfig.problem_type).
PROBLEM_TYPES = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)
HF_PROBLEM_TYPES = {SINGLE_LABEL: "single_label_classification",
                    MULTI_LABEL: "multi_label_classification", REGRESSION: "regression"}

# Header names taken when a column is not named by a flag, first match wins.
TEXT_COLUMNS = ("text", "sentence", "text_a", "sentence1")
TEXT_B_COLUMNS = ("text_b", "sentence2")
LABEL_COLUMNS = ("label", "labels")
ID_COLUMNS = ("id", "guid", "idx", "index")

# What the delimiter is, by a file's extension, when --delimiter is not given.
DELIMITERS = {".csv": ",", ".tsv": "\t"}


def _labels(values):
    """--labels as the config holds them: a tuple, or None when not given."""
    return tuple(values) if values else None


@dataclasses.dataclass(frozen=True)
class LabelledDataConfig:
    """Labelled CSV or TSV files of one's own, and how to read them.

    Each setting is run_classifier.py's flag of the same name, with its
    default and help (config_flags generates the flags).

    Attributes:
      train_file, eval_file, predict_file: The files of --do_train, --do_eval
        and --do_predict, each with a header row. The predict file's label
        column, when it has one, is not read.
      delimiter: The column separator; None: by extension (.csv comma, .tsv
        tab).
      text_column: The first text's column; None: the first of TEXT_COLUMNS
        the header has.
      text_b_column: The second text's column, for pairs; None: the first of
        TEXT_B_COLUMNS the header has, else single texts.
      label_column: None: the first of LABEL_COLUMNS the header has.
      id_column: The column that names each example in the outputs; None:
        the first of ID_COLUMNS the header has, else the row's line.
      problem_type: One of PROBLEM_TYPES.
      labels: The labels, in the model's order; None: labels_file's, else the
        training file's (sorted), else a training run's label_list.txt in
        output_dir.
      labels_file: A file of one label a line, instead of labels.
      label_separator: What separates a multi-label cell's labels.
      threshold: A multi-label prediction is every label whose probability is
        at least this.
    """

    train_file: str | None = setting(
        None, "Your own training data instead of a GLUE --task_name: a .csv or .tsv file whose "
        "header row names its columns (see --text_column, --label_column).")
    eval_file: str | None = setting(
        None, "Your own dev data for --do_eval and --eval_every_steps, with the columns of "
        "--train_file.")
    predict_file: str | None = setting(
        None, "Your own data to label with --do_predict: the text column(s) of --train_file; "
        "a label column is not read. Writes test_results.tsv and predictions.csv (or .tsv): "
        "each row's id, text, predicted label name(s) and probabilities.")
    delimiter: str | None = setting(
        None, "The files' column separator (\\t or tab for a tab); default: by extension, .csv "
        "comma (quoted cells as spreadsheets write them), .tsv tab (no quoting).")
    text_column: str | None = setting(
        None, f"The text's column; default: the first of {', '.join(TEXT_COLUMNS)} in the "
        "header.")
    text_b_column: str | None = setting(
        None, "The second text's column, for pairs; default: "
        f"{' or '.join(TEXT_B_COLUMNS)} when the header has it, else single texts.")
    label_column: str | None = setting(
        None, f"The label's column; default: {' or '.join(LABEL_COLUMNS)}.")
    id_column: str | None = setting(
        None, "The column that names each row in predictions.csv; default: "
        f"{', '.join(ID_COLUMNS)} when the header has one, else the row's line number.")
    problem_type: str = setting(
        SINGLE_LABEL,
        "single_label: one label per row, softmax and cross-entropy (eval_results: "
        "accuracy, macro F1, each label's precision, recall and F1; the best model by "
        "accuracy). multi_label: any number of labels per row in one cell, separated by "
        "--label_separator; one sigmoid per label, binary cross-entropy, a label predicted "
        "at --threshold (micro and macro F1, exact match, each label's scores; the best "
        "by micro F1). regression: a number per row, squared error (eval_loss is the mean "
        "squared error, pearson, spearman; the best by pearson). Hugging Face calls them "
        "single_label_classification, multi_label_classification and regression.",
        choices=PROBLEM_TYPES)
    labels: tuple | None = setting(
        None, "The labels, comma-separated, in the model's order; default: --labels_file's, "
        "else the training file's sorted (as numbers when all are integers), else "
        "--output_dir/label_list.txt, which every training run writes and every later run "
        "must match.", parse=_labels)
    labels_file: str | None = setting(
        None, "A file of the labels, one a line, in the model's order (labels holding "
        "commas).")
    label_separator: str = setting(
        "|", "multi_label: what separates the labels of one cell.")
    threshold: float = setting(
        0.5, "multi_label: a label is predicted when its probability is at least this, in "
        "eval_results, predictions.csv and the export; strictly between 0 and 1.",
        # At 0 every label is predicted for every row, at 1 none: neither is a model's answer.
        check=lambda value: 0 < value < 1,
        check_message="--threshold must be strictly between 0 and 1: at 0 every label is "
        "predicted for every row, at 1 none")
