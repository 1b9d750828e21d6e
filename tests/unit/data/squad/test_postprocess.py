"""Tests for bert_tf/data/squad/outputs.py: logits -> answer texts, n-best lists, null odds."""

import json
import math
import os

import numpy as np
import pytest

from bert_tf.data.squad import outputs, reading, windows
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "tokenization_vocab_small.txt")
# Tokens: [CLS] who ? [SEP] steve(4) smith ' s team won in paris ( 18(13) ##9 ##5(15) ) . [SEP]
CONTEXT = "Steve Smith's team won in Paris (1895)."
MAX_SEQ_LENGTH = 24


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB, do_lower_case=True)


def _convert(tokenizer, max_seq_length=MAX_SEQ_LENGTH, doc_stride=8):
    doc_tokens, offsets = reading.split_context(CONTEXT)
    example = reading.SquadExample("q1", "Who?", CONTEXT, doc_tokens, offsets)
    features, _ = windows.convert_examples_to_features(
        [example], tokenizer, max_seq_length, doc_stride, 8, is_training=False)
    return [example], features


def _logits(values, length=MAX_SEQ_LENGTH):
    """-10 everywhere except at the given {position: logit}."""
    logits = [-10.0] * length
    for position, value in values.items():
        logits[position] = value
    return logits


# Start at "steve" (5) or "18" (4); end at "##5" (5) or "smith" (3).
START = _logits({4: 5.0, 13: 4.0})
END = _logits({15: 5.0, 5: 3.0})


@pytest.mark.parametrize("pred_text, orig_text, do_lower_case, expected", [
    # The original's example: the possessive is cut, the casing kept.
    ("steve smith", "Steve Smith's", True, "Steve Smith"),
    # Accents stripped in the pieces come back from the context.
    ("cafe muller", "Café Müller's", True, "Café Müller"),
    # Punctuation split off by tokenization.
    ("1895", "(1895-1943).", True, "1895"),
    ("1895 - 1943", "(1895-1943).", True, "1895-1943"),
    ("Smith", "Smith's", False, "Smith"),
    # Not found (casing differs in a cased model): the whole original text.
    ("smith", "Smith's", False, "Smith's"),
    # A soft hyphen is deleted by tokenization: the characters no longer align.
    ("foobar", "Foo\u00adbar", True, "Foo\u00adbar"),
])
def test_get_final_text(pred_text, orig_text, do_lower_case, expected):
    assert outputs.get_final_text(pred_text, orig_text, do_lower_case) == expected


def test_nbest_ranks_valid_spans_and_respects_max_answer_length(tokenizer):
    examples, features = _convert(tokenizer)
    results = {features[0].unique_id: (START, np.array(END, dtype=np.float32))}
    predictions, nbest, null_odds = outputs.write_predictions(
        examples, features, results, n_best_size=3, max_answer_length=30,
        do_lower_case=True)
    # Pairs from the 3 best starts (4, 13, then 0) and ends (15, 5, 0):
    # starts at [CLS] and ends before starts are dropped.
    assert [e["text"] for e in nbest["q1"]] == [
        "Steve Smith's team won in Paris (1895", "1895", "Steve Smith"]
    assert predictions == {"q1": "Steve Smith's team won in Paris (1895"}
    assert null_odds == {}

    predictions, nbest, _ = outputs.write_predictions(
        examples, features, results, n_best_size=3, max_answer_length=5, do_lower_case=True)
    # The 12-piece span is too long now.
    assert predictions == {"q1": "1895"}
    entries = nbest["q1"]
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in entries] == [
        ("1895", 4.0, 5.0), ("Steve Smith", 5.0, 3.0)]
    assert entries[0]["probability"] == pytest.approx(math.e / (1 + math.e))
    assert sum(e["probability"] for e in entries) == pytest.approx(1.0)
    assert all(type(e["start_logit"]) is float for e in entries)


def test_the_answer_is_the_best_span_even_where_the_n_best_pairs_miss_it(tokenizer):
    examples, features = _convert(tokenizer)
    results = {features[0].unique_id: (START, END)}
    # The one best start (4) and end (15) span 12 pieces, more than 5: the
    # original's only pair is no answer, and it answered "empty". Every pair
    # scored, (13, 15) is the best within 5 pieces.
    predictions, nbest, _ = outputs.write_predictions(
        examples, features, results, n_best_size=1, max_answer_length=5, do_lower_case=True)
    assert predictions == {"q1": "1895"}
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest["q1"]] == [
        ("1895", 4.0, 5.0)]
    # SQuAD 2.0 weighs the same span against the null score.
    start, end = list(START), list(END)
    start[0], end[0] = 4.0, 4.0
    results = {features[0].unique_id: (start, end)}
    for threshold, expected in ((0.0, "1895"), (-2.0, "")):
        predictions, nbest, null_odds = outputs.write_predictions(
            examples, features, results, 1, 5, True, version_2_with_negative=True,
            null_score_diff_threshold=threshold)
        assert predictions == {"q1": expected} and null_odds == {"q1": -1.0}
        assert [e["text"] for e in nbest["q1"]] == ["1895", ""]


