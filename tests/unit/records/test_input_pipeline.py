"""Tests for bert_tf.records.input_pipeline: the pretraining reader, and the contract it reads.

pretraining_original.tfrecord holds 28 records that Google's original
create_pretraining_data.py wrote, run by
bench/original_create_pretraining_data.py with --input_file=
tests/fixtures/pretraining_corpus.txt --vocab_file=tests/fixtures/
pretraining_vocab.txt --max_seq_length=32 --max_predictions_per_seq=5
--dupe_factor=1 --random_seed=1.
"""

import collections
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import pretraining_data
from bert_tf.records import input_pipeline
from bert_tf.records.record_specs import pretraining_features
from tests import helpers
from tests.helpers.dataset_helpers import read_all

FIXTURES = helpers.FIXTURES
ORIGINAL_RECORDS = os.path.join(FIXTURES, "pretraining_original.tfrecord")
SEQ, PREDICTIONS = 32, 5


def parse_directly(paths):
    """Parses records, file after file, with the original run_pretraining.py's spec."""
    spec = {
        "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([PREDICTIONS], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([PREDICTIONS], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([PREDICTIONS], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }
    records = [r.numpy() for r in tf.data.TFRecordDataset(paths)]
    return {k: v.numpy() for k, v in tf.io.parse_example(records, spec).items()}


def rows(features):
    """The records as a multiset of hashable rows."""
    return collections.Counter(
        tuple(features["input_ids"][i]) + tuple(features["masked_lm_positions"][i])
        for i in range(len(features["input_ids"])))


@pytest.fixture(scope="module")
def our_files(tmp_path_factory):
    """Two files that bert_tf's create_pretraining_data wrote from the fixture corpus."""
    directory = tmp_path_factory.mktemp("records")
    outputs = [str(directory / f"part-{i}.tfrecord") for i in range(2)]
    config = pretraining_data.PretrainingDataConfig(
        vocab_file=os.path.join(FIXTURES, "pretraining_vocab.txt"), max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, dupe_factor=3)
    pretraining_data.create_pretraining_data(
        os.path.join(FIXTURES, "pretraining_corpus.txt"), outputs, config)
    return outputs


def test_the_contract_is_the_original_feature_set():
    features = pretraining_features(128, 20)
    assert [(f.name, f.length, f.dtype) for f in features] == [
        ("input_ids", 128, "int64"),
        ("input_mask", 128, "int64"),
        ("segment_ids", 128, "int64"),
        ("masked_lm_positions", 20, "int64"),
        ("masked_lm_ids", 20, "int64"),
        ("masked_lm_weights", 20, "float32"),
        ("next_sentence_labels", 1, "int64"),
    ]


def test_reads_records_the_original_wrote():
    dataset = input_pipeline.pretraining_dataset(
        ORIGINAL_RECORDS, batch_size=4, max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, is_training=False)
    spec = dataset.element_spec
    assert spec["input_ids"].shape == [4, SEQ] and spec["input_ids"].dtype == tf.int32
    assert spec["masked_lm_positions"].shape == [4, PREDICTIONS]
    assert spec["masked_lm_weights"].dtype == tf.float32
    assert spec["next_sentence_labels"].shape == [4, 1]
    features = read_all(dataset)
    expected = parse_directly(ORIGINAL_RECORDS)
    assert len(features["input_ids"]) == 28
    for name, values in expected.items():
        np.testing.assert_array_equal(features[name], values)


def test_batches_have_a_fixed_size():
    dataset = input_pipeline.pretraining_dataset(
        ORIGINAL_RECORDS, batch_size=5, max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, is_training=False)
    assert [len(b["input_ids"]) for b in dataset] == [5] * 5


@pytest.mark.parametrize("is_training", [True, False])
def test_no_pipeline_starts_tf_data_autotuning(is_training):
    """Deleting an autotuned iterator waits out its tuning thread's sleep: up to a minute."""
    features = pretraining_features(SEQ, PREDICTIONS)
    datasets = [
        input_pipeline.pretraining_dataset(
            ORIGINAL_RECORDS, batch_size=5, max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS, is_training=is_training),
        input_pipeline.finetuning_dataset(ORIGINAL_RECORDS, 5, is_training, features),
        input_pipeline.finetuning_dataset(ORIGINAL_RECORDS, 5, is_training, features,
                                          trim_to_multiple_of=16,
                                          length_group_batches=2 if is_training else None),
    ]
    for dataset in datasets:
        assert dataset.options().autotune.enabled is False
        assert len(next(iter(dataset))["input_ids"]) == 5


def test_evaluation_reads_each_file_once_in_order(our_files):
    directory = os.path.dirname(our_files[0])
    dataset = input_pipeline.pretraining_dataset(
        os.path.join(directory, "*.tfrecord"), batch_size=1, max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, is_training=False)
    features = read_all(dataset)
    for name, values in parse_directly(our_files).items():
        np.testing.assert_array_equal(features[name], values)


def test_training_repeats_and_shuffles(our_files):
    expected = parse_directly(our_files)
    total = len(expected["input_ids"])
    dataset = input_pipeline.pretraining_dataset(
        ",".join(our_files), batch_size=1, max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, is_training=True, seed=1)
    features = read_all(dataset, batches=2 * total)
    assert len(features["input_ids"]) == 2 * total
    assert set(rows(features)) <= set(rows(expected))
    assert not np.array_equal(features["input_ids"][:total], expected["input_ids"])


def test_input_pipelines_share_the_files(our_files):
    for pipeline in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline)
        dataset = input_pipeline.pretraining_dataset(
            our_files, batch_size=1, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
            is_training=False, input_context=context)
        assert rows(read_all(dataset)) == rows(parse_directly(our_files[pipeline]))


