"""What a run on labelled data of one's own reads: files, columns, labels, problem type."""

import dataclasses

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


@dataclasses.dataclass(frozen=True)
class LabelledDataConfig:
    """Labelled CSV or TSV files of one's own, and how to read them.

    Each field is named as run_classifier.py's flag that sets it.

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

    train_file: str | None = None
    eval_file: str | None = None
    predict_file: str | None = None
    delimiter: str | None = None
    text_column: str | None = None
    text_b_column: str | None = None
    label_column: str | None = None
    id_column: str | None = None
    problem_type: str = SINGLE_LABEL
    labels: tuple | None = None
    labels_file: str | None = None
    label_separator: str = "|"
    threshold: float = 0.5