def test_no_valid_span_gives_the_originals_placeholder(tokenizer):
    examples, features = _convert(tokenizer)
    results = {features[0].unique_id: (START, END)}
    predictions, nbest, _ = outputs.write_predictions(
        examples, features, results, n_best_size=3, max_answer_length=0, do_lower_case=True)
    assert predictions == {"q1": "empty"}
    assert nbest["q1"] == [{"text": "empty", "probability": 1.0, "start_logit": 0.0,
                            "end_logit": 0.0}]


def test_v2_null_threshold(tokenizer):
    examples, features = _convert(tokenizer)
    start, end = list(START), list(END)
    start[0], end[0] = 2.0, 3.0
    results = {features[0].unique_id: (start, end)}

    def predict(threshold):
        return outputs.write_predictions(
            examples, features, results, 3, 5, True, version_2_with_negative=True,
            null_score_diff_threshold=threshold)

    predictions, nbest, null_odds = predict(0.0)
    # Null score 2 + 3 = 5 against the best answer's 4 + 5 = 9.
    assert null_odds == {"q1": -4.0}
    assert predictions == {"q1": "1895"}
    assert [e["text"] for e in nbest["q1"]] == ["1895", "Steve Smith", ""]
    assert predict(-4.0)[0] == {"q1": "1895"}
    assert predict(-4.5)[0] == {"q1": ""}


def test_v2_null_score_is_the_smallest_over_windows(tokenizer):
    examples, features = _convert(tokenizer, max_seq_length=14, doc_stride=9)
    assert len(features) == 2
    first, second = features
    # Windows of 9 context pieces: the second starts at piece 9 ("18").
    assert second.tokens[4:7] == ["18", "##9", "##5"]
    results = {
        first.unique_id: (_logits({0: 1.0, 4: 5.0}, 14), _logits({0: 1.0, 5: 3.0}, 14)),
        second.unique_id: (_logits({0: -1.0, 4: 4.0}, 14), _logits({0: 0.5, 6: 5.0}, 14)),
    }
    predictions, nbest, null_odds = outputs.write_predictions(
        examples, features, results, 5, 30, True, version_2_with_negative=True)
    assert predictions == {"q1": "1895"}
    assert null_odds == {"q1": -0.5 - 9.0}
    null_entry = next(e for e in nbest["q1"] if e["text"] == "")
    assert (null_entry["start_logit"], null_entry["end_logit"]) == (-1.0, 0.5)


def test_v2_without_any_answer_span_predicts_no_answer(tokenizer):
    examples, features = _convert(tokenizer)
    start, end = _logits({0: 1.0}), _logits({0: 2.0})
    predictions, nbest, null_odds = outputs.write_predictions(
        examples, features, {features[0].unique_id: (start, end)}, 3, 0, True,
        version_2_with_negative=True)
    assert predictions == {"q1": ""} and null_odds == {"q1": 3.0}
    assert [e["text"] for e in nbest["q1"]] == [""]


def test_output_files_hold_the_originals_layout(tokenizer, tmp_path):
    examples, features = _convert(tokenizer)
    start, end = list(START), list(END)
    start[0], end[0] = 2.0, 3.0
    returned = outputs.write_predictions(
        examples, features, {features[0].unique_id: (start, end)}, 3, 5, True,
        version_2_with_negative=True, output_dir=str(tmp_path))
    names = ("predictions.json", "nbest_predictions.json", "null_odds.json")
    assert sorted(os.listdir(tmp_path)) == sorted(names)
    for name, value in zip(names, returned, strict=True):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert text == json.dumps(value, indent=4) + "\n"
        assert json.loads(text) == value


def test_a_window_without_result_is_an_error(tokenizer):
    examples, features = _convert(tokenizer)
    with pytest.raises(ValueError, match=str(features[0].unique_id)):
        outputs.write_predictions(examples, features, {}, 3, 5, True)
