"""Tests for bert_tf.data.glue.scoring: compute_metrics, and evaluation_metrics' eval_results."""

import math

import numpy as np
import pytest

from bert_tf.data import glue


def test_compute_metrics_reports_each_tasks_glue_metrics():
    probabilities = np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6], [0.7, 0.3]])
    labels = np.array([1, 0, 0, 0])
    assert set(glue.compute_metrics("CoLA", probabilities, labels)) == {"mcc"}
    mrpc = glue.compute_metrics("mrpc", probabilities, labels)
    assert mrpc == pytest.approx({"f1": 2 / 3, "accuracy": 0.75})
    assert set(glue.compute_metrics("qqp", probabilities, labels)) == {"f1", "accuracy"}
    for task in ("sst-2", "qnli", "rte", "wnli", "mnli", "xnli"):
        assert set(glue.compute_metrics(task, probabilities, labels)) == {"accuracy"}
    scores = glue.compute_metrics("sts-b", [[1.0], [2.0], [2.5], [4.0], [9.0]],
                                  [1.0, 2.0, 3.0, 4.0, 0.0], is_real_example=[1, 1, 1, 1, 0])
    assert set(scores) == {"pearson", "spearman"}
    assert scores["spearman"] == pytest.approx(1.0)


# evaluation_metrics, against numbers worked out by hand. Four examples:
# predicted classes 0, 1, 0, 1 for labels 0, 1, 1, 1.
PROBABILITIES = [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]
LABELS = [0, 1, 1, 1]
# Cross-entropy of the true class; 3 of 4 right.
LOSS = -(math.log(0.9) + math.log(0.8) + math.log(0.4) + math.log(0.7)) / 4
ACCURACY = 0.75
# TP = 2, FP = 0, FN = 1, TN = 1.
F1 = 2 * 2 / (2 * 2 + 0 + 1)
MCC = (2 * 1 - 0 * 1) / math.sqrt((2 + 0) * (2 + 1) * (1 + 0) * (1 + 1))


@pytest.mark.parametrize("task,expected", [
    ("mrpc", {"f1": F1}),
    ("qqp", {"f1": F1}),
    ("cola", {"mcc": MCC}),
    ("sst-2", {}),
    ("rte", {}),
])
def test_evaluation_metrics_classification(task, expected):
    results = glue.evaluation_metrics(task, PROBABILITIES, LABELS, False)
    assert set(results) == {"eval_loss", "eval_accuracy", *expected}
    assert results["eval_loss"] == pytest.approx(LOSS, abs=1e-12)
    assert results["eval_accuracy"] == pytest.approx(ACCURACY)
    for name, value in expected.items():
        assert results[name] == pytest.approx(value, abs=1e-12), name
    assert all(isinstance(v, float) for v in results.values())


def test_evaluation_metrics_three_classes():
    probabilities = [[0.1, 0.7, 0.2], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]]
    results = glue.evaluation_metrics("mnli", probabilities, [1, 2, 2], False)
    assert results == pytest.approx({
        "eval_loss": -(math.log(0.7) + math.log(0.25) + math.log(0.6)) / 3,
        "eval_accuracy": 2 / 3})


@pytest.mark.parametrize("shape", [(4,), (4, 1)])
def test_evaluation_metrics_regression(shape):
    scores = np.array([1.0, 2.0, 3.0, 10.0]).reshape(shape)
    labels = [1.0, 2.0, 3.0, 4.0]
    results = glue.evaluation_metrics("sts-b", scores, labels, True)
    assert set(results) == {"eval_loss", "pearson", "spearman"}
    # Mean squared error: only the last score is off, by 6.
    assert results["eval_loss"] == pytest.approx(36 / 4)
    # Centred: scores (-3, -2, -1, 6), labels (-1.5, -0.5, 0.5, 1.5).
    assert results["pearson"] == pytest.approx(14 / math.sqrt(50 * 5))
    # The ranks agree exactly.
    assert results["spearman"] == pytest.approx(1.0)


def test_evaluation_metrics_loss_stays_finite_for_a_zero_probability():
    results = glue.evaluation_metrics("sst-2", [[1.0, 0.0]], [1], False)
    # Clipped at 1e-12 rather than infinite.
    assert results["eval_loss"] == pytest.approx(-math.log(1e-12))


def test_evaluation_metrics_gives_each_number_once():
    # compute_metrics' accuracy is eval_accuracy: eval_results.txt holds it once.
    results = glue.evaluation_metrics("mrpc", PROBABILITIES, LABELS, False)
    assert set(results) == {"eval_accuracy", "eval_loss", "f1"}
    assert glue.compute_metrics("mrpc", PROBABILITIES, LABELS)["accuracy"] == pytest.approx(
        results["eval_accuracy"])
    for task in glue.PROCESSORS:
        is_regression = glue.get_processor(task).is_regression
        labels = [1.0, 2.0, 3.0, 4.0] if is_regression else LABELS
        predictions = [0.5, 2.0, 2.5, 4.5] if is_regression else PROBABILITIES
        assert "accuracy" not in glue.evaluation_metrics(task, predictions, labels,
                                                         is_regression), task