def test_input_pipelines_share_the_records_when_files_are_few(our_files):
    seen = collections.Counter()
    for pipeline in range(3):
        context = tf.distribute.InputContext(num_input_pipelines=3, input_pipeline_id=pipeline)
        dataset = input_pipeline.pretraining_dataset(
            our_files, batch_size=1, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
            is_training=False, input_context=context)
        seen += rows(read_all(dataset))
    assert seen == rows(parse_directly(our_files))


@pytest.fixture(scope="module")
def uneven_files(our_files, tmp_path_factory):
    """Five files of 3 to 24 records, cut from our_files' records.

    Files of unequal length make the interleave finish some files long
    before others: where an epoch's records would mix with the next one's.
    """
    records = [r.numpy() for r in tf.data.TFRecordDataset(our_files)]
    directory = tmp_path_factory.mktemp("uneven")
    paths, start = [], 0
    for i, size in enumerate((3, 24, 7, 15, 11)):
        paths.append(str(directory / f"part-{i}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1]) as writer:
            for record in records[start:start + size]:
                writer.write(record)
        start += size
    assert start <= len(records)
    return paths


def pretraining_rows(files, is_training, input_context=None, batches=None):
    """The records one input pipeline reads, as row tuples in reading order."""
    dataset = input_pipeline.pretraining_dataset(
        files, batch_size=1, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
        is_training=is_training, input_context=input_context, seed=1)
    features = read_all(dataset, batches=batches)
    return [tuple(features["input_ids"][i]) + tuple(features["masked_lm_positions"][i])
            for i in range(len(features["input_ids"]))]


def training_epochs(files, epochs, input_context=None):
    """The first `epochs` epochs of one training pipeline: a list of rows each, in order.

    An epoch is as many records as the pipeline's share of the files holds.
    """
    per_epoch = len(pretraining_rows(files, False, input_context))
    read = pretraining_rows(files, True, input_context, batches=epochs * per_epoch)
    return [read[e * per_epoch:(e + 1) * per_epoch] for e in range(epochs)]


def test_training_reads_every_record_once_per_epoch(uneven_files):
    expected = rows(parse_directly(uneven_files))
    epochs = training_epochs(uneven_files, epochs=3)
    for epoch in epochs:
        assert collections.Counter(epoch) == expected
    # Each epoch in an order of its own.
    assert len({tuple(epoch) for epoch in epochs}) == 3


def test_two_training_pipelines_read_disjoint_records_each_epoch(uneven_files):
    expected = rows(parse_directly(uneven_files))
    per_pipeline = [
        training_epochs(uneven_files, epochs=2, input_context=tf.distribute.InputContext(
            num_input_pipelines=2, input_pipeline_id=i))
        for i in range(2)]
    for epoch in range(2):
        first = collections.Counter(per_pipeline[0][epoch])
        second = collections.Counter(per_pipeline[1][epoch])
        assert not set(first) & set(second)
        assert first + second == expected


def test_a_pattern_that_matches_nothing_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no input file matches"):
        input_pipeline.pretraining_dataset(
            str(tmp_path / "*.tfrecord"), batch_size=1, max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS, is_training=False)


def test_count_records_names_a_truncated_file(tmp_path):
    path = tmp_path / "data.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(10):
            writer.write(f"record {i}".encode())
    assert input_pipeline.count_records(str(path)) == 10
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match=f"{cut}: corrupt or truncated"):
        input_pipeline.count_records(f"{path},{cut}")
