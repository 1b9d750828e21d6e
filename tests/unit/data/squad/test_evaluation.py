"""Tests for bert_tf/data/squad/scoring.py: the official SQuAD exact match and F1."""

import json

import pytest

from bert_tf.data.squad import reading, scoring


def _qa(qid, answers):
    return {"id": qid, "question": "?", "is_impossible": not answers,
            "answers": [{"text": text, "answer_start": 0} for text in answers]}


DATASET = {"version": "v2.0", "data": [{"title": "T", "paragraphs": [
    {"context": "Steve Smith lived in Paris.", "qas": [
        _qa("q1", ["Steve Smith", "the Steve Smith team"]),
        _qa("q2", ["Paris"]),
        _qa("q3", []),
        _qa("q4", []),
    ]}]}]}
PREDICTIONS = {"q1": "Smith", "q2": "paris!", "q3": "", "q4": "London"}
# q1: F1 2/3 against "Steve Smith" (precision 1, recall 1/2), 1/2 against
# "steve smith team"; q2 matches; q3 is rightly empty; q4 is wrong.
Q1_F1 = 2 / 3


@pytest.mark.parametrize("text, expected", [
    ("The  Quick, brown fox!", "quick brown fox"),
    ("an apple a day", "apple day"),
    ("theater", "theater"),
    ("(1895-1943).", "18951943"),
])
def test_normalize_answer(text, expected):
    assert scoring.normalize_answer(text) == expected


def test_exact_match_and_f1():
    assert scoring.exact_match_score("The Cat!", "cat") == 1
    assert scoring.exact_match_score("cats", "cat") == 0
    assert scoring.f1_score("the cat sat", "cat sat on mat") == pytest.approx(2 / 3)
    # Shared words count as often as both have them.
    assert scoring.f1_score("x x y", "x y y") == pytest.approx(2 / 3)
    assert scoring.f1_score("dog", "cat") == 0.0
    # "No answer": right only against "no answer".
    assert scoring.f1_score("", "") == 1.0
    assert scoring.f1_score("the", "") == 1.0
    assert scoring.f1_score("", "cat") == 0.0


def test_evaluate_v2_by_hand():
    results = scoring.evaluate(DATASET, PREDICTIONS)
    assert results == pytest.approx({
        "exact": 50.0, "f1": 100 * (Q1_F1 + 2) / 4, "total": 4,
        "HasAns_exact": 50.0, "HasAns_f1": 100 * (Q1_F1 + 1) / 2, "HasAns_total": 2,
        "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2,
    })


def test_evaluate_takes_a_path_or_the_data_list(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    expected = scoring.evaluate(DATASET, PREDICTIONS)
    assert scoring.evaluate(str(path), PREDICTIONS) == expected
    assert scoring.evaluate(path, PREDICTIONS) == expected
    assert scoring.evaluate(DATASET["data"], PREDICTIONS) == expected


def test_answerable_only_dataset_has_no_noans_figures():
    results = scoring.evaluate(scoring.answerable_questions(DATASET), PREDICTIONS)
    assert set(results) == {"exact", "f1", "total", "HasAns_exact", "HasAns_f1",
                            "HasAns_total"}
    assert results["total"] == 2 and results["exact"] == 50.0


def test_na_probs_threshold_and_best_threshold():
    na_probs = {"q1": 0.9, "q2": 0.1, "q3": 0.8, "q4": 0.7}
    results = scoring.evaluate(DATASET, PREDICTIONS, na_probs=na_probs)
    # Nothing exceeds the default threshold 1.0.
    assert results["exact"] == 50.0
    # From "all unanswerable" (2 right): q2 (+1, best: 3 of 4), q4 (-1: it
    # has a prediction), q3 (0: rightly empty), q1 (+0 exact, +2/3 F1).
    assert results["best_exact"] == 75.0 and results["best_exact_thresh"] == 0.1
    assert results["best_f1"] == 75.0 and results["best_f1_thresh"] == 0.1
    # Above 0.5, q1, q3 and q4 count as predicted unanswerable: q1 wrong, q3
    # and q4 right.
    results = scoring.evaluate(DATASET, PREDICTIONS, na_probs=na_probs, na_prob_thresh=0.5)
    assert results["exact"] == 75.0 and results["f1"] == 75.0
    assert results["NoAns_exact"] == 100.0 and results["HasAns_f1"] == 50.0


def test_best_threshold_can_keep_every_answer():
    na_probs = {"q1": 0.9, "q2": 0.95, "q3": 0.1, "q4": 0.2}
    predictions = dict(PREDICTIONS, q4="")
    results = scoring.evaluate(DATASET, predictions, na_probs=na_probs)
    # q3 and q4 are rightly empty (2), then q1 and q2 add 0 + 1 exact.
    assert results["best_exact"] == 75.0 and results["best_exact_thresh"] == 0.95
    assert results["best_f1"] == pytest.approx(100 * (2 + Q1_F1 + 1) / 4)


def test_missing_predictions_score_zero():
    predictions = {k: v for k, v in PREDICTIONS.items() if k != "q2"}
    results = scoring.evaluate(DATASET, predictions)
    assert results["total"] == 4 and results["exact"] == 25.0
    assert results["HasAns_f1"] == pytest.approx(100 * Q1_F1 / 2)


def test_evaluate_v1_by_hand():
    dataset = scoring.answerable_questions(DATASET)
    dataset[0]["paragraphs"][0]["qas"].append(_qa("q5", ["x"]))
    # q5 has no prediction and scores 0, as evaluate-v1.1.py scores it.
    results = scoring.evaluate_v1(dataset, PREDICTIONS)
    assert results == pytest.approx({"exact_match": 100 / 3, "f1": 100 * (Q1_F1 + 1) / 3})


def test_evaluate_v1_gives_no_f1_for_two_empty_answers():
    dataset = [{"paragraphs": [{"qas": [_qa("q1", ["The"])]}]}]
    assert scoring.evaluate_v1(dataset, {"q1": "a"}) == {"exact_match": 100.0, "f1": 0.0}
    # v2.0 drops the gold answer that normalizes to nothing, and "a" is "".
    assert scoring.evaluate(dataset, {"q1": "a"})["f1"] == 100.0


def test_evaluate_v1_refuses_unanswerable_questions():
    with pytest.raises(reading.SquadDataError, match="answerable_questions"):
        scoring.evaluate_v1(DATASET, PREDICTIONS)


def test_answerable_questions_leaves_the_input_alone():
    filtered = scoring.answerable_questions(DATASET)
    assert [qa["id"] for qa in filtered[0]["paragraphs"][0]["qas"]] == ["q1", "q2"]
    assert len(DATASET["data"][0]["paragraphs"][0]["qas"]) == 4


def test_question_without_answers_is_a_data_error():
    dataset = [{"paragraphs": [{"qas": [{"id": "q9", "question": "?"}]}]}]
    with pytest.raises(reading.SquadDataError, match="q9.*'answers'"):
        scoring.evaluate(dataset, {})
