"""Tests for bert_tf/data/glue/records.py: packing, TFRecords and padding."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import glue, protocol
from bert_tf.data.glue import InputExample
from bert_tf.records import input_pipeline, tfrecord
from bert_tf.records.record_specs import classification_features
from bert_tf.text import tokenization
from tests import helpers

FIXTURES = helpers.FIXTURES
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
SEQ = 12


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB, do_lower_case=True)


def _ids(tokenizer, text):
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


def _read(path, is_regression=False, batch_size=1):
    """Every record of a classification file, as numpy arrays, through the real reader."""
    dataset = input_pipeline.finetuning_dataset(
        path, batch_size, False, classification_features(SEQ, is_regression))
    batches = list(dataset.as_numpy_iterator())
    return {name: np.concatenate([b[name] for b in batches]) for name in batches[0]}


@pytest.mark.parametrize("text_b", [None, "the man was in the house of the king ."])
def test_convert_example_packs_like_pack_ids(tokenizer, text_b):
    # Long enough that both the single and the pair case are truncated.
    text_a = "The King was in the House, and he said that it was not to be."
    example = InputExample("train-3", text_a, text_b, "b")
    features = glue.convert_example(
        example, {"a": 0, "b": 1}, SEQ, tokenizer, is_regression=False)
    expected = tokenization.pack_ids(
        _ids(tokenizer, text_a), None if text_b is None else _ids(tokenizer, text_b),
        max_seq_length=SEQ, cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
    assert {k: features[k] for k in expected} == expected
    assert features["label_ids"] == 1
    assert features["is_real_example"] == 1
    assert len(features["input_ids"]) == SEQ
    assert features["input_ids"][0] == tokenizer.vocab["[CLS]"]


def test_convert_example_labels(tokenizer):
    test_row = InputExample("test-0", "the king", None, None)
    assert glue.convert_example(
        test_row, {"a": 0, "b": 1}, SEQ, tokenizer, False)["label_ids"] == 0
    score = InputExample("dev-1", "the king", "a man", 3.8)
    features = glue.convert_example(score, {}, SEQ, tokenizer, is_regression=True)
    assert features["label_ids"] == pytest.approx(3.8)
    assert isinstance(features["label_ids"], float)
    assert glue.convert_example(
        test_row, {}, SEQ, tokenizer, is_regression=True)["label_ids"] == 0.0


def test_unknown_label_names_the_example_and_the_known_labels(tokenizer):
    example = InputExample("dev-17", "the king", None, "maybe")
    with pytest.raises(glue.GlueDataError,
                       match=r"example dev-17: unknown label 'maybe'; known: yes, no"):
        glue.convert_example(example, {"yes": 0, "no": 1}, SEQ, tokenizer, False)


def _write(path, examples, tokenizer, seq=SEQ, pad_to_multiple_of=None, task="MRPC"):
    """Writes examples as finetune.run does: GlueData's records, then write_records."""
    data = glue.GlueData(glue.get_processor(task), tokenizer, seq)
    data.examples["dev"] = examples
    specs = classification_features(seq, data.processor.is_regression)
    return protocol.write_records(path, data.records("dev"), specs, pad_to_multiple_of)


def _examples(n, labels=("0", "1")):
    return [InputExample(f"dev-{i}", f"the king {i} was here", "and the man was not",
                         labels[i % len(labels)]) for i in range(n)]


def test_records_pads_to_a_multiple_of_the_batch(tmp_path, tokenizer):
    path = str(tmp_path / "dev.tf_record")
    examples = _examples(5)
    written = _write(path, examples, tokenizer, pad_to_multiple_of=4)
    assert written == 8
    records = _read(path, batch_size=4)
    assert records["is_real_example"][:, 0].tolist() == [1] * 5 + [0] * 3
    assert records["label_ids"][:, 0].tolist() == [0, 1, 0, 1, 0, 0, 0, 0]
    label_map = {"0": 0, "1": 1}
    for i, example in enumerate(examples):
        expected = glue.convert_example(example, label_map, SEQ, tokenizer, False)
        for name in ("input_ids", "input_mask", "segment_ids"):
            assert records[name][i].tolist() == expected[name]
    # Padding records are all zeros, so they cost nothing but a slot.
    for name in ("input_ids", "input_mask", "segment_ids"):
        assert not records[name][5:].any()
    assert os.listdir(tmp_path) == ["dev.tf_record"]


def test_records_without_padding_and_for_regression(tmp_path, tokenizer):
    path = str(tmp_path / "train.tf_record")
    examples = [InputExample(f"train-{i}", "the king", "the man", score)
                for i, score in enumerate([0.0, 2.5, 5.0])]
    assert _write(path, examples, tokenizer, task="STS-B") == 3
    records = _read(path, is_regression=True)
    assert records["label_ids"].dtype == np.float32
    assert records["label_ids"][:, 0].tolist() == [0.0, 2.5, 5.0]
    assert records["is_real_example"][:, 0].tolist() == [1, 1, 1]
    # An exact multiple adds nothing.
    assert _write(path, examples, tokenizer, pad_to_multiple_of=3, task="STS-B") == 3


