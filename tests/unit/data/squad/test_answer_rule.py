"""Tests for bert_tf/data/squad/answer_rule.py, and that the export's graph chooses as it does.

The rule on hand-made logits (the span the original's n-best search misses,
ties, lengths, the max-context rule, SQuAD 2.0's null score), then
serving/question_answering.best_answers against it on random logits and
window layouts, ties included.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.squad import answer_rule
from bert_tf.serving import question_answering


def _window(values, seq=10):
    """Logits of -5 everywhere except at the given {column: logit}."""
    logits = np.full(seq, -5.0, np.float32)
    for column, value in values.items():
        logits[column] = value
    return logits


def _best(starts, ends, context_start=2, context_length=7, allowed=None, max_answer_length=30):
    starts, ends = np.array(starts), np.array(ends)
    windows, seq = starts.shape
    if allowed is None:
        allowed = np.ones([windows, seq], bool)
    return answer_rule.best_span(starts, ends, [context_start] * windows,
                                 [context_length] * windows, allowed, max_answer_length)


def test_every_pair_is_scored_where_the_best_starts_and_ends_do_not_pair():
    # The two best starts (7, 8) come after the two best ends (3, 4): no pair
    # of n_best_size=2 is valid, but (5, 6) scores 3 + 2 and is the answer.
    starts = [_window({7: 9.0, 8: 8.0, 5: 3.0})]
    ends = [_window({3: 9.0, 4: 8.0, 6: 2.0})]
    assert _best(starts, ends) == (0, 5, 6, np.float32(5.0))
    # Single pieces: (3, 3) and (7, 7) both score 4; the smaller start wins.
    assert _best(starts, ends, max_answer_length=1) == (0, 3, 3, np.float32(4.0))


def test_only_context_pieces_the_window_scores_may_start_an_answer():
    starts = [_window({1: 20.0, 3: 1.0, 5: 4.0})]
    ends = [_window({1: 20.0, 5: 1.0, 9: 20.0})]
    # Column 1 is the question's, column 9 the final [SEP]: no answer there.
    assert _best(starts, ends) == (0, 5, 5, np.float32(5.0))
    allowed = np.ones([1, 10], bool)
    allowed[0, 5] = False
    # Column 5 is scored in another window: the start moves to 3.
    assert _best(starts, ends, allowed=allowed) == (0, 3, 5, np.float32(2.0))
    assert _best(starts, ends, context_length=0) is None
    assert _best(starts, ends, max_answer_length=0) is None


def test_ties_go_to_the_earliest_window_then_start_then_end():
    starts = [_window({3: 1.0, 4: 1.0}), _window({2: 1.0})]
    ends = [_window({5: 1.0, 6: 1.0}), _window({2: 1.0})]
    assert _best(starts, ends) == (0, 3, 5, np.float32(2.0))
    # A higher score in the second window wins over the first's.
    ends[1][2] = 1.5
    assert _best(starts, ends) == (1, 2, 2, np.float32(2.5))


def test_v2_null_score_is_the_lowest_cls_score_and_abstains_beyond_the_threshold():
    starts = np.array([_window({0: 2.0}), _window({0: 1.0})])
    ends = np.array([_window({0: 1.0}), _window({0: 1.5})])
    null = answer_rule.null_score(starts, ends)
    assert null == np.float32(2.5)
    assert not answer_rule.abstains(null, 2.5, 0.0)
    assert answer_rule.abstains(null, 2.0, 0.0)
    assert not answer_rule.abstains(null, 2.0, 0.5)
    assert answer_rule.abstains(null, 2.0, 0.4)


def _random_batch(rng, num_questions, seq, integer_logits):
    """Random logits and window layouts: 1 to 4 windows a question, some without context."""
    windows = rng.integers(1, 5, size=num_questions)
    question = np.repeat(np.arange(num_questions), windows)
    total = len(question)
    context_start = rng.integers(1, 5, size=total)
    context_length = rng.integers(0, seq - context_start)
    allowed = rng.random([total, seq]) < 0.7
    if integer_logits:
        # Few values: many spans tie.
        start = rng.integers(-3, 4, size=[total, seq]).astype(np.float32)
        end = rng.integers(-3, 4, size=[total, seq]).astype(np.float32)
    else:
        start = rng.normal(size=[total, seq]).astype(np.float32)
        end = rng.normal(size=[total, seq]).astype(np.float32)
    return question, context_start, context_length, allowed, start, end


@pytest.mark.parametrize("integer_logits", [True, False])
@pytest.mark.parametrize("max_answer_length", [1, 3, 30])
def test_the_exports_graph_chooses_as_the_rule_does(integer_logits, max_answer_length):
    rng = np.random.default_rng(max_answer_length + 10 * integer_logits)
    num_questions, seq = 60, 12
    question, context_start, context_length, allowed, start, end = _random_batch(
        rng, num_questions, seq, integer_logits)
    for version_2, threshold in ((False, 0.0), (True, 0.0), (True, -1.0), (True, 1.5)):
        window, begin, finish, score, has_answer = [t.numpy() for t in (
            question_answering.best_answers(
                tf.constant(start), tf.constant(end), tf.constant(question, tf.int64),
                tf.constant(context_start, tf.int64), tf.constant(context_length, tf.int64),
                tf.constant(allowed), num_questions, max_answer_length, version_2, threshold))]
        outcomes = set()
        for q in range(num_questions):
            rows = np.flatnonzero(question == q)
            span = answer_rule.best_span(start[rows], end[rows], context_start[rows],
                                         context_length[rows], allowed[rows],
                                         max_answer_length)
            null = answer_rule.null_score(start[rows], end[rows])
            if span is None:
                outcome = "no span"
                assert (has_answer[q], score[q]) == (False, 0.0)
            elif version_2 and answer_rule.abstains(null, span.score, threshold):
                outcome = "abstains"
                assert (has_answer[q], score[q]) == (False, null)
            else:
                outcome = "answers"
                assert has_answer[q]
                assert (window[q], begin[q], finish[q], score[q]) == (
                    rows[span.window], span.start, span.end, span.score)
            outcomes.add(outcome)
        # Each case of the rule is met, so that the comparison means something.
        assert {"no span", "answers"} <= outcomes
        if version_2 and threshold <= 0:
            assert "abstains" in outcomes
