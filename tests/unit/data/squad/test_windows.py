"""Tests for bert_tf/data/squad/windows.py and records.py: windows, max context, answer positions,
and the TFRecords they are written to."""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import protocol, squad
from bert_tf.data.squad import reading, records, windows
from bert_tf.records import input_pipeline
from bert_tf.records.record_specs import question_answering_features
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "tokenization_vocab_small.txt")
# Pieces: the man went to the store and bought a g ##all ##on (12).
CONTEXT = "The man went to the store and bought a gallon"


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB, do_lower_case=True)


def _example(context, question="Who?", answer=None, is_impossible=False, qas_id="q"):
    """A SquadExample; answer is (text, first word, last word) for training."""
    doc_tokens, offsets = reading.split_context(context)
    example = reading.SquadExample(qas_id, question, context, doc_tokens, offsets,
                                   is_impossible=is_impossible)
    if answer is not None:
        example.orig_answer_text, example.start_position, example.end_position = answer
    elif is_impossible:
        example.orig_answer_text = ""
    return example


@pytest.mark.parametrize("num_pieces, window, stride, expected", [
    (12, 5, 3, [(0, 5), (3, 5), (6, 5), (9, 3)]),
    (10, 4, 2, [(0, 4), (2, 4), (4, 4), (6, 4)]),
    (3, 5, 2, [(0, 3)]),
    # A stride longer than the window leaves gaps, as in the original.
    (10, 4, 5, [(0, 4), (4, 4), (8, 2)]),
    (0, 4, 2, []),
])
def test_doc_spans(num_pieces, window, stride, expected):
    assert windows.make_doc_spans(num_pieces, window, stride) == expected


@pytest.mark.parametrize("num_pieces, window, overlap, expected", [
    # Windows of 5 sharing 2 pieces start 3 apart; the last reaches the end.
    (12, 5, 2, [(0, 5), (3, 5), (6, 5), (9, 3)]),
    (10, 4, 1, [(0, 4), (3, 4), (6, 4)]),
    (3, 5, 2, [(0, 3)]),
    (0, 4, 2, []),
])
def test_doc_spans_with_an_overlap(num_pieces, window, overlap, expected):
    assert windows.make_doc_spans(num_pieces, window, overlap, "overlap") == expected


def test_an_overlap_places_windows_as_hugging_face_tokenizers_do():
    # A fast tokenizer's stride=128 with 237 context pieces a window: windows
    # start 109 apart, each 237 long, until one reaches the end.
    assert windows.make_doc_spans(400, 237, 128, "overlap") == [(0, 237), (109, 237),
                                                               (218, 182)]


def test_max_context_is_the_span_with_the_most_context_on_the_nearer_side():
    # The original's example: "the man went to the store and bought a gallon
    # of milk", spans of five words; "bought" (7) has min(4, 0) context in B
    # and min(1, 3) in C.
    spans = [(0, 5), (3, 5), (6, 5)]
    assert windows.check_is_max_context(spans, 2, 7)
    assert not windows.check_is_max_context(spans, 1, 7)
    # "to" (3): min(3, 1) in A, min(0, 4) in B.
    assert windows.check_is_max_context(spans, 0, 3)


def test_max_context_ties_go_to_the_longer_then_the_earlier_span():
    # Position 3 in (1, 4) and (2, 3): min(2, 1) and min(1, 1), both 1; the
    # longer (1, 4) wins.
    assert windows.check_is_max_context([(1, 4), (2, 3)], 0, 3)
    assert not windows.check_is_max_context([(1, 4), (2, 3)], 1, 3)
    # Equal spans: the earlier one wins.
    assert windows.check_is_max_context([(0, 4), (0, 4)], 0, 1)
    assert not windows.check_is_max_context([(0, 4), (0, 4)], 1, 1)


