"""Scoring a GLUE task's predictions: its GLUE metrics, and eval_results.txt's numbers.

`compute_metrics` gives the metrics GLUE reports for a task, as its processor
lists them (`DataProcessor.metrics`); `main_metric` the one that ranks
models. `evaluation_metrics` gives what run_classifier.py writes to
eval_results.txt: the original's eval_loss and eval_accuracy, and the task's
GLUE metrics other than accuracy, so that no number appears twice under two
names.

These live apart from the metric functions (`bert_tf.data.metrics`) because
they look the task up: the processors import the metric functions, and these
import the processors.
"""

import numpy as np

from bert_tf.data.glue.processors import get_processor
from bert_tf.data.metrics import accuracy


def compute_metrics(task_name, predictions, labels, is_real_example=None):
    """The metrics GLUE reports for a task.

    CoLA: mcc; STS-B: pearson, spearman; MRPC and QQP: f1, accuracy; AX: mcc;
    every other task: accuracy.

    Args:
      task_name: A name get_processor accepts.
      predictions: Class ids [n], or class scores [n, num_labels] whose
        argmax is taken; for STS-B, scores [n] or [n, 1].
      labels: True class ids [n]; for STS-B, true scores [n].
      is_real_example: Optional [n] 0/1 mask; examples with 0 (the padding
        that fills the last batch) count in no metric.

    Returns:
      A dict from metric name to float.
    """
    processor = get_processor(task_name)
    predictions = np.asarray(predictions)
    if processor.is_regression:
        predictions = predictions.reshape(predictions.shape[0])
    elif predictions.ndim == 2:
        predictions = predictions.argmax(axis=-1)
    return {name: function(predictions, labels, is_real_example)
            for name, function in processor.metrics}


def evaluation_metrics(task_name, predictions, labels, is_regression):
    """eval_loss, eval_accuracy (classification) and the task's other GLUE metrics.

    The original run_classifier.py's eval_results.txt keys, eval_loss and
    eval_accuracy, then `compute_metrics` without its "accuracy", which would
    repeat eval_accuracy under another name: f1 for MRPC and QQP, mcc for
    CoLA, pearson and spearman for STS-B, nothing more for the other tasks.

    Args:
      task_name: A name get_processor accepts.
      predictions: [n, num_labels] probabilities, or [n] (or [n, 1])
        regression scores.
      labels: [n] class ids, or float scores for regression.
      is_regression: Which of the two.

    Returns:
      A dict of floats. The loss is the mean cross-entropy (or squared
      error) that training minimizes.
    """
    predictions = np.asarray(predictions, np.float64)
    labels = np.asarray(labels)
    if is_regression:
        # [n, 1] scores (the head's logits) would broadcast against [n] labels.
        predictions = predictions.reshape(labels.shape)
        results = {"eval_loss": float(np.mean((predictions - labels) ** 2))}
    else:
        chosen = predictions[np.arange(len(labels)), labels]
        results = {"eval_loss": float(-np.mean(np.log(np.maximum(chosen, 1e-12)))),
                   "eval_accuracy": accuracy(predictions.argmax(-1), labels)}
    glue_metrics = compute_metrics(task_name, predictions, labels)
    results.update({name: value for name, value in glue_metrics.items() if name != "accuracy"})
    return results


def main_metric(task_name):
    """The key of evaluation_metrics' dict that ranks a task's models: its first GLUE metric.

    mcc for CoLA and AX, f1 for MRPC and QQP, pearson for STS-B,
    eval_accuracy (evaluation_metrics' name of accuracy) for every other task.

    Args:
      task_name: A name get_processor accepts.

    Returns:
      A key of evaluation_metrics()'s result.
    """
    name = get_processor(task_name).metrics[0][0]
    return "eval_accuracy" if name == "accuracy" else name
