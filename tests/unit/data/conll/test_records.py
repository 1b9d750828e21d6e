"""Tests for bert_tf/data/conll/records.py: word pieces, windows and tagging records."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import conll, protocol
from bert_tf.records import input_pipeline
from bert_tf.records.record_specs import tagging_features
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")
# Records of 8 tokens, long sentences cut into windows 3 pieces apart.
SETTINGS = conll.ConllSettings(8, 3)


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB, do_lower_case=True)


def test_each_word_has_a_first_piece_even_when_tokenization_deletes_it(tokenizer):
    words = ["the", "\x00", "kings"]
    pieces, first_piece = conll.word_pieces(tokenizer, words, max_pieces_per_word=10)
    assert pieces[first_piece[1]] == "[UNK]"
    assert first_piece == [0, 1, 2]
    assert pieces[:2] == ["the", "[UNK]"] and len(pieces) >= 3


def test_a_word_of_more_pieces_than_a_window_keeps_its_first_ones(tokenizer):
    word = "andwaterworkmanling"  # and ##water ##work ##man ##ling
    full = tokenizer.tokenize(word)
    pieces, first_piece = conll.word_pieces(tokenizer, [word, "the"], 3)
    assert pieces == full[:3] + ["the"] and first_piece == [0, 3]


def test_short_sentence_is_one_window_that_scores_every_word():
    (window,) = conll.windows(5, [0, 2, 4], window_size=8, stride=4)
    assert (window.start, window.end) == (0, 5)
    assert window.scored == {0: 0, 2: 1, 4: 2}


def test_long_sentence_windows_cover_it_and_score_each_word_once_where_most_centred():
    # Ten one-piece words, windows of 4 pieces every 2: [0,4) [2,6) [4,8) [6,10).
    windows = conll.windows(10, list(range(10)), window_size=4, stride=2)
    assert [(w.start, w.end) for w in windows] == [(0, 4), (2, 6), (4, 8), (6, 10)]
    # Piece 3 has context 0 in [0,4) (last piece) and 1 in [2,6): the second wins.
    # Piece 2 has context min(2,1)=1 in [0,4) and 0 in [2,6): the first wins.
    assert windows[0].scored == {0: 0, 1: 1, 2: 2}
    assert windows[1].scored == {3: 3, 4: 4}
    assert windows[2].scored == {5: 5, 6: 6}
    assert windows[3].scored == {7: 7, 8: 8, 9: 9}
    scored = [word for w in windows for word in w.scored.values()]
    assert sorted(scored) == list(range(10))


def test_only_first_pieces_are_scored(tokenizer):
    words = ["the", "andwaterwork", "he"]
    records = conll.convert_sentence(7, words, [1, 2, 3], tokenizer,
                                            max_seq_length=16, stride=7)
    (record,) = records
    pieces, first_piece = conll.word_pieces(tokenizer, words, 14)
    assert first_piece == [0, 1, 4]
    positions = [p + 1 for p in first_piece]
    assert np.nonzero(record["label_weights"])[0].tolist() == positions
    assert [record["label_ids"][p] for p in positions] == [1, 2, 3]
    assert [record["word_ids"][p] for p in positions] == [0, 1, 2]
    assert record["sentence_index"] == 7
    assert record["input_ids"][0] == tokenizer.vocab["[CLS]"]
    assert record["input_ids"][len(pieces) + 1] == tokenizer.vocab["[SEP]"]
    assert sum(record["input_mask"]) == len(pieces) + 2


def test_long_sentence_records_predict_every_word_once(tokenizer):
    words = ["the", "king", "and", "the", "man"] * 6
    records = conll.convert_sentence(0, words, list(range(30)), tokenizer,
                                            max_seq_length=10, stride=3)
    assert len(records) > 1
    scored = sorted(r["word_ids"][p] for r in records
                    for p in np.nonzero(r["label_weights"])[0])
    assert scored == list(range(30))
    for r in records:
        for p in np.nonzero(r["label_weights"])[0]:
            assert r["label_ids"][p] == r["word_ids"][p]


def test_unknown_tag_names_file_and_line(tmp_path):
    path = tmp_path / "valid.txt"
    path.write_text("EU B-ORG\nrejects O\n\nPeter B-PER\n", encoding="utf-8")
    sentences = conll.read_conll(str(path))
    with pytest.raises(conll.ConllDataError, match=r"valid\.txt:4: tag 'B-PER'"):
        conll.tag_ids(sentences, ["O", "B-ORG", "I-ORG"], str(path))
    assert conll.tag_ids(sentences, ["O", "B-ORG", "B-PER"], str(path)) == [[1, 0], [2]]


def test_records_read_back_through_the_pipeline(tokenizer, tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("the B-PER\nking I-PER\n\nman O\n", encoding="utf-8")
    sentences = conll.read_conll(str(path))
    ids = conll.tag_ids(sentences, ["O", "B-PER", "I-PER"], str(path))
    records = str(tmp_path / "data.tf_record")
    windows = conll.convert_sentences(sentences, ids, tokenizer, 8, 3)
    assert protocol.write_records(records, windows, tagging_features(8), 3) == 3
    (batch,) = input_pipeline.finetuning_dataset(records, 3, False, tagging_features(8))
    assert batch["is_real_example"][:, 0].numpy().tolist() == [1, 1, 0]
    assert batch["sentence_index"][:, 0].numpy().tolist() == [0, 1, 0]
    assert batch["label_weights"].dtype == tf.float32
    assert batch["label_ids"][0, 1:3].numpy().tolist() == [1, 2]
    # Trimming cuts every sequence feature alike.
    (trimmed,) = input_pipeline.finetuning_dataset(records, 3, False, tagging_features(8),
                                                   trim_to_multiple_of=2)
    assert trimmed["label_ids"].shape == trimmed["input_ids"].shape == (3, 4)


def test_convert_sentences_gives_every_window_the_file_holds(tokenizer, tmp_path):
    path = tmp_path / "data.txt"
    long = " O\n".join(["the", "he", "and"] * 8) + " O\n"
    path.write_text(f"the B-PER\nhe O\n\n{long}", encoding="utf-8")
    sentences = conll.read_conll(str(path))
    ids = conll.tag_ids(sentences, ["O", "B-PER"], str(path))
    windows = conll.convert_sentences(sentences, ids, tokenizer, 10, 4)
    written = protocol.write_records(str(tmp_path / "r.tf_record"), windows,
                                         tagging_features(10))
    assert len(windows) == written == sum(1 for _ in tf.data.TFRecordDataset(
        str(tmp_path / "r.tf_record"))) > 2


def _conll_dir(tmp_path):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "train.txt").write_text("the B-PER\nking I-PER\n\nman O\n", encoding="utf-8")
    (tmp_path / "dev.txt").write_text("the O\nman B-PER\n", encoding="utf-8")
    # A predict file may carry tags the model never saw: they are not read.
    (tmp_path / "test.txt").write_text("the B-MISC\nking O\n", encoding="utf-8")
    return tmp_path


def test_conll_data_takes_its_tags_from_train_and_keeps_them_for_later_runs(tokenizer, tmp_path):
    data_dir = _conll_dir(tmp_path / "data")
    output_dir = tmp_path / "run"
    output_dir.mkdir()
    data = conll.ConllData(SETTINGS, tokenizer, str(data_dir), output_dir=str(output_dir))
    data.read(["train", "valid", "predict"])
    assert data.labels() == ["O", "B-PER", "I-PER"]
    assert data.path("valid") == str(data_dir / "dev.txt")
    assert data.num_train_examples() == 2
    assert data.describe("valid") == "1 sentences (1 windows)"
    assert data.records("valid")[0]["label_ids"][1:3] == [0, 1]
    assert data.records("predict")[0]["label_ids"] == [0] * 8
    references = data.references("predict")
    assert references.path == str(data_dir / "test.txt")
    assert [list(s.words) for s in references.sentences] == [["the", "king"]]
    data.write_run_files(str(output_dir))

    later = conll.ConllData(SETTINGS, tokenizer, str(data_dir), output_dir=str(output_dir))
    later.read(["predict"])
    assert later.labels() == ["O", "B-PER", "I-PER"]


def test_conll_data_reads_a_split_once_and_names_a_foreign_dev_tag(tokenizer, tmp_path):
    data_dir = _conll_dir(tmp_path)
    data = conll.ConllData(SETTINGS, tokenizer, str(data_dir), labels=["O", "B-PER", "I-PER"])
    data.read(["train"])
    windows = data.windows["train"]
    data.read(["train"])
    assert data.windows["train"] is windows
    with pytest.raises(conll.ConllDataError, match=r"train\.txt:2: tag 'I-PER'"):
        conll.ConllData(SETTINGS, tokenizer, str(data_dir), labels=["O", "B-PER"]).read(
            ["valid", "train"])
    assert conll.ConllData(SETTINGS, tokenizer, str(data_dir), predict_file=str(
        data_dir / "train.txt")).source("predict") == data.source("train")


def test_conll_data_lets_the_training_windows_go_once_they_are_written(tokenizer, tmp_path):
    data = conll.ConllData(SETTINGS, tokenizer, str(_conll_dir(tmp_path)))
    data.read(["train", "valid"])
    records = data.records("train")
    assert "train" not in data.windows
    assert data.num_train_examples() == len(records) == 2
    assert data.describe("train") == "2 sentences (2 windows)"
    # A second run on the same data cuts them again, alike.
    assert data.records("train") == records
    # Prediction splits keep theirs: they may be written at two batch sizes.
    assert data.records("valid") is data.records("valid")


def test_conll_data_without_tags_or_a_training_run_says_what_to_give(tokenizer, tmp_path):
    data = conll.ConllData(SETTINGS, tokenizer, str(_conll_dir(tmp_path)),
                           output_dir=str(tmp_path / "run"))
    data.read(["predict"])  # Its tags are not read: no label list needed yet.
    with pytest.raises(ValueError, match="label_list.txt from a training run: give --labels"):
        data.labels()


def test_settings_fill_in_half_a_window_and_refuse_a_stride_that_does_not_fit():
    assert conll.ConllSettings(128).window_stride == 63
    assert conll.ConllSettings(128, window_stride=10).window_stride == 10
    with pytest.raises(ValueError, match=r"^--window_stride=127 must be in 1\.\.126 "):
        conll.ConllSettings(128, window_stride=127)
