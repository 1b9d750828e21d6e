"""The labels of a run on data of one's own: where they come from, their order, their cells.

The model's outputs are the labels in one order, fixed by the first run:
--labels, else --labels_file, else the training file's labels sorted (as
numbers when every label is an integer, so that 2 comes before 10). A
training run writes them to output_dir/label_list.txt, one a line, and a
later run without --do_train reads them back from there.
"""

import os

import tensorflow as tf

from bert_tf import io_utils
from bert_tf.data.csv.reading import LabelledDataError
from bert_tf.data.csv.settings import MULTI_LABEL, REGRESSION

# Where a training run keeps its labels, in the model's order (run_ner.py's name too).
LABEL_FILE = "label_list.txt"
# What multi-label cells are often separated by, when not by --label_separator.
OTHER_SEPARATORS = (",", ";")
# A training file of this many rows, none of whose labels is in two rows, is no
# classification's: its label column is most likely an id or a text.
DISTINCT_LABEL_ROWS = 10


def sorted_labels(labels):
    """Labels in the order a training file's get: as numbers when all are integers.

    Args:
      labels: Label strings, repeats allowed.

    Returns:
      The distinct labels, sorted.
    """
    distinct = set(labels)

    def is_integer(label):
        return label.lstrip("-").isdigit()

    if distinct and all(is_integer(label) for label in distinct):
        return sorted(distinct, key=int)
    return sorted(distinct)


def check_label_list(labels, source, separator=None):
    """Refuses a label list with repeats, empty labels, or labels that would break a line
    or a multi-label cell.

    Args:
      labels: The labels, in order.
      source: Where they come from, for the message ("--labels", a path).
      separator: multi_label's label separator, which no label may hold (a
        cell holding it is several labels); None for other problem types.

    Returns:
      The labels, as a list.

    Raises:
      LabelledDataError: naming the source and the label.
    """
    labels = list(labels)
    if not labels:
        raise LabelledDataError(f"{source}: no labels")
    for label in labels:
        if not label.strip():
            raise LabelledDataError(f"{source}: an empty label")
        if any(char in label for char in "\t\r\n"):
            raise LabelledDataError(f"{source}: the label {label!r} holds a tab or a line "
                                    "break")
        if separator is not None and separator in label:
            raise LabelledDataError(
                f"{source}: the label {label!r} holds --label_separator={separator}, which "
                "separates a cell's labels: rename it, or give another --label_separator")
        if labels.count(label) > 1:
            raise LabelledDataError(f"{source}: the label {label!r} comes more than once")
    return labels


def read_label_file(path, flag, separator=None):
    """The labels of a file of one label a line (blank lines ignored).

    Args:
      path: The file.
      flag: The flag that named it, for the missing-file error.
      separator: As check_label_list() takes it.

    Returns:
      The labels, checked (check_label_list).

    Raises:
      FileNotFoundError, LabelledDataError.
    """
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    with tf.io.gfile.GFile(path) as f:
        labels = [line.strip() for line in f.read().splitlines() if line.strip()]
    return check_label_list(labels, path, separator)


def write_label_file(output_dir, labels):
    """Writes output_dir/LABEL_FILE, which a later run without --do_train reads back.

    Args:
      output_dir: The run's folder.
      labels: The labels, in the model's order.
    """
    with io_utils.atomic_write(os.path.join(output_dir, LABEL_FILE), "w") as f:
        f.write("".join(f"{label}\n" for label in labels))


def parse_cell(cell, problem_type, separator):
    """A label cell's value, for the problem type.

    Args:
      cell: The cell's text.
      problem_type: One of settings.PROBLEM_TYPES.
      separator: What separates a multi-label cell's labels.

    Returns:
      A label string (single_label), a tuple of distinct label strings in the
      cell's order (multi_label), or a float (regression).

    Raises:
      ValueError: an empty cell, an empty label between separators, or a
        regression value that is not a finite number; the caller adds where.
    """
    value = cell.strip()
    if not value:
        advice = (": an example with none of the labels needs a label of its own, e.g. none"
                  if problem_type == MULTI_LABEL else "")
        raise ValueError(f"empty label cell{advice}")
    if problem_type == REGRESSION:
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a number (--problem_type=regression)") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} is not a finite number (--problem_type=regression)")
        return number
    if problem_type == MULTI_LABEL:
        parts = [part.strip() for part in value.split(separator)]
        if not all(parts):
            raise ValueError(f"an empty label in {value!r} (labels separated by "
                             f"--label_separator={separator!r})")
        return tuple(dict.fromkeys(parts))
    return value


def check_separators(cells, problem_type, separator, known=()):
    """Refuses label cells written for another problem type or with another separator.

    A single-label cell that holds the multi-label separator ("billing|bug")
    and multi-label cells that never hold the separator but a comma or a
    semicolon ("account,praise") would each be read as a class of its own,
    which the scores and predictions would then name without a hint.

    Args:
      cells: (line, cell) of each row of a file's label column.
      problem_type: One of settings.PROBLEM_TYPES.
      separator: multi_label's label separator (--label_separator).
      known: Labels given by --labels or --labels_file: a cell that is one of
        them is that label, whatever it holds.

    Returns:
      None when the cells fit; else (line, message) of the first cell that
      does not, the message naming the flag to give.
    """
    if problem_type == REGRESSION:
        return None
    if problem_type != MULTI_LABEL:
        for line, cell in cells:
            if separator in cell and cell.strip() not in known:
                return line, (f"{cell.strip()!r} holds {separator!r}, which separates the "
                              "labels of a row with several: give --problem_type=multi_label")
        return None
    if any(separator in cell for _, cell in cells):
        return None
    for line, cell in cells:
        for other in OTHER_SEPARATORS:
            if other in cell and cell.strip() not in known:
                return line, (f"{cell.strip()!r}: no cell of the file holds --label_separator="
                              f"{separator}, but this one holds {other!r}: give "
                              f"--label_separator={other} (or, for labels that hold it, "
                              "--labels_file)")
    return None


def check_label_variety(examples_labels, min_rows=DISTINCT_LABEL_ROWS):
    """Whether a training file's label column looks like labels: some label is in two rows.

    A column with a different value in every row (an id, a text) would
    train one class per row, and score nothing.

    Args:
      examples_labels: Each row's labels, a tuple each.
      min_rows: Fewer rows than this are not judged.

    Returns:
      True when some label is in two rows, or there are fewer than min_rows.
    """
    if len(examples_labels) < min_rows:
        return True
    seen = set()
    for labels in examples_labels:
        if seen.intersection(labels):
            return True
        seen.update(labels)
    return False
