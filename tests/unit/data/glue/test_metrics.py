"""Tests for bert_tf.data.metrics: each metric against hand-computed values, and padding."""

import math

import numpy as np
import pytest

from bert_tf.data import glue


def test_metrics_match_hand_computed_values():
    predictions = [1, 1, 0, 0, 1]
    labels = [1, 0, 0, 0, 1]
    # TP 2, FP 1, TN 2, FN 0.
    assert glue.accuracy(predictions, labels) == pytest.approx(0.8)
    assert glue.f1_score(predictions, labels) == pytest.approx(2 * 2 / (2 * 2 + 1 + 0))
    assert glue.matthews_corrcoef(predictions, labels) == pytest.approx(
        (2 * 2 - 1 * 0) / math.sqrt(3 * 2 * 3 * 2))
    # Means 2 and 7/3: covariance 3, variances 2 and 42/9.
    assert glue.pearson_corrcoef([1.0, 2.0, 3.0], [1.0, 2.0, 4.0]) == pytest.approx(
        3 / math.sqrt(2 * 42 / 9))


def test_spearman_gives_ties_their_average_rank():
    # Prediction ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: r = 4.5 / sqrt(4.5 * 5).
    assert glue.spearman_corrcoef([0.1, 0.7, 0.7, 3.0], [1, 2, 3, 4]) == pytest.approx(
        4.5 / math.sqrt(4.5 * 5))
    assert glue.spearman_corrcoef([3, 1, 2], [30, 10, 20]) == pytest.approx(1.0)


def test_degenerate_inputs():
    assert glue.matthews_corrcoef([1, 1, 1, 1], [1, 0, 1, 0]) == 0.0
    assert glue.matthews_corrcoef([0, 0, 0], [0, 0, 0]) == 0.0
    assert glue.f1_score([0, 0], [0, 0]) == 0.0
    assert math.isnan(glue.pearson_corrcoef([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="no real examples"):
        glue.accuracy([1, 0], [1, 0], is_real_example=[0, 0])
    with pytest.raises(ValueError, match="equal length"):
        glue.accuracy([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="only 0 and 1"):
        glue.accuracy([1, 0], [1, 0], is_real_example=[1, 0.5])


def test_three_class_mcc_equals_its_definition():
    predictions = np.array([0, 1, 2, 2, 1, 0, 0])
    labels = np.array([0, 1, 2, 1, 1, 2, 0])
    confusion = np.zeros((3, 3))
    np.add.at(confusion, (labels, predictions), 1)
    t, p, c, s = confusion.sum(1), confusion.sum(0), np.trace(confusion), confusion.sum()
    expected = (c * s - t @ p) / math.sqrt((s * s - p @ p) * (s * s - t @ t))
    assert glue.matthews_corrcoef(predictions, labels) == pytest.approx(expected)


@pytest.mark.parametrize("metric", [glue.accuracy, glue.f1_score, glue.matthews_corrcoef,
                                    glue.pearson_corrcoef, glue.spearman_corrcoef])
def test_padding_examples_change_no_metric(metric):
    predictions = np.array([1, 0, 1, 1, 0, 1])
    labels = np.array([1, 0, 0, 1, 1, 1])
    # Padding that would move every metric if it counted.
    padded_predictions = np.concatenate([predictions, [1, 1, 0]])
    padded_labels = np.concatenate([labels, [0, 0, 1]])
    mask = np.array([1] * 6 + [0] * 3)
    assert metric(padded_predictions, padded_labels, mask) == pytest.approx(
        metric(predictions, labels))
    assert metric(padded_predictions, padded_labels) != pytest.approx(
        metric(predictions, labels))
