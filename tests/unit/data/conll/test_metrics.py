"""Tests for bert_tf.data.conll.scoring: conlleval's chunk rules, hand-computed scores, seqeval."""

import json
import os

import pytest

from bert_tf.data import conll
from tests import helpers

TYPES = ("PER", "LOC", "ORG", "MISC")


def test_entity_spans_follow_conlleval():
    assert conll.entity_spans([]) == []
    assert conll.entity_spans(["O", "O"]) == []
    assert conll.entity_spans(["B-PER", "I-PER", "O", "B-LOC"]) == [
        ("PER", 0, 2), ("LOC", 3, 4)]
    # B- always starts an entity, even after the same type.
    assert conll.entity_spans(["B-PER", "B-PER", "I-PER"]) == [("PER", 0, 1), ("PER", 1, 3)]
    # I- after O, at the start, or after another type starts an entity (IOB1).
    assert conll.entity_spans(["O", "I-PER", "I-PER", "O"]) == [("PER", 1, 3)]
    assert conll.entity_spans(["I-ORG", "I-ORG"]) == [("ORG", 0, 2)]
    assert conll.entity_spans(["B-PER", "I-LOC", "I-LOC", "B-LOC"]) == [
        ("PER", 0, 1), ("LOC", 1, 3), ("LOC", 3, 4)]
    # An entity that runs to the end is closed there.
    assert conll.entity_spans(("O", "B-MISC", "I-MISC")) == [("MISC", 1, 3)]
    # Types may hold hyphens.
    assert conll.entity_spans(["B-GPE-X", "I-GPE-X"]) == [("GPE-X", 0, 2)]


def test_entity_spans_refuse_other_tags():
    for tag in ("E-PER", "S-PER", "B-", "X", "", None):
        with pytest.raises(ValueError, match="at position 1"):
            conll.entity_spans(["O", tag])


def test_perfect_prediction():
    tags = [["B-PER", "I-PER", "O"], ["B-LOC"], []]
    scores = conll.entity_scores(tags, tags)
    assert scores == {
        "precision": 1.0, "recall": 1.0, "f1": 1.0,
        "LOC_precision": 1.0, "LOC_recall": 1.0, "LOC_f1": 1.0, "LOC_support": 1,
        "PER_precision": 1.0, "PER_recall": 1.0, "PER_f1": 1.0, "PER_support": 1,
        "token_accuracy": 1.0,
    }


def test_one_wrong_type():
    true = [["B-PER", "I-PER", "O", "B-LOC"]]
    pred = [["B-ORG", "I-ORG", "O", "B-LOC"]]
    scores = conll.entity_scores(true, pred)
    assert (scores["precision"], scores["recall"], scores["f1"]) == (0.5, 0.5, 0.5)
    # A type only predicted is reported, with support 0.
    assert (scores["ORG_precision"], scores["ORG_recall"], scores["ORG_support"]) == (0, 0, 0)
    assert (scores["PER_precision"], scores["PER_recall"], scores["PER_support"]) == (0, 0, 1)
    assert (scores["LOC_precision"], scores["LOC_f1"]) == (1.0, 1.0)
    assert scores["token_accuracy"] == 0.5


def test_partial_span_is_wrong():
    scores = conll.entity_scores([["B-PER", "I-PER", "I-PER", "O"]],
                                 [["B-PER", "I-PER", "O", "O"]])
    assert (scores["precision"], scores["recall"], scores["f1"]) == (0.0, 0.0, 0.0)
    assert scores["token_accuracy"] == 0.75


def test_i_after_o_matches_b():
    # conlleval reads "O I-PER I-PER" as the entity "B-PER I-PER".
    scores = conll.entity_scores([["O", "B-PER", "I-PER", "O"]],
                                 [["O", "I-PER", "I-PER", "O"]])
    assert scores["f1"] == 1.0
    assert scores["token_accuracy"] == 0.75


def test_micro_average_over_sentences():
    true = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["B-ORG"]]
    scores = conll.entity_scores(true, pred)
    assert scores["precision"] == 1.0
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(0.8)
    assert scores["token_accuracy"] == pytest.approx(4 / 5)
    assert (scores["LOC_recall"], scores["LOC_f1"], scores["LOC_support"]) == (0, 0, 1)


def test_nothing_to_score():
    assert conll.entity_scores([], []) == {
        "precision": 0.0, "recall": 0.0, "f1": 0.0, "token_accuracy": 0.0}
    scores = conll.entity_scores([["O", "B-PER"]], [["O", "O"]])
    assert (scores["precision"], scores["recall"], scores["f1"]) == (0.0, 0.0, 0.0)


def test_mismatched_inputs():
    with pytest.raises(ValueError, match="2 true sentences but 1 predicted"):
        conll.entity_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 1: 2 true tags but 1 predicted"):
        conll.entity_scores([["O"], ["O", "O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="sentence 0: tag 'E-PER' at position 0"):
        conll.entity_scores([["O"]], [["E-PER"]])


def test_equals_seqeval_on_random_sequences():
    # seqeval's default (lenient) mode follows conlleval: its scores of 20
    # batches of 10 random sentences, recorded by tools/make_seqeval_reference.py
    # (seqeval needs scikit-learn, which the tests leave out).
    with open(os.path.join(helpers.FIXTURES, "seqeval_reference.json"), encoding="utf-8") as f:
        reference = json.load(f)
    compared_types = set()
    for batch in reference["batches"]:
        true, pred = batch["true"], batch["pred"]
        scores = conll.entity_scores(true, pred)
        for name in ("precision", "recall", "f1", "token_accuracy"):
            assert scores[name] == pytest.approx(batch[name]), name
        types = set(batch["types"])
        assert types == {key[: -len("_support")] for key in scores if key.endswith("_support")}
        for type_, expected in batch["types"].items():
            assert scores[f"{type_}_precision"] == pytest.approx(expected["precision"])
            assert scores[f"{type_}_recall"] == pytest.approx(expected["recall"])
            assert scores[f"{type_}_f1"] == pytest.approx(expected["f1"])
            assert scores[f"{type_}_support"] == expected["support"]
        compared_types |= types
        # The spans themselves, sentence by sentence.
        for tags, spans in zip(true + pred, batch["spans"], strict=True):
            assert conll.entity_spans(tags) == [tuple(span) for span in spans]
    assert len(reference["batches"]) == 20
    assert compared_types == set(TYPES)
