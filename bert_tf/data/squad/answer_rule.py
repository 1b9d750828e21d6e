"""SQuAD's answer rule: which span of a question's windows is its answer, and when none is.

The rule is written once, here. run_squad.py's predictions.json applies it
with numpy (outputs.write_predictions calls best_span, null_score and
abstains); the raw-text export applies it in its graph
(serving/question_answering.py's best_spans and best_answers), and
tests/test_question_answering_task.py checks that the graph's choice is
this module's on the same logits.

For one question, read through one or more windows of start and end logits:

1. A span (start, end) of a window is valid when both are context pieces
   of the window, the start is a piece the window scores (the window where
   it has the most context, windows.check_is_max_context), the end does not
   precede the start, and the span is at most max_answer_length pieces.
2. A span's score is start_logit[start] + end_logit[end], added in float32.
3. The answer is the valid span of highest score over all the question's
   windows. Every valid pair is scored, so this is the true best span; the
   original run_squad.py scored only the pairs of each window's
   n_best_size best starts and n_best_size best ends, and missed it when
   its start or its end was not among those (bench/squad_answer_rule.py
   measures how often). A tie goes to the earliest window, then the
   smallest start, then the smallest end.
4. SQuAD 2.0 (version_2_with_negative): the null score is the lowest
   start_logit + end_logit at position 0 ([CLS]) over the windows. The
   question has no answer when its null score exceeds the best span's
   score by more than null_score_diff_threshold (in float32), or when no
   span is valid.
"""

import collections

import numpy as np

Span = collections.namedtuple("Span", ["window", "start", "end", "score"])


def best_span(start_logits, end_logits, context_start, context_length, start_allowed,
              max_answer_length):
    """The best valid span over a question's windows: rules 1 to 3.

    Args:
      start_logits, end_logits: float [windows, seq], the question's windows
        in order.
      context_start: int [windows], the column of each window's first
        context piece.
      context_length: int [windows], its number of context pieces.
      start_allowed: bool [windows, seq], the columns each window scores
        (its max-context pieces).
      max_answer_length: The most pieces a span holds; below 1, no span
        is valid.

    Returns:
      A Span (window index, start and end columns, end inclusive, and the
      float32 score), or None when no span is valid.
    """
    if max_answer_length < 1:
        return None
    start_logits = np.asarray(start_logits, np.float32)
    end_logits = np.asarray(end_logits, np.float32)
    num_windows, seq = start_logits.shape
    column = np.arange(seq)
    context_start = np.asarray(context_start)[:, np.newaxis]
    # [windows, seq]
    in_context = ((column >= context_start)
                  & (column < context_start + np.asarray(context_length)[:, np.newaxis]))
    starts = in_context & np.asarray(start_allowed, bool)
    # Spans are (start, start + offset), offset < max_answer_length: the
    # columns past the window's end score -inf and are never in the context.
    width = max_answer_length
    padded_ends = np.concatenate([end_logits, np.full([num_windows, width - 1], -np.inf,
                                                      np.float32)], axis=1)
    padded_context = np.concatenate([in_context, np.zeros([num_windows, width - 1], bool)],
                                    axis=1)
    # [windows, start, offset]
    ends = np.lib.stride_tricks.sliding_window_view(padded_ends, width, axis=1)
    valid = (starts[:, :, np.newaxis]
             & np.lib.stride_tricks.sliding_window_view(padded_context, width, axis=1))
    scores = np.where(valid, start_logits[:, :, np.newaxis] + ends, -np.inf)
    if not valid.any():
        return None
    # argmax takes the first of equal scores: in (window, start, end) order.
    window, start, offset = np.unravel_index(np.argmax(scores), scores.shape)
    return Span(int(window), int(start), int(start + offset),
                np.float32(scores[window, start, offset]))


def null_score(start_logits, end_logits):
    """The no-answer score of rule 4: the lowest [CLS] start + end logit over the windows.

    Args:
      start_logits, end_logits: float [windows, seq].

    Returns:
      A float32.
    """
    return np.min(np.asarray(start_logits, np.float32)[:, 0]
                  + np.asarray(end_logits, np.float32)[:, 0])


def abstains(null, span_score, null_score_diff_threshold):
    """Whether a SQuAD 2.0 question goes unanswered although a span is valid: rule 4.

    Args:
      null: null_score()'s float32.
      span_score: The best span's float32 score.
      null_score_diff_threshold: As squad.SquadSettings'.

    Returns:
      True when the null score beats the span's by more than the threshold.
    """
    return bool(np.float32(null) - np.float32(span_score)
                > np.float32(null_score_diff_threshold))
