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


def check_label_list(labels, source):
    """Refuses a label list with repeats, empty labels, or labels that would break a line.

    Args:
      labels: The labels, in order.
      source: Where they come from, for the message ("--labels", a path).

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
        if labels.count(label) > 1:
            raise LabelledDataError(f"{source}: the label {label!r} comes more than once")
    return labels


def read_label_file(path, flag):
    """The labels of a file of one label a line (blank lines ignored).

    Args:
      path: The file.
      flag: The flag that named it, for the missing-file error.

    Returns:
      The labels, checked (check_label_list).

    Raises:
      FileNotFoundError, LabelledDataError.
    """
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    with tf.io.gfile.GFile(path) as f:
        labels = [line.strip() for line in f.read().splitlines() if line.strip()]
    return check_label_list(labels, path)


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
