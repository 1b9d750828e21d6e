"""Tests for bert_tf/data/protocol.py: the one record writer and its padding rule."""

import numpy as np

from bert_tf.data import protocol
from bert_tf.records import input_pipeline, record_specs


def _window(sentence_index):
    return {"input_ids": [2, 7, 3, 0], "input_mask": [1, 1, 1, 0], "segment_ids": [0] * 4,
            "label_ids": [0, 1, 0, 0], "label_weights": [0.0, 1.0, 0.0, 0.0],
            "word_ids": [0, 0, 0, 0], "sentence_index": sentence_index, "is_real_example": 1}


def test_padding_records_fill_the_last_batch_with_zeros(tmp_path):
    specs = record_specs.tagging_features(4)
    path = str(tmp_path / "windows.tf_record")
    written = protocol.write_records(path, [_window(5), _window(6)], specs,
                                          pad_to_multiple_of=3)
    assert written == 3
    [batch] = list(input_pipeline.finetuning_dataset(path, 3, False, specs))
    assert batch["is_real_example"].numpy()[:, 0].tolist() == [1, 1, 0]
    assert batch["sentence_index"].numpy()[:, 0].tolist() == [5, 6, 0]
    for spec in specs:
        assert not np.any(batch[spec.name].numpy()[2]), spec.name
    np.testing.assert_array_equal(batch["label_weights"].numpy()[0], [0, 1, 0, 0])


def test_without_padding_every_record_is_real(tmp_path):
    specs = record_specs.tagging_features(4)
    path = str(tmp_path / "windows.tf_record")
    assert protocol.write_records(path, [_window(0)] * 4, specs) == 4
    assert protocol.padding_record(specs)["sentence_index"] == 0
    [batch] = list(input_pipeline.finetuning_dataset(path, 4, False, specs))
    assert batch["is_real_example"].numpy()[:, 0].tolist() == [1, 1, 1, 1]


def test_a_padding_record_has_each_features_shape(tmp_path):
    specs = record_specs.multiple_choice_features(num_choices=2, max_seq_length=4)
    padding = protocol.padding_record(specs)
    assert np.shape(padding["input_ids"]) == (2, 4)
    assert padding["is_real_example"] == 0
    record = dict(padding, input_ids=[[2, 5, 3, 0], [2, 6, 3, 0]], is_real_example=1)
    path = str(tmp_path / "choices.tf_record")
    assert protocol.write_records(path, [record], specs, pad_to_multiple_of=2) == 2
    [batch] = list(input_pipeline.finetuning_dataset(path, 2, False, specs))
    assert batch["input_ids"].shape == (2, 2, 4)
    np.testing.assert_array_equal(batch["input_ids"].numpy()[0], record["input_ids"])
    assert not batch["input_ids"].numpy()[1].any()


def test_real_records_may_give_one_value_features_as_lists_next_to_the_padding(tmp_path):
    """The padding row gives label_ids as 0; a family's records may give [label]."""
    specs = record_specs.multiple_choice_features(num_choices=2, max_seq_length=4)
    record = {"input_ids": np.ones((2, 4), np.int64), "input_mask": np.ones((2, 4), np.int64),
              "segment_ids": np.zeros((2, 4), np.int64), "label_ids": [1],
              "is_real_example": [1]}
    path = str(tmp_path / "choices.tf_record")
    assert protocol.write_records(path, [record], specs, pad_to_multiple_of=3) == 3
    [batch] = list(input_pipeline.finetuning_dataset(path, 3, False, specs))
    assert batch["label_ids"].numpy()[:, 0].tolist() == [1, 0, 0]
    assert batch["is_real_example"].numpy()[:, 0].tolist() == [1, 0, 0]


def test_length_order_goes_shortest_first_ties_in_input_order():
    specs = record_specs.tagging_features(4)
    masks = [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]]
    records = [dict(_window(i), input_mask=mask) for i, mask in enumerate(masks)]
    assert protocol.length_order(records, specs).tolist() == [1, 4, 3, 0, 2]


def test_length_order_counts_a_multiple_choice_records_longest_choice():
    """Trimming cuts a record of several sequences to its longest: that is its length."""
    specs = record_specs.multiple_choice_features(num_choices=2, max_seq_length=4)
    # Flat: 2 + 2 real tokens, longest 2; 3 + 0 real tokens, longest 3.
    balanced = {"input_mask": [1, 1, 0, 0, 1, 1, 0, 0]}
    one_long = {"input_mask": [[1, 1, 1, 0], [0, 0, 0, 0]]}
    assert protocol.length_order([one_long, balanced], specs).tolist() == [1, 0]
