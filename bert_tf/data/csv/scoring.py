"""Scoring predictions on data of one's own: eval_results.txt's numbers, named by label.

single_label: eval_loss (the mean cross-entropy training minimizes),
  eval_accuracy, eval_macro_f1 (the mean of the labels' F1), and each
  label's eval_<label>_precision, _recall and _f1.
multi_label: eval_loss (the mean binary cross-entropy over examples and
  labels), eval_micro_precision, _recall and _f1 (over every example-label
  decision), eval_macro_f1, eval_exact_match (the share of examples whose
  labels are all right), and each label's precision, recall and F1; a label
  is predicted when its probability is at least the threshold.
regression: eval_loss (the mean squared error), pearson and spearman, as
  GLUE's STS-B.

Each also gives truncated_examples: how many examples were longer than
max_seq_length and cut. A precision or F1 without any predicted or true
example of the label is 0.
"""

import numpy as np

from bert_tf.data.csv.settings import MULTI_LABEL, REGRESSION
from bert_tf.data.metrics import accuracy, pearson_corrcoef, spearman_corrcoef

# Probabilities are clipped this far from 0 and 1 before their log is taken.
_EPSILON = 1e-12

# The main metric of each problem type: the one that says which model is best.
MAIN_METRICS = {"single_label": "eval_accuracy", MULTI_LABEL: "eval_micro_f1",
                REGRESSION: "pearson"}


def _ratio(numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator, np.float64),
                     where=denominator > 0)


def label_scores(predicted, true):
    """Precision, recall and F1 of each label, from 0/1 decisions.

    Args:
      predicted: bool [n, num_labels]: the label was predicted.
      true: bool [n, num_labels]: the example has the label.

    Returns:
      (precision, recall, f1), each float64 [num_labels].
    """
    hits = np.sum(predicted & true, axis=0).astype(np.float64)
    precision = _ratio(hits, np.sum(predicted, axis=0).astype(np.float64))
    recall = _ratio(hits, np.sum(true, axis=0).astype(np.float64))
    return precision, recall, _ratio(2 * precision * recall, precision + recall)


def _per_label(labels, precision, recall, f1):
    """{eval_<label>_precision: ..., _recall, _f1} of each label."""
    scores = {}
    for index, label in enumerate(labels):
        scores[f"eval_{label}_precision"] = float(precision[index])
        scores[f"eval_{label}_recall"] = float(recall[index])
        scores[f"eval_{label}_f1"] = float(f1[index])
    return scores


def single_label_metrics(probabilities, label_ids, labels):
    """eval_loss, eval_accuracy, eval_macro_f1 and each label's scores.

    Args:
      probabilities: float [n, num_labels].
      label_ids: int [n], the true labels' indices.
      labels: The label names, in index order.

    Returns:
      A dict of floats.
    """
    probabilities = np.asarray(probabilities, np.float64)
    label_ids = np.asarray(label_ids, np.int64)
    chosen = probabilities[np.arange(len(label_ids)), label_ids]
    predicted_ids = probabilities.argmax(-1)
    one_hot = np.eye(len(labels), dtype=bool)
    precision, recall, f1 = label_scores(one_hot[predicted_ids], one_hot[label_ids])
    return {"eval_loss": float(-np.mean(np.log(np.maximum(chosen, _EPSILON)))),
            "eval_accuracy": accuracy(predicted_ids, label_ids),
            "eval_macro_f1": float(np.mean(f1)),
            **_per_label(labels, precision, recall, f1)}


def multi_label_metrics(probabilities, targets, labels, threshold):
    """eval_loss, micro and macro scores, exact match and each label's scores.

    Args:
      probabilities: float [n, num_labels], each label's own probability.
      targets: 0/1 [n, num_labels], the labels each example has.
      labels: The label names, in index order.
      threshold: A label is predicted at this probability or more.

    Returns:
      A dict of floats.
    """
    probabilities = np.asarray(probabilities, np.float64)
    true = np.asarray(targets) > 0.5
    predicted = probabilities >= threshold
    clipped = np.clip(probabilities, _EPSILON, 1 - _EPSILON)
    loss = -np.mean(np.where(true, np.log(clipped), np.log(1 - clipped)))
    precision, recall, f1 = label_scores(predicted, true)
    hits = float(np.sum(predicted & true))
    micro_precision = hits / max(float(np.sum(predicted)), 1.0)
    micro_recall = hits / max(float(np.sum(true)), 1.0)
    micro_sum = micro_precision + micro_recall
    return {"eval_loss": float(loss),
            "eval_micro_precision": micro_precision,
            "eval_micro_recall": micro_recall,
            "eval_micro_f1": 2 * micro_precision * micro_recall / micro_sum if micro_sum else 0.0,
            "eval_macro_f1": float(np.mean(f1)),
            "eval_exact_match": float(np.mean(np.all(predicted == true, axis=1))),
            **_per_label(labels, precision, recall, f1)}


def regression_metrics(scores, targets):
    """eval_loss (mean squared error), pearson and spearman.

    Args:
      scores: float [n] (or [n, 1]), the predicted values.
      targets: float [n], the true values.

    Returns:
      A dict of floats; the correlations are NaN where either side is constant.
    """
    targets = np.asarray(targets, np.float64)
    scores = np.asarray(scores, np.float64).reshape(targets.shape)
    return {"eval_loss": float(np.mean((scores - targets) ** 2)),
            "pearson": pearson_corrcoef(scores, targets),
            "spearman": spearman_corrcoef(scores, targets)}


def score(predictions, references):
    """The metrics of a dev set's predictions (see the module docstring).

    Args:
      predictions: The task's per-example predictions, in the references'
        order: probabilities [n, num_labels], or scores [n] for regression.
      references: A records.LabelledReferences with the true labels.

    Returns:
      A dict of floats, with truncated_examples.
    """
    if references.problem_type == REGRESSION:
        metrics = regression_metrics(predictions, references.targets)
    elif references.problem_type == MULTI_LABEL:
        metrics = multi_label_metrics(predictions, references.targets, references.labels,
                                      references.threshold)
    else:
        metrics = single_label_metrics(predictions, references.targets, references.labels)
    metrics["truncated_examples"] = references.truncated
    return metrics
