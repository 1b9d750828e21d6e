"""The raw-text export of question answering (QuestionAnsweringTask, SQuAD).

serving_module() builds a QuestionAnsweringServingModule from a trained
encoder and span head, reading a context in the windows of the run's
squad.SquadSettings and choosing the answer as its settings say. The
windows, the max-context rule and the answer are computed for a whole
batch in the graph (context_windows, max_context_starts, best_spans,
best_answers). The answer is chosen by data/squad/answer_rule.py's rule, the one
run_squad.py's predictions.json follows: the tests check the graph against
it on the same logits. predict_answers.py (TOOL) runs the export on
questions and contexts from a file or its flags.
"""

import numpy as np
import tensorflow as tf

from bert_tf.model.heads import SpanHead
from bert_tf.serving import served_model

# The script that runs this export on questions and contexts; the export records it.
TOOL = "predict_answers.py"


def serving_module(task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                   shapes="dynamic", jit_compile=False):
    """A QuestionAnsweringServingModule whose "serving_default" takes questions and contexts.

    Args:
      task: The tasks.QuestionAnsweringTask trained; its settings (a
        squad.SquadSettings) give the windows and the answers' rules.
      encoder, heads, vocab_file, do_lower_case, max_seq_length, shapes,
        jit_compile: As classification.serving_module's.

    Returns:
      (module, {signature name: tf.function}) for export.save_model.
    """
    settings = task.settings
    module = QuestionAnsweringServingModule(
        encoder, heads[SpanHead.checkpoint_key], vocab_file, do_lower_case, max_seq_length,
        max_query_length=settings.max_query_length,
        max_answer_length=settings.max_answer_length,
        version_2_with_negative=settings.version_2_with_negative,
        null_score_diff_threshold=settings.null_score_diff_threshold,
        doc_stride=settings.doc_stride, doc_stride_means=settings.doc_stride_means,
        shapes=shapes, jit_compile=jit_compile)
    return module, {"serving_default": module.answer}