def test_trimmed_batches_keep_every_real_token(tmp_path, tokenizer):
    path = str(tmp_path / "dev.tf_record")
    # 3, 4, 7 and 12 (truncated) word pieces with [CLS] and [SEP].
    texts = ["the", "the king", "the king was in the", "the man " * 10]
    examples = [InputExample(f"dev-{i}", text, None, "0") for i, text in enumerate(texts)]
    _write(path, examples, tokenizer, pad_to_multiple_of=6)
    full = _read(path, batch_size=2)
    dataset = input_pipeline.finetuning_dataset(
        path, 2, False, classification_features(SEQ), trim_to_multiple_of=4)
    batches = list(dataset.as_numpy_iterator())
    # Longest per batch: 4, 12, and 0 for the two padding records (kept >= 1).
    assert [b["input_ids"].shape for b in batches] == [(2, 4), (2, 12), (2, 4)]
    for i, batch in enumerate(batches):
        length = batch["input_ids"].shape[1]
        for name in ("input_ids", "input_mask", "segment_ids"):
            assert (batch[name] == full[name][2 * i:2 * i + 2, :length]).all()
            assert not full[name][2 * i:2 * i + 2, length:].any()
        assert (batch["label_ids"] == full["label_ids"][2 * i:2 * i + 2]).all()


def test_grouped_batches_hold_neighbours_in_length(tmp_path, tokenizer):
    path = str(tmp_path / "train.tf_record")
    rng = np.random.default_rng(0)
    # Two groups of 10 records, lengths 3-12 then 13-22 (with [CLS] and [SEP]),
    # each in a random order; every length appears once.
    lengths = np.concatenate([rng.permutation(10) + 3, rng.permutation(10) + 13])
    examples = [InputExample(f"train-{i}", " ".join(["the"] * (n - 2)), None, "0")
                for i, n in enumerate(lengths)]
    _write(path, examples, tokenizer, seq=24)
    features = classification_features(24)
    dataset = input_pipeline._group_by_length(
        tf.data.TFRecordDataset(path), features, batch_size=2, group_batches=5, seed=1)
    batches = [sorted(b["input_mask"].sum(axis=1).tolist())
               for b in dataset.as_numpy_iterator()]
    # Sorted within its group, each batch is a pair of neighbours: (3, 4), (5, 6)...
    assert sorted(batches) == [[n, n + 1] for n in range(3, 23, 2)]
    # The batches themselves are shuffled, within a buffer of one group.
    assert batches != sorted(batches)


def test_training_sees_every_record_once_per_epoch(tmp_path, tokenizer):
    """Each epoch is shuffled on its own, so no record comes twice before all came once."""
    path = str(tmp_path / "train.tf_record")
    # 20 records told apart by their length (3 to 22 pieces).
    examples = [InputExample(f"train-{i}", " ".join(["the"] * (i + 1)), None, "0")
                for i in range(20)]
    _write(path, examples, tokenizer, seq=24)
    dataset = input_pipeline.finetuning_dataset(path, 4, True, classification_features(24),
                                                seed=3)
    lengths = [n for batch in dataset.take(15).as_numpy_iterator()
               for n in batch["input_mask"].sum(axis=1).tolist()]
    epochs = [lengths[:20], lengths[20:40], lengths[40:]]
    for epoch in epochs:
        assert sorted(epoch) == list(range(3, 23))
    # Shuffled, and anew each epoch.
    assert epochs[0] != sorted(epochs[0]) and epochs[0] != epochs[1] != epochs[2]


def test_records_failing_mid_write_leaves_no_file(tmp_path, tokenizer, monkeypatch):
    path = str(tmp_path / "dev.tf_record")
    encode = tfrecord.encode_tfrecords
    calls = []

    def failing(columns):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return encode(columns)

    # Two records per write: the third write fails.
    monkeypatch.setattr(tfrecord, "RECORDS_PER_WRITE", 2)
    monkeypatch.setattr(tfrecord, "encode_tfrecords", failing)
    with pytest.raises(OSError, match="disk full"):
        _write(path, _examples(5), tokenizer)
    assert len(calls) == 3  # four records were in the file when it failed
    # Neither the final file nor a temporary one is left.
    assert os.listdir(tmp_path) == []


def test_records_failure_keeps_an_earlier_file(tmp_path, tokenizer):
    path = str(tmp_path / "train.tf_record")
    _write(path, _examples(2), tokenizer)
    before = open(path, "rb").read()
    with pytest.raises(glue.GlueDataError, match="dev-2: unknown label 'x'"):
        _write(path, _examples(3, labels=("0", "1", "x")), tokenizer)
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["train.tf_record"]


def test_max_examples_samples_the_same_examples_every_time(tokenizer):
    folder = os.path.join(os.path.dirname(FIXTURES), "..", "data", "sample_sentiment")
    processor = glue.get_processor("SST-2")
    whole = glue.GlueData(processor, tokenizer, SEQ, data_dir=folder)
    whole.read(["train", "dev"])
    samples = []
    for _ in range(2):
        data = glue.GlueData(processor, tokenizer, SEQ, data_dir=folder,
                             max_examples={"train": 7})
        data.read(["train", "dev"])
        samples.append([example.guid for example in data.examples["train"]])
        # A split without a limit keeps every example.
        assert len(data.examples["dev"]) == len(whole.examples["dev"])
        assert data.training_settings()["max_train_examples"] == 7
    assert samples[0] == samples[1] and len(set(samples[0])) == 7
    assert set(samples[0]) <= {example.guid for example in whole.examples["train"]}
    assert "max_train_examples" not in whole.training_settings()
