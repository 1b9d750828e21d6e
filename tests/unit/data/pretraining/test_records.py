"""PretrainingData: the record files of a pretraining run, checked before any model is built.

tests/fixtures/pretraining_original.tfrecord holds 28 records that Google's
original create_pretraining_data.py wrote (max_seq_length 32,
max_predictions_per_seq 5) with tests/fixtures/pretraining_vocab.txt (393
tokens).
"""

import os
import shutil

import pytest
import tensorflow as tf

from bert_tf import configs
from bert_tf.data.pretraining import PretrainingData, PretrainingRecordsError
from tests import helpers

RECORDS = os.path.join(helpers.FIXTURES, "pretraining_original.tfrecord")
SEQ, PREDICTIONS, VOCAB_SIZE = 32, 5, 393


def _data(input_file=RECORDS, eval_input_file=None, max_seq_length=SEQ, vocab_size=VOCAB_SIZE,
          dynamic_masking=False):
    settings = configs.PretrainingData(input_file=input_file, eval_input_file=eval_input_file,
                                       max_predictions_per_seq=PREDICTIONS)
    masking = configs.DynamicMasking(
        dynamic_masking=dynamic_masking,
        vocab_file=os.path.join(helpers.FIXTURES, "pretraining_vocab.txt"))
    return PretrainingData(settings, masking, max_seq_length, vocab_size)


def test_the_splits_read_their_flags_files(tmp_path):
    copy = str(tmp_path / "eval.tfrecord")
    shutil.copy(RECORDS, copy)
    data = _data(eval_input_file=copy)
    data.read(["train", "eval"])
    assert data.patterns("train") == RECORDS
    assert data.patterns("eval") == copy
    assert data.describe("eval") == "1 file(s) of --eval_input_file"
    # Without eval_input_file, evaluation reads the training files (the original's).
    assert _data().patterns("eval") == RECORDS


def test_a_split_gives_batches_of_the_records(tmp_path):
    data = _data()
    data.read(["train", "eval"])
    strategy = tf.distribute.get_strategy()
    batch = next(iter(strategy.distribute_datasets_from_function(
        data.dataset_fn("eval", 4))))
    assert batch["input_ids"].shape == (4, SEQ)
    assert batch["masked_lm_positions"].shape == (4, PREDICTIONS)
    # Training repeats the files: more batches than the 28 records hold.
    training = strategy.distribute_datasets_from_function(data.dataset_fn("train", 8))
    assert len(list(training.take(5))) == 5


def test_ids_past_the_models_vocab_are_refused_before_any_step():
    with pytest.raises(PretrainingRecordsError,
                       match=rf"--input_file: {RECORDS} holds token id \d+, but the model's "
                             r"vocab_size is 100: give records made with the model's vocab"):
        _data(vocab_size=100).read(["train"])
    # Not checked when the vocab size is not known.
    _data(vocab_size=None).read(["train"])


def test_records_of_another_length_name_the_flag(tmp_path):
    with pytest.raises(PretrainingRecordsError,
                       match="--input_file: .* the records do not hold 16 input_ids"):
        _data(max_seq_length=16).read(["train"])
    missing = str(tmp_path / "missing-*.tfrecord")
    with pytest.raises(PretrainingRecordsError, match="--eval_input_file: no input file"):
        _data(eval_input_file=missing).read(["eval"])


def test_the_training_settings_name_the_files_and_how_they_are_read():
    settings = _data().training_settings()
    assert list(settings["input_files"]) == [os.path.abspath(RECORDS)]
    assert settings["max_seq_length"] == SEQ
    assert settings["max_predictions_per_seq"] == PREDICTIONS
    assert "masked_lm_prob" not in settings
    assert _data(dynamic_masking=True).training_settings()["masked_lm_prob"] == 0.15
