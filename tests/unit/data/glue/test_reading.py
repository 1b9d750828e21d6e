"""Tests for bert_tf.data.glue.reading: UTF-8, byte-order marks, line endings, chunked reads."""

import os

import pytest

from bert_tf.data import glue
from bert_tf.data.glue import reading
from tests import helpers

FIXTURES = os.path.join(helpers.FIXTURES, "glue")


def _dir(name):
    """The fixture folder of a task."""
    return os.path.join(FIXTURES, name)


def test_mrpc_header_with_byte_order_mark_is_recognised():
    with open(os.path.join(_dir("MRPC"), "train.tsv"), "rb") as f:
        assert f.read(3) == b"\xef\xbb\xbf"
    labels = [e.label for e in glue.get_processor("mrpc").get_train_examples(_dir("MRPC"))]
    assert labels == ["1", "0"]


def test_line_endings_and_stray_carriage_return(tmp_path):
    (tmp_path / "dev.tsv").write_bytes(b"sentence\tlabel\r\none \t1\r\n\r\ntwo\t0")
    examples = glue.get_processor("sst-2").get_dev_examples(str(tmp_path))
    assert [(e.text_a, e.label) for e in examples] == [("one ", "1"), ("two", "0")]
    # A carriage return inside a row is an error, not silently dropped.
    (tmp_path / "test.tsv").write_bytes(b"index\tsentence\n0\tone\n1\ttw\ro\n")
    with pytest.raises(glue.GlueDataError, match=r"test\.tsv:3:"):
        glue.get_processor("sst-2").get_test_examples(str(tmp_path))


def test_reading_in_small_chunks_gives_the_same_examples(monkeypatch):
    # Chunks of 5 bytes split rows, the byte-order mark and Chinese characters.
    expected = {task: glue.get_processor(task).get_train_examples(_dir(folder))
                for task, folder in (("mrpc", "MRPC"), ("xnli", "XNLI"), ("qqp", "QQP"))}
    monkeypatch.setattr(reading, "_READ_CHUNK_BYTES", 5)
    for task, folder in (("mrpc", "MRPC"), ("xnli", "XNLI"), ("qqp", "QQP")):
        assert glue.get_processor(task).get_train_examples(_dir(folder)) == expected[task]


def test_a_line_that_is_not_utf8_gives_file_and_line(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(b"sentence\tlabel\nfine\t1\ncaf\xe9\t0\n")
    with pytest.raises(glue.GlueDataError, match=r"dev\.tsv:3: not UTF-8"):
        list(glue.read_tsv(str(path), "sst-2"))