def best_spans(start_logits, end_logits, context_start, context_length, max_answer_length,
               start_allowed=None):
    """The best answer span of each window: start <= end, both in the context.

    Every (start, end) pair is scored, start_logit + end_logit, so this
    finds the best valid span even where the original, which only paired its
    n_best_size best starts with its n_best_size best ends, found none or
    another (rules 1 to 3 of data/squad/answer_rule.py, for one window). A tie
    goes to the smallest start, then the smallest end.

    Args:
      start_logits, end_logits: float32 [batch, seq].
      context_start: int64 [batch], the column of each window's first
        context piece.
      context_length: int64 [batch], its number of context pieces.
      max_answer_length: The most pieces an answer spans.
      start_allowed: Optional bool [batch, seq]: the columns an answer may
        start at (a window's max-context pieces); None: every context column.

    Returns:
      (start, end, score, found): int64 [batch] columns (end inclusive),
      float32 [batch] scores and bool [batch], False where no span is
      allowed (start, end and score are then 0).
    """
    seq = tf.shape(start_logits, out_type=tf.int64)[1]
    column = tf.range(seq)
    context_end = context_start + context_length
    # [batch, seq]
    in_context = ((column[tf.newaxis, :] >= context_start[:, tf.newaxis])
                  & (column[tf.newaxis, :] < context_end[:, tf.newaxis]))
    starts = in_context if start_allowed is None else in_context & start_allowed
    # [seq (start), seq (end)]: end - start.
    span_length = column[tf.newaxis, :] - column[:, tf.newaxis]
    # [batch, start, end]
    valid = (starts[:, :, tf.newaxis] & in_context[:, tf.newaxis, :]
             & ((span_length >= 0) & (span_length < max_answer_length))[tf.newaxis])
    scores = start_logits[:, :, tf.newaxis] + end_logits[:, tf.newaxis, :]
    scores = tf.reshape(tf.where(valid, scores, -np.inf), [tf.shape(scores)[0], -1])
    # argmax takes the first of equal scores: the smallest start, then end.
    best = tf.argmax(scores, axis=1)
    found = tf.reduce_any(starts, axis=1)
    zero = tf.zeros_like(best)
    return (tf.where(found, best // seq, zero), tf.where(found, best % seq, zero),
            tf.where(found, tf.reduce_max(scores, axis=1), 0.0), found)


def best_answers(start_logits, end_logits, window_question, context_start, context_length,
                 start_allowed, num_questions, max_answer_length, version_2_with_negative=False,
                 null_score_diff_threshold=0.0):
    """Each question's answer over its windows: data/squad/answer_rule.py's rule, in the graph.

    The best span of each window (best_spans), then each question's best
    window: the highest score, the earliest on a tie. For SQuAD 2.0, the
    null score is the lowest position-0 start + end logit over the
    question's windows, and the question goes unanswered when it beats the
    span's score by more than the threshold. tests/test_question_answering_task.py
    checks this against answer_rule.best_span, null_score and abstains.

    Args:
      start_logits, end_logits: float32 [windows, seq].
      window_question: int64 [windows], the question of each window; every
        question has at least one window.
      context_start, context_length, start_allowed, max_answer_length: As
        best_spans'.
      num_questions: The number of questions.
      version_2_with_negative: Whether a question may go unanswered.
      null_score_diff_threshold: As squad.SquadSettings'.

    Returns:
      (window, start, end, score, has_answer), [questions] each: the
      answer's window and columns (end inclusive), int64, 0 without an
      answer; its float32 score: the span's, or, for a question that
      abstains although it has a span, the null score, or 0 without any
      span; and bool, whether the question is answered.
    """
    start, end, score, found = best_spans(start_logits, end_logits, context_start,
                                          context_length, max_answer_length, start_allowed)
    # [questions]: the highest score among the windows that found a span.
    score = tf.where(found, score, -np.inf)
    best_score = tf.math.unsorted_segment_max(score, window_question, num_questions)
    window = tf.range(tf.size(window_question, out_type=tf.int64))
    is_best = found & tf.equal(score, tf.gather(best_score, window_question))
    best = tf.math.unsorted_segment_min(tf.where(is_best, window, tf.int64.max),
                                        window_question, num_questions)
    has_answer = tf.math.unsorted_segment_max(tf.cast(found, tf.int32), window_question,
                                              num_questions) > 0
    # A question always has a window; one that found nothing points at 0.
    best = tf.where(has_answer, best, 0)
    score = tf.where(has_answer, tf.gather(score, best), 0.0)
    if version_2_with_negative:
        null_score = tf.math.unsorted_segment_min(
            start_logits[:, 0] + end_logits[:, 0], window_question, num_questions)
        answerable = null_score - score <= null_score_diff_threshold
        score = tf.where(has_answer & ~answerable, null_score, score)
        has_answer &= answerable
    zero = tf.zeros_like(best)
    return (best, tf.where(has_answer, tf.gather(start, best), zero),
            tf.where(has_answer, tf.gather(end, best), zero), score, has_answer)


def context_windows(question_length, context_length, max_seq_length, doc_stride,
                    doc_stride_means="step"):
    """The sliding windows over each context, as run_squad.py cuts them.

    Each window holds the question and as many context pieces as then fit
    in max_seq_length; windows start doc_stride pieces apart (at most a
    window's length), or, when doc_stride_means is "overlap", that many
    fewer than the window holds; the last one reaches the context's end.
    An empty context gets one empty window.

    Args:
      question_length: int64 [batch], each question's pieces (already cut
        to max_query_length).
      context_length: int64 [batch], each context's pieces.
      max_seq_length: The windows' length, [CLS] and [SEP]s included.
      doc_stride: Context pieces between consecutive windows' starts, or
        shared by consecutive windows.
      doc_stride_means: "step" or "overlap"; an overlap is assumed shorter
        than every window's context pieces (squad.check_doc_stride).

    Returns:
      (question, start, length): int64 [windows] each: the question (row of
      the batch) a window belongs to, and its first context piece and
      number of context pieces; a question's windows are consecutive.
    """
    # [batch]: the context pieces a window holds, and how far windows move.
    budget = max_seq_length - 3 - question_length
    if doc_stride_means == "overlap":
        stride = budget - doc_stride
    else:
        stride = tf.minimum(tf.constant(doc_stride, tf.int64), budget)
    # The k-th window ends the context when k * stride + budget reaches it.
    beyond_first = tf.maximum(context_length - budget, 0)
    num_windows = 1 + (beyond_first + stride - 1) // stride
    question = tf.repeat(tf.range(tf.size(num_windows, out_type=tf.int64)), num_windows)
    start = tf.ragged.range(num_windows).flat_values * tf.gather(stride, question)
    length = tf.minimum(tf.gather(budget, question), tf.gather(context_length, question) - start)
    return question, start, length


def max_context_starts(window_question, window_start, window_length, context_offset,
                       context_start, num_pieces, seq):
    """Which columns of each window may start an answer: the max-context rule.

    A context piece in several windows is scored only in the one where it
    has the most context: the larger min(pieces left of it, pieces right of
    it), plus 0.01 per piece of window length, the earliest window winning
    a tie (data/squad/windows.py's check_is_max_context, for all windows at once).

    Args:
      window_question: int64 [windows], each window's question.
      window_start, window_length: int64 [windows], its context pieces.
      context_offset: int64 [batch], where each question's context pieces
        begin among the batch's flat pieces.
      context_start: int64 [windows], the column of each window's first
        context piece.
      num_pieces: The batch's context pieces, all questions together.
      seq: The windows' number of columns.

    Returns:
      bool [windows, seq].
    """
    # [windows, seq]: each column's place among its window's context pieces.
    place = tf.range(seq)[tf.newaxis, :] - context_start[:, tf.newaxis]
    length = window_length[:, tf.newaxis]
    in_context = (place >= 0) & (place < length)
    # The piece among the batch's flat pieces; columns outside the context
    # go to a spare segment, num_pieces.
    piece_offset = tf.gather(context_offset, window_question) + window_start
    piece = tf.where(in_context, piece_offset[:, tf.newaxis] + place, num_pieces)
    # 100 x the original's score, in integers, so that ties are exact.
    score = 100 * tf.minimum(place, length - 1 - place) + length
    score = tf.where(in_context, score, -1)
    best_score = tf.math.unsorted_segment_max(score, piece, num_pieces + 1)
    is_best = in_context & tf.equal(score, tf.gather(best_score, piece))
    window = tf.broadcast_to(tf.range(tf.size(window_start, out_type=tf.int64))[:, tf.newaxis],
                             tf.shape(piece))
    first_best = tf.math.unsorted_segment_min(
        tf.where(is_best, window, tf.int64.max), piece, num_pieces + 1)
    return is_best & tf.equal(window, tf.gather(first_best, piece))


class QuestionAnsweringServingModule(tf.Module):
    """Answers questions about raw contexts, with the answer's character offsets.

    Each context is read through sliding windows, as run_squad.py's
    --do_predict reads it: [CLS] question [SEP] context piece [SEP], the
    question cut to max_query_length pieces, windows of as many context
    pieces as fit in max_seq_length starting doc_stride pieces apart (or
    sharing doc_stride pieces), so a long context is read whole. A piece is
    scored only in the window where it has the most context, and the answer
    is the best span over all of a question's windows, by the rule that
    run_squad.py's predictions.json follows (data/squad/answer_rule.py).

    The context is split into words where basic tokenization splits it (on
    whitespace, with each punctuation mark a word of its own), each word into
    word pieces as in training. The answer is the best span of pieces (start
    <= end, fewer than max_answer_length, both in the context), widened to
    whole words: its text is the context's own substring from the first
    word's start to the last word's end.

    Signature "serving_default": question, context [batch] string ->
      answer_text [batch] string ("" when there is no answer),
      answer_start, answer_end [batch] int64: character offsets in the
        context (end exclusive), in Unicode code points; -1 when no answer,
      score [batch] float32: the answer's start + end logit; without an
        answer, 0 for an empty context, else the null score (the lowest
        over the windows of position 0's start + end logit) that made a
        SQuAD 2.0 model abstain,
      has_answer [batch] bool: False for an empty context, or when a SQuAD 2.0
        model's null score beats the span's by more than the threshold.
    """

    def __init__(self, encoder, head, vocab_file, do_lower_case, max_seq_length,
                 max_query_length=64, max_answer_length=30, version_2_with_negative=False,
                 null_score_diff_threshold=0.0, doc_stride=128, doc_stride_means="step",
                 shapes="dynamic", jit_compile=False):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          head: Its heads.SpanHead.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          max_query_length: Question pieces kept, as in training.
          max_answer_length: The longest answer, in pieces.
          version_2_with_negative: Whether the model may answer "no answer".
          null_score_diff_threshold: As squad.SquadSettings'.
          doc_stride: Context pieces between the starts of windows, or
            shared by consecutive windows.
          doc_stride_means: "step" or "overlap", as in training.
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
        """
        super().__init__(name="bert_question_answering")
        # Imported here, not at the top: text_ops loads tensorflow_text, about
        # 116 MB of resident memory that only an export needs, not training.
        from bert_tf.text import text_ops

        self.encoder = encoder
        self.head = head
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(max_seq_length, self.tokenizer.vocab["[CLS]"],
                                          self.tokenizer.vocab["[SEP]"])
        self.model = served_model.ServedModel(self._logits, shapes, jit_compile)
        self.max_seq_length = max_seq_length
        self.max_query_length = max_query_length
        self.max_answer_length = max_answer_length
        self.version_2_with_negative = version_2_with_negative
        self.null_score_diff_threshold = null_score_diff_threshold
        self.doc_stride = doc_stride
        self.doc_stride_means = doc_stride_means

    def _logits(self, features):
        """Packed windows -> {"start_logits", "end_logits"} [windows, seq]."""
        sequence = self.encoder(features, training=False)["sequence_output"]
        start_logits, end_logits = self.head(sequence)
        return {"start_logits": start_logits, "end_logits": end_logits}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="question"),
                                  tf.TensorSpec([None], tf.string, name="context")])
    def answer(self, question, context):
        """Answers each question from its context; see the class docstring."""
        # [batch, (words)] the context's words and their byte offsets in it.
        words, byte_starts, byte_ends = self.tokenizer.split_words_with_offsets(context)
        # [words, (pieces)] of every word of the batch. A word that
        # tokenization deletes entirely has no piece, as in training.
        pieces = self.tokenizer.tokenize(words.flat_values)
        # [batch, (pieces)]: each context's pieces, back to back.
        context_pieces = tf.RaggedTensor.from_row_lengths(
            pieces.flat_values,
            tf.math.unsorted_segment_sum(pieces.row_lengths(), words.value_rowids(),
                                         num_segments=words.nrows()))
        # [batch, (pieces)]
        question_pieces = self.tokenizer.tokenize(question)[:, :self.max_query_length]
        question_length = question_pieces.row_lengths()
        # [windows] each
        window_question, window_start, window_length = context_windows(
            question_length, context_pieces.row_lengths(), self.max_seq_length,
            self.doc_stride, self.doc_stride_means)
        context_offset = context_pieces.row_starts()
        # [windows, (pieces)]: each window's context pieces; they fit beside
        # the question, so the packer cuts nothing.
        piece_offset = tf.gather(context_offset, window_question) + window_start
        window_pieces = tf.gather(
            context_pieces.flat_values,
            tf.ragged.range(piece_offset, piece_offset + window_length))
        logits = self.model(self.packer(tf.gather(question_pieces, window_question),
                                        window_pieces))
        start_logits, end_logits = logits["start_logits"], logits["end_logits"]

        # [windows]
        context_start = tf.gather(question_length, window_question) + 2
        allowed = max_context_starts(
            window_question, window_start, window_length, context_offset, context_start,
            tf.size(context_pieces.flat_values, out_type=tf.int64),
            tf.shape(start_logits, out_type=tf.int64)[1])
        best, start, end, score, has_answer = best_answers(
            start_logits, end_logits, window_question, context_start, window_length, allowed,
            tf.shape(question, out_type=tf.int64)[0], self.max_answer_length,
            self.version_2_with_negative, self.null_score_diff_threshold)

        # Columns of the best window -> the batch's flat pieces -> their words
        # -> byte offsets. Each table gets one spare entry, so that a batch
        # without a single piece still gathers (at index 0, for rows without
        # an answer).
        def gather(values, indices):
            return tf.gather(tf.concat([values, tf.zeros([1], values.dtype)], 0),
                             tf.where(has_answer, indices, 0))

        first_piece = gather(piece_offset, best) - gather(context_start, best)
        piece_words = pieces.value_rowids()
        byte_start = gather(byte_starts.flat_values, gather(piece_words, first_piece + start))
        byte_end = gather(byte_ends.flat_values, gather(piece_words, first_piece + end))
        text = tf.strings.substr(context, byte_start, byte_end - byte_start)
        # Byte offsets to code point offsets: the length of the text before them.
        char_start = tf.cast(tf.strings.length(
            tf.strings.substr(context, tf.zeros_like(byte_start), byte_start),
            unit="UTF8_CHAR"), tf.int64)
        char_end = char_start + tf.cast(tf.strings.length(text, unit="UTF8_CHAR"), tf.int64)
        none = -tf.ones_like(char_start)
        return {
            "answer_text": tf.where(has_answer, text, ""),
            "answer_start": tf.where(has_answer, char_start, none),
            "answer_end": tf.where(has_answer, char_end, none),
            "score": score,
            "has_answer": has_answer,
        }