def test_windows_by_hand(tokenizer):
    example = _example(CONTEXT, answer=("gallon", 9, 9))
    # "who ?" is 2 pieces: 10 - 2 - 3 = 5 context pieces per window.
    features, stats = windows.convert_examples_to_features(
        [example], tokenizer, max_seq_length=10, doc_stride=3, max_query_length=4,
        is_training=True)
    assert [f.doc_span_index for f in features] == [0, 1, 2, 3]
    assert [f.unique_id for f in features] == [1000000000 + i for i in range(4)]
    second = features[1]
    assert second.tokens == ["[CLS]", "who", "?", "[SEP]", "to", "the", "store", "and",
                             "bought", "[SEP]"]
    assert second.token_to_orig_map == {4: 3, 5: 4, 6: 5, 7: 6, 8: 7}
    assert second.segment_ids == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert second.input_mask == [1] * 10
    assert second.input_ids == tokenizer.convert_tokens_to_ids(second.tokens)
    last = features[3]
    assert last.tokens == ["[CLS]", "who", "?", "[SEP]", "g", "##all", "##on", "[SEP]"]
    assert last.token_to_orig_map == {4: 9, 5: 9, 6: 9}
    assert last.input_ids[8:] == [0, 0] and last.input_mask == [1] * 8 + [0, 0]
    assert last.segment_ids == [0] * 4 + [1] * 4 + [0, 0]
    # Piece 9 ("g"): min(3, 1) in (6, 5), min(0, 2) in (9, 3); piece 10
    # ("##all"): min(4, 0) in (6, 5), min(1, 1) in (9, 3).
    assert features[2].token_is_max_context[7] and not last.token_is_max_context[4]
    assert last.token_is_max_context[5] and not features[2].token_is_max_context[8]
    # Only the last window holds the whole answer; the others point at [CLS].
    assert [(f.start_position, f.end_position) for f in features] == [
        (0, 0), (0, 0), (0, 0), (4, 6)]
    assert stats == {"truncated_questions": 0, "answer_out_of_window": 3}


def test_every_window_marks_max_context_as_check_is_max_context_does(tokenizer):
    example = _example(CONTEXT + " " + CONTEXT)
    features, _ = windows.convert_examples_to_features(
        [example], tokenizer, max_seq_length=11, doc_stride=2, max_query_length=4,
        is_training=False)
    spans = windows.make_doc_spans(24, 6, 2)
    assert len(features) == len(spans)
    for feature, (start, length) in zip(features, spans, strict=True):
        assert len(feature.token_is_max_context) == length
        for position, is_max in feature.token_is_max_context.items():
            assert is_max == windows.check_is_max_context(
                spans, feature.doc_span_index, start + position - 4)


def test_improve_answer_span_narrows_a_word_to_the_answers_pieces(tokenizer):
    # The original's example: "1895" annotated in the word "(1895-1943).".
    pieces = tokenizer.tokenize("The leader was John Smith (1895-1943).")
    assert pieces[5:13] == ["(", "18", "##9", "##5", "-", "1943", ")", "."]
    assert windows.improve_answer_span(pieces, 5, 12, tokenizer, "1895") == (6, 8)
    assert windows.improve_answer_span(pieces, 5, 12, tokenizer, "1943)") == (10, 11)


def test_improve_answer_span_keeps_an_answer_inside_a_piece(tokenizer):
    pieces = tokenizer.tokenize("The Japanese electronics industry")
    assert pieces[1] == "japanese"
    assert windows.improve_answer_span(pieces, 1, 1, tokenizer, "Japan") == (1, 1)


def test_training_positions_use_the_improved_span(tokenizer):
    example = _example("The leader was John Smith (1895-1943).", "When was he born?",
                       answer=("1895", 5, 5))
    (feature,), _ = windows.convert_examples_to_features(
        [example], tokenizer, 64, 16, 16, is_training=True)
    assert feature.tokens[feature.start_position:feature.end_position + 1] == [
        "18", "##9", "##5"]
    assert feature.token_to_orig_map[feature.start_position] == 5


