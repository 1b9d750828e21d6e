"""Tests for bert_tf.checkpoints.model_files: a model's config, vocab, casing, found and checked."""

import dataclasses
import os

import pytest

from bert_tf.checkpoints import model_files
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "tokenization_vocab_small.txt")


@pytest.fixture
def config_file(tmp_path, tiny_config):
    """A bert_config.json whose vocab_size is VOCAB's."""
    config = dataclasses.replace(tiny_config, vocab_size=len(tokenization.load_vocab(VOCAB)))
    path = str(tmp_path / "bert_config.json")
    config.to_json_file(path)
    return path


def test_given_files_are_read_and_uncased_is_the_default(config_file, capsys):
    files = model_files.find(None, config_file, VOCAB, max_seq_length=64)
    assert (files.vocab_file, files.do_lower_case, files.init_checkpoint) == (VOCAB, True, None)
    assert files.bert_config.vocab_size == len(tokenization.load_vocab(VOCAB))
    assert files.tokenizer().tokenize("Hello") == ["hell", "##o"]
    # Nothing records the casing, and VOCAB is cased: a warning, not an error.
    assert "warning: --do_lower_case=True, but 374 word pieces of" in capsys.readouterr().err


def test_files_that_do_not_fit_are_named(config_file, tiny_config, tmp_path):
    with pytest.raises(model_files.ModelFilesError, match="^Give --bert_config_file"):
        model_files.find(None, vocab_file=VOCAB)
    with pytest.raises(model_files.ModelFilesError,
                       match="--max_seq_length=128 exceeds the model's "
                             "max_position_embeddings=64"):
        model_files.find(None, config_file, VOCAB, max_seq_length=128)
    other = str(tmp_path / "other_config.json")
    tiny_config.to_json_file(other)
    with pytest.raises(model_files.ModelFilesError,
                       match=f"the vocab file has {len(tokenization.load_vocab(VOCAB))} "
                             f"tokens but the model's vocab_size is {tiny_config.vocab_size}"):
        model_files.find(None, other, VOCAB)


def test_a_folder_records_its_casing_and_a_contradicting_flag_is_refused(config_file, tmp_path):
    folder = tmp_path / "cased"
    folder.mkdir()
    (folder / "vocab.txt").write_text(open(VOCAB, encoding="utf-8").read(), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    # The vocab is found beside the checkpoint's folder; the casing is its record.
    files = model_files.find(str(folder), config_file)
    assert (files.vocab_file, files.do_lower_case) == (str(folder / "vocab.txt"), False)
    with pytest.raises(model_files.ModelFilesError,
                       match="--do_lower_case=True contradicts .* do_lower_case=False"):
        model_files.find(str(folder), config_file, do_lower_case=True)


def test_a_cased_reading_of_an_uncased_vocab_is_refused(tmp_path, tiny_config):
    """Nothing records the casing: the vocab tells, and --do_lower_case=False would make
    every capitalised word [UNK]."""
    uncased = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")
    config = dataclasses.replace(tiny_config, vocab_size=len(tokenization.load_vocab(uncased)))
    config_path = str(tmp_path / "bert_config.json")
    config.to_json_file(config_path)
    with pytest.raises(model_files.ModelFilesError, match=(
            f"^--do_lower_case=False, but {uncased} has no word piece with a capital letter")):
        model_files.find(None, config_path, uncased, do_lower_case=False)
    assert model_files.find(None, config_path, uncased).do_lower_case is True
