"""Tests for bert_tf.data.glue.splits: one split from the TSV files or from (mocked) TFDS."""

import os

import pytest
import tensorflow_datasets as tfds

from bert_tf.data import glue
from tests import helpers

GLUE = os.path.join(helpers.FIXTURES, "glue")


def test_a_split_from_the_tsv_files_is_the_processors_reading():
    processor = glue.get_processor("MRPC")
    data_dir = os.path.join(GLUE, "MRPC")
    assert glue.read_split(processor, "dev", data_dir) == processor.get_dev_examples(data_dir)


def test_an_empty_split_is_refused(tmp_path):
    processor = glue.get_processor("SST-2")
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"sst-2: no dev examples in {tmp_path}"):
        glue.read_split(processor, "dev", str(tmp_path))


@pytest.mark.parametrize("split,tfds_split", [("dev", "validation"), ("train", "train"),
                                              ("dev_matched", "validation_matched")])
def test_tfds_split_names(monkeypatch, split, tfds_split):
    asked = []
    load = tfds.load
    monkeypatch.setattr(tfds, "load", lambda name, split, **kwargs: (
        asked.append(split) or load(name, split=split, **kwargs)))
    task = "mnli" if "matched" in split else "mrpc"
    with tfds.testing.mock_data(num_examples=3, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = glue.read_split(glue.get_processor(task), split, tfds_name=f"glue/{task}")
    assert asked == [tfds_split] and len(examples) == 3
