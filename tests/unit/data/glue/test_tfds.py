"""Tests for bert_tf.data.glue.tfds: TFDS records as InputExamples, on mocked TFDS data."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from bert_tf.data import glue
from bert_tf.data.glue import InputExample

# TFDS. tfds.testing.mock_data patches TFDS so that nothing is downloaded or
# read: with MockPolicy.USE_CODE, the dataset's info (features, label names)
# comes from the builder's code in the installed tensorflow_datasets, and the
# examples are random values of that feature spec (as_dataset_fn replaces them
# with chosen records). The default policy, AUTO, ends up the same offline:
# tensorflow_datasets 4.9.10 ships no metadata files for glue, so AUTO falls
# back to USE_CODE.


@pytest.mark.parametrize("config,task", [("mrpc", "mrpc"), ("sst2", "sst-2"),
                                         ("stsb", "sts-b"), ("qnli", "qnli")])
def test_tfds_random_mock_examples_map_onto_the_processor(config, task):
    processor = glue.get_processor(task)
    with tfds.testing.mock_data(num_examples=4, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = glue.examples_from_tfds(f"glue/{config}", "train")
        records = list(tfds.as_numpy(tfds.load(f"glue/{config}", split="train")))
    assert len(examples) == 4
    key_a, key_b = processor.tfds_text_keys
    for example, record in zip(examples, records, strict=True):
        assert example.guid == f"train-{record['idx']}"
        assert example.text_a == record[key_a].decode("utf-8")
        assert example.text_b == (record[key_b].decode("utf-8") if key_b else None)
        if processor.is_regression:
            assert example.label == pytest.approx(float(record["label"]))
        else:
            # Every task here orders TFDS's names as its own "0"/"1" or labels.
            assert example.label == processor.get_labels()[record["label"]]


def _records(features):
    """An as_dataset_fn that yields the given feature dicts."""
    def as_dataset(self, *args, **kwargs):
        return tf.data.Dataset.from_tensor_slices(
            {key: [f[key] for f in features] for key in features[0]})
    return as_dataset


def test_tfds_label_names_map_through_names_not_ids():
    # TFDS orders MNLI entailment, neutral, contradiction; the processor
    # orders contradiction, entailment, neutral.
    records = [{"premise": "p0", "hypothesis": "h0", "label": np.int64(0), "idx": np.int32(7)},
               {"premise": "p1", "hypothesis": "h1", "label": np.int64(2), "idx": np.int32(9)}]
    with tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE,
                                as_dataset_fn=_records(records)):
        examples = glue.examples_from_tfds("glue/mnli", "validation_matched")
    assert examples == [InputExample("validation_matched-7", "p0", "h0", "entailment"),
                        InputExample("validation_matched-9", "p1", "h1", "contradiction")]


def test_tfds_test_split_has_no_labels_and_feeds_a_submission(tmp_path):
    records = [{"sentence1": "a", "sentence2": "b", "label": np.int64(-1), "idx": np.int32(1)},
               {"sentence1": "c", "sentence2": "d", "label": np.int64(-1), "idx": np.int32(0)}]
    with tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE,
                                as_dataset_fn=_records(records)):
        examples = glue.examples_from_tfds("glue/mrpc", "test")
    assert [(e.guid, e.label) for e in examples] == [("test-1", None), ("test-0", None)]
    path = str(tmp_path / "MRPC.tsv")
    glue.write_submission(path, "mrpc", examples, [[0.3, 0.7], [0.8, 0.2]])
    assert open(path).read() == "index\tprediction\n1\t1\n0\t0\n"