def test_answer_on_the_last_word_ends_at_the_last_piece(tokenizer):
    example = _example(CONTEXT, answer=("a gallon", 8, 9))
    (feature,), _ = windows.convert_examples_to_features(
        [example], tokenizer, 64, 16, 16, is_training=True)
    assert feature.tokens[feature.start_position:feature.end_position + 1] == [
        "a", "g", "##all", "##on"]


def test_truncated_questions_are_counted(tokenizer):
    long_question = _example(CONTEXT, "Who was the leader?")  # 5 pieces
    short_question = _example(CONTEXT, "Who?")
    features, stats = windows.convert_examples_to_features(
        [long_question, short_question], tokenizer, 64, 16, max_query_length=3,
        is_training=False)
    assert features[0].tokens[:5] == ["[CLS]", "who", "was", "the", "[SEP]"]
    assert stats == {"truncated_questions": 1}
    assert features[0].start_position is None and features[0].end_position is None


def test_impossible_questions_point_at_cls_in_every_window(tokenizer):
    example = _example(CONTEXT, is_impossible=True)
    features, stats = windows.convert_examples_to_features(
        [example], tokenizer, 10, 3, 4, is_training=True)
    assert len(features) == 4
    assert all(f.is_impossible and (f.start_position, f.end_position) == (0, 0)
               for f in features)
    assert stats["answer_out_of_window"] == 0


def test_shared_contexts_give_the_features_of_separate_conversions(tokenizer):
    first = _example(CONTEXT, "Who?", answer=("store", 5, 5), qas_id="a")
    second = _example(CONTEXT, "What was bought?", answer=("a gallon", 8, 9), qas_id="b")
    other = _example("The store", "What?", answer=("store", 1, 1), qas_id="c")
    together, _ = windows.convert_examples_to_features(
        [first, other, second], tokenizer, 12, 3, 8, is_training=True, unique_id_start=7)
    alone = []
    for example_index, example in enumerate([first, other, second]):
        features, _ = windows.convert_examples_to_features(
            [example], tokenizer, 12, 3, 8, is_training=True)
        alone += [dataclasses.replace(f, example_index=example_index) for f in features]
    assert [f.unique_id for f in together] == list(range(7, 7 + len(together)))
    strip_id = [dataclasses.replace(f, unique_id=0) for f in together]
    assert strip_id == [dataclasses.replace(f, unique_id=0) for f in alone]


def test_settings_that_leave_no_room_or_never_advance_are_refused(tokenizer):
    example = _example(CONTEXT)
    with pytest.raises(ValueError, match="max_query_length"):
        windows.convert_examples_to_features([example], tokenizer, 67, 16, 64, False)
    with pytest.raises(ValueError, match="doc_stride"):
        windows.convert_examples_to_features([example], tokenizer, 68, 0, 64, False)
    # 68 - 60 - 3 = 5 context pieces cannot share 5 with the next window.
    with pytest.raises(ValueError, match="--doc_stride=5 pieces of overlap"):
        windows.convert_examples_to_features([example], tokenizer, 68, 5, 60, False,
                                             doc_stride_means="overlap")
    assert windows.convert_examples_to_features([example], tokenizer, 68, 4, 60, False,
                                                doc_stride_means="overlap")[0]
    with pytest.raises(ValueError, match="doc_stride_means"):
        windows.convert_examples_to_features([example], tokenizer, 68, 4, 60, False,
                                             doc_stride_means="gap")


def _read_records(path, max_seq_length, is_training):
    spec = input_pipeline.parsing_spec(question_answering_features(max_seq_length, is_training))
    return [{k: v.numpy() for k, v in tf.io.parse_single_example(r, spec).items()}
            for r in tf.data.TFRecordDataset(path)]


