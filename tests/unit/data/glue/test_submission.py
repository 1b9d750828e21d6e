"""Tests for bert_tf.data.glue.outputs: test_results.tsv and GLUE submission files."""

import os

import numpy as np
import pytest

from bert_tf.data import glue
from bert_tf.data.glue import InputExample
from tests import helpers

FIXTURES = os.path.join(helpers.FIXTURES, "glue")


def _dir(name):
    """The fixture folder of a task."""
    return os.path.join(FIXTURES, name)


def test_write_test_results_writes_real_rows_as_the_original(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = np.array([[0.25, 0.75], [0.5, 0.5], [0.125, 0.875]], np.float32)
    assert glue.write_test_results(path, probabilities, is_real_example=[1, 1, 0]) == 2
    assert open(path).read() == "0.25\t0.75\n0.5\t0.5\n"
    assert os.listdir(tmp_path) == ["test_results.tsv"]


def test_write_test_results_failure_leaves_no_file(tmp_path):
    path = tmp_path / "test_results.tsv"
    # The third row is short: the writer has written two rows when it fails.
    with pytest.raises(ValueError, match="row 3"):
        glue.write_test_results(str(path), [[0.1, 0.9], [0.2, 0.8], [1.0]])
    assert os.listdir(tmp_path) == []
    path.write_text("previous run\n")
    with pytest.raises(ValueError, match="row 3"):
        glue.write_test_results(str(path), [[0.1, 0.9], [0.2, 0.8], [1.0]])
    assert os.listdir(tmp_path) == ["test_results.tsv"]
    assert path.read_text() == "previous run\n"


def test_write_submission_classification(tmp_path):
    examples = glue.get_processor("mnli").get_test_examples(_dir("MNLI"), "test_mismatched")
    path = str(tmp_path / "MNLI-mm.tsv")
    probabilities = [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]]
    assert glue.write_submission(path, "mnli", examples, probabilities, [1, 1, 0]) == 2
    assert open(path).read() == "index\tprediction\n0\tneutral\n1\tcontradiction\n"
    path = str(tmp_path / "MRPC.tsv")
    examples = glue.get_processor("mrpc").get_test_examples(_dir("MRPC"))
    glue.write_submission(path, "MRPC", examples, np.array([1, 0]))
    assert open(path).read() == "index\tprediction\n0\t1\n1\t0\n"


def test_write_submission_clips_sts_b_scores(tmp_path):
    examples = [InputExample("test-0", "a", "b"), InputExample("test-1", "c", "d"),
                InputExample("test-2", "e", "f")]
    path = str(tmp_path / "STS-B.tsv")
    glue.write_submission(path, "sts-b", examples, np.array([[5.7], [-0.2], [3.25]]))
    assert open(path).read() == "index\tprediction\n0\t5.000\n1\t0.000\n2\t3.250\n"


def test_write_submission_failure_leaves_no_file(tmp_path):
    examples = [InputExample("test-0", "a"), InputExample("test-1", "b"),
                InputExample("oops", "c")]
    with pytest.raises(ValueError, match="'oops' does not end in a test index"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples, [1, 0, 1])
    with pytest.raises(ValueError, match="class id 2 is out of range"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples[:2], [1, 2])
    with pytest.raises(ValueError, match="3 real predictions for 2 examples"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples[:2], [1, 0, 1])
    assert os.listdir(tmp_path) == []
