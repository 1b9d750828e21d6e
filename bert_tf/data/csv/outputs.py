"""The prediction files of data of one's own, with the labels' names.

--do_predict writes two files to output_dir, each only once it is complete:

  test_results.tsv: the original run_classifier.py's, one line of
    probabilities per example (in the labels' order, label_list.txt's), or
    of the predicted value for regression;
  predictions.csv (or .tsv, as the predict file): a header, then one row per
    example: its id (the id column's value, else the line it starts on),
    its text(s), the prediction in the label column (the label's name; for
    multi_label every label at or above the threshold, joined by the label
    separator, empty for none; the value for regression), and for
    classification one column of probability per label, named by it (by
    probability_<label> each where a label is named like another column:
    probability_columns()). The columns keep the predict file's names, so
    that the file reads back as data.
"""

import csv
import os

import numpy as np

from bert_tf import io_utils
from bert_tf.data.csv.settings import MULTI_LABEL, REGRESSION
from bert_tf.data.test_results import write_test_results


def predicted_labels(probabilities, references):
    """The prediction of each example, as the predictions file writes it.

    Args:
      probabilities: [n, num_labels] probabilities, or [n] values for regression.
      references: A records.LabelledReferences.

    Returns:
      A list of strings: label names (multi_label: joined by the separator)
      or values.
    """
    if references.problem_type == REGRESSION:
        return [str(float(value)) for value in np.asarray(probabilities).reshape(-1)]
    labels = references.labels
    if references.problem_type == MULTI_LABEL:
        return [references.separator.join(label for label, p in zip(labels, row, strict=True)
                                          if p >= references.threshold)
                for row in probabilities]
    return [labels[index] for index in np.asarray(probabilities).argmax(-1)]


def probability_columns(labels, columns):
    """The names of the probability columns: each label's, unless one is taken.

    A label's name is the easiest header to read, and the one a user looks
    for. But a label named like one of the file's other columns (id, text,
    label) would make a header that names a column twice, which
    csv.DictReader reads as one column and pandas renames: then every
    probability column is named probability_<label>, so that the file keeps
    one naming throughout.

    Args:
      labels: The label names, in the model's order.
      columns: The file's other columns' names.

    Returns:
      A list of column names, one per label.
    """
    if set(labels) & set(columns):
        return [f"probability_{label}" for label in labels]
    return list(labels)


def write_predictions(path, predictions, references):
    """Writes the predictions file (see the module docstring).

    Args:
      path: The output file.
      predictions: The task's predictions, in the references' order.
      references: A records.LabelledReferences of the predicted split.
    """
    columns = references.columns
    header = [columns["id"] or "id", columns["text"]]
    if columns["text_b"] is not None:
        header.append(columns["text_b"])
    header.append(columns["label"] or "label")
    classifies = references.problem_type != REGRESSION
    if classifies:
        header += probability_columns(references.labels, header)
    quoting = ({"quoting": csv.QUOTE_NONE, "escapechar": "\\"} if references.delimiter == "\t"
               else {})
    with io_utils.atomic_write(path, "w") as f:
        writer = csv.writer(f, delimiter=references.delimiter, lineterminator="\n", **quoting)
        writer.writerow(header)
        answers = predicted_labels(predictions, references)
        for index, (example, answer) in enumerate(
                zip(references.examples, answers, strict=True)):
            row = [example.guid, example.text_a]
            if columns["text_b"] is not None:
                row.append(example.text_b)
            row.append(answer)
            if classifies:
                row += [f"{p:.6f}" for p in predictions[index]]
            writer.writerow(row)


def write_outputs(predictions, references, output_dir):
    """Writes test_results.tsv and the predictions file of a predicted split.

    Args:
      predictions: The task's predictions ({"predictions": ...}'s array), in
        the references' order.
      references: A records.LabelledReferences.
      output_dir: The folder to write them in.
    """
    predictions = np.asarray(predictions)
    write_test_results(os.path.join(output_dir, "test_results.tsv"), predictions)
    extension = ".tsv" if references.delimiter == "\t" else ".csv"
    write_predictions(os.path.join(output_dir, f"predictions{extension}"), predictions,
                      references)