@pytest.mark.parametrize("is_training", [True, False])
def test_records_hold_the_windows_then_padding(tokenizer, tmp_path, is_training):
    example = _example(CONTEXT, answer=("gallon", 9, 9))
    features, _ = windows.convert_examples_to_features(
        [example], tokenizer, 10, 3, 4, is_training=is_training)
    path = str(tmp_path / "squad.tf_record")
    written = protocol.write_records(
        path, [records.window_record(f, 10, is_training) for f in features],
        question_answering_features(10, is_training), pad_to_multiple_of=3)
    assert len(features) == 4 and written == 6
    read = _read_records(path, 10, is_training)
    assert len(read) == 6
    for record, feature in zip(read, features, strict=False):
        assert record["unique_ids"] == [feature.unique_id]
        np.testing.assert_array_equal(record["input_ids"], feature.input_ids)
        np.testing.assert_array_equal(record["input_mask"], feature.input_mask)
        np.testing.assert_array_equal(record["segment_ids"], feature.segment_ids)
        assert record["is_real_example"] == [1]
        assert ("start_positions" in record) == is_training
        if is_training:
            assert record["start_positions"] == [feature.start_position]
            assert record["end_positions"] == [feature.end_position]
    for padding in read[4:]:
        assert padding["is_real_example"] == [0] and padding["unique_ids"] == [0]
        assert not padding["input_mask"].any()


def test_training_records_need_answer_positions_and_the_length(tokenizer):
    features, _ = windows.convert_examples_to_features(
        [_example(CONTEXT)], tokenizer, 10, 3, 4, is_training=False)
    with pytest.raises(ValueError, match="is_training=True"):
        records.window_record(features[0], 10, is_training=True)
    with pytest.raises(ValueError, match="has 10 tokens, not max_seq_length=12"):
        records.window_record(features[0], 12, is_training=False)


def _squad_file(path, questions):
    """A SQuAD 1.1 json of one paragraph (CONTEXT): {id: answer text}."""
    qas = [{"id": qid, "question": "What did he buy?",
            "answers": [{"text": answer, "answer_start": CONTEXT.index(answer)}]}
           for qid, answer in questions.items()]
    data = {"version": "1.1",
            "data": [{"title": "t", "paragraphs": [{"context": CONTEXT, "qas": qas}]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("epoch_unit, per_epoch", [("questions", 3), ("windows", 12)])
def test_squad_data_counts_an_epoch_and_lets_the_training_windows_go(tokenizer, tmp_path,
                                                                     epoch_unit, per_epoch):
    train = _squad_file(tmp_path / "train.json", {"a": "gallon", "b": "store", "c": "man"})
    dev = _squad_file(tmp_path / "dev.json", {"d": "gallon"})
    # 12 tokens a window, 4 of them context: 3 questions x 4 windows.
    settings = squad.SquadSettings(max_seq_length=12, doc_stride=3, max_query_length=4)
    data = squad.SquadData(settings, tokenizer, train_file=train, predict_file=dev,
                           epoch_unit=epoch_unit)
    data.read(["train", "eval"])
    data.read(["train"])  # Read once.
    assert data.num_train_examples() == per_epoch
    assert data.describe("train") == "3 questions in 12 windows"
    train_records = data.records("train")
    assert len(train_records) == 12 and "start_positions" in train_records[0]
    assert "train" not in data.windows and data.describe("train") == "3 questions in 12 windows"
    references = data.references("eval")
    assert [e.qas_id for e in references.examples] == ["d"] and references.dataset == dev
    assert [r["unique_ids"] for r in data.records("eval")] == [
        w.unique_id for w in references.windows]


def test_squad_data_refuses_a_predict_file_without_questions(tokenizer, tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"version": "1.1", "data": []}), encoding="utf-8")
    settings = squad.SquadSettings(max_seq_length=12, doc_stride=3, max_query_length=4)
    with pytest.raises(ValueError, match="empty.json: no question to predict"):
        squad.SquadData(settings, tokenizer, predict_file=str(path)).read(["eval"])
