"""The metrics GLUE scores its tasks with, in numpy only; one's own CSV data (csv/) too.

Every function takes 1-D predictions and labels of equal length and an
optional is_real_example mask; examples with mask 0 (the padding that fills
the last batch) are dropped first, so that they count in no metric. Which
task reports which metric is its processor's `metrics`
(`bert_tf.data.glue.processors`); `bert_tf.data.glue.scoring` applies them.
"""

import math

import numpy as np


def _real(predictions, labels, is_real_example):
    """Checks shapes and drops the padding examples.

    Args:
      predictions: 1-D array-like.
      labels: 1-D array-like of the same length.
      is_real_example: None, or a 1-D array-like of 0/1 (or bools) of the
        same length: 0 marks a padding example.

    Returns:
      (predictions, labels) as numpy arrays of the real examples.

    Raises:
      ValueError: Shapes differ, the mask holds other values than 0 and 1, or
        no real example is left.
    """
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.ndim != 1 or predictions.shape != labels.shape:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} must be "
                         "1-D and of equal length")
    if is_real_example is not None:
        mask = np.asarray(is_real_example)
        if mask.shape != labels.shape:
            raise ValueError(f"is_real_example {mask.shape} must match labels {labels.shape}")
        if not np.isin(mask, (0, 1)).all():
            raise ValueError("is_real_example must hold only 0 and 1")
        mask = mask.astype(bool)
        predictions, labels = predictions[mask], labels[mask]
    if labels.size == 0:
        raise ValueError("no real examples to score")
    return predictions, labels


def accuracy(predictions, labels, is_real_example=None):
    """The fraction of examples whose prediction equals the label.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [0, 1].
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    return float(np.mean(predictions == labels))


def f1_score(predictions, labels, is_real_example=None):
    """Binary F1 with class 1 as the positive class, as GLUE scores MRPC and QQP.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      2 TP / (2 TP + FP + FN); 0.0 when there is no positive prediction or
      label at all, where F1 is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    true_positives = np.sum((predictions == 1) & (labels == 1))
    false_positives = np.sum((predictions == 1) & (labels != 1))
    false_negatives = np.sum((predictions != 1) & (labels == 1))
    denominator = 2 * true_positives + false_positives + false_negatives
    return float(2 * true_positives / denominator) if denominator else 0.0


def matthews_corrcoef(predictions, labels, is_real_example=None):
    """Matthews correlation, as GLUE scores CoLA (and, over 3 classes, AX).

    The multi-class form (Gorodkin's R_K), which equals the binary
    (TP TN - FP FN) / sqrt(...) for two classes.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [-1, 1]; 0.0 when predictions or labels are constant, where
      the correlation is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    n = labels.size
    _, classes = np.unique(np.concatenate([predictions, labels]), return_inverse=True)
    num_classes = classes.max() + 1
    # Float64 throughout: the products below pass int64's range near n = 50k.
    predicted = np.bincount(classes[:n], minlength=num_classes).astype(np.float64)
    true = np.bincount(classes[n:], minlength=num_classes).astype(np.float64)
    correct = float(np.sum(predictions == labels))
    covariance = correct * n - predicted @ true
    variance_predicted = float(n) * n - predicted @ predicted
    variance_true = float(n) * n - true @ true
    denominator = math.sqrt(variance_predicted * variance_true)
    return float(covariance / denominator) if denominator else 0.0


def pearson_corrcoef(predictions, labels, is_real_example=None):
    """Pearson correlation, as GLUE scores STS-B.

    Args:
      predictions: 1-D predicted scores.
      labels: 1-D true scores.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [-1, 1]; NaN when either side is constant, where the
      correlation is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    x = predictions.astype(np.float64) - predictions.mean()
    y = labels.astype(np.float64) - labels.mean()
    denominator = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y / denominator) if denominator else float("nan")


def _average_ranks(values):
    """1-based ranks of values, ties sharing the mean of the ranks they span."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    first = last - counts + 1
    return ((first + last) / 2.0)[inverse]


def spearman_corrcoef(predictions, labels, is_real_example=None):
    """Spearman rank correlation with average ranks for ties, as GLUE scores STS-B.

    Args:
      predictions: 1-D predicted scores.
      labels: 1-D true scores.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      The Pearson correlation of the ranks; NaN when either side is constant.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    return pearson_corrcoef(_average_ranks(predictions), _average_ranks(labels))
