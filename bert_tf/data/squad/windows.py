"""SquadExample -> InputFeatures: word pieces, sliding windows, answer positions.

This is the original run_squad.py's convert_examples_to_features. Each
example becomes one or more windows `[CLS] question [SEP] context span [SEP]`:
the question keeps its first max_query_length word pieces, and a context
longer than what is left of max_seq_length is covered by spans
`max_seq_length - len(question) - 3` pieces long whose starts are doc_stride
apart (or, with doc_stride_means="overlap", that share doc_stride pieces, as
Hugging Face's tokenizers place them). A piece in several spans is scored
only in its "max context" span, the one where it has the most pieces on its
nearer side (check_is_max_context).

In training, a window holds the answer's first and last piece positions; a
window that does not contain the whole answer, and every window of an
unanswerable question, points at [CLS] (0, 0), as in the original.

The output is the original's, faster: the original tokenized each context
word by word once per question, although SQuAD has about five questions per
context and a word recurs across contexts. Here each distinct context is
tokenized once, each distinct word once, and each piece converted to its id
once; bench/squad_features_speed.py checks that the windows are identical.
"""

import collections
import dataclasses

# Contexts and words remembered before the caches start over: examples of a
# paragraph come together, so a small window of contexts keeps nearly every
# hit, while memory stays bounded on any file.
_CONTEXT_CACHE_SIZE = 1024
_WORD_CACHE_SIZE = 200_000

DocSpan = collections.namedtuple("DocSpan", ["start", "length"])


@dataclasses.dataclass
class InputFeatures:
    """One window of one example, as the model sees it.

    Attributes:
      unique_id: the window's id, unique in one conversion.
      example_index: the index of its example in the examples converted.
      doc_span_index: the window's index among its example's windows.
      tokens: its word pieces, [CLS] and [SEP]s included, without padding.
      token_to_orig_map: {position in tokens: index in the example's
        doc_tokens} for each context piece.
      token_is_max_context: {position in tokens: whether this window is
        the piece's max-context window} for each context piece.
      input_ids, input_mask, segment_ids: max_seq_length ints each.
      start_position, end_position: in training, the answer's first and
        last positions in tokens (0 and 0 when this window does not hold
        it); None otherwise.
      is_impossible: whether the example is unanswerable.
    """

    unique_id: int
    example_index: int
    doc_span_index: int
    tokens: list
    token_to_orig_map: dict
    token_is_max_context: dict
    input_ids: list
    input_mask: list
    segment_ids: list
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False


@dataclasses.dataclass(frozen=True)
class _TokenizedContext:
    """A context's word pieces, their ids and both alignments with its words."""

    pieces: list
    ids: list
    tok_to_orig_index: list
    orig_to_tok_index: list


class _Tokenizations:
    """Tokenizes contexts word by word, each distinct context and word once."""

    def __init__(self, tokenizer):
        """Creates empty caches.

        Args:
          tokenizer: a tokenization.FullTokenizer.
        """
        self._tokenizer = tokenizer
        self._words = {}
        self._contexts = {}

    def word(self, word):
        """Returns (pieces, ids) of one whitespace-separated word."""
        cached = self._words.get(word)
        if cached is None:
            if len(self._words) >= _WORD_CACHE_SIZE:
                self._words.clear()
            pieces = tuple(self._tokenizer.tokenize(word))
            cached = self._words[word] = (
                pieces, tuple(self._tokenizer.convert_tokens_to_ids(pieces)))
        return cached

    def context(self, doc_tokens):
        """Returns the _TokenizedContext of a context's words."""
        # The words themselves are the key: equal words give equal pieces,
        # whichever example (or list object) they come from.
        key = tuple(doc_tokens)
        cached = self._contexts.get(key)
        if cached is None:
            if len(self._contexts) >= _CONTEXT_CACHE_SIZE:
                self._contexts.clear()
            pieces, ids, tok_to_orig_index, orig_to_tok_index = [], [], [], []
            for index, word in enumerate(doc_tokens):
                word_pieces, word_ids = self.word(word)
                orig_to_tok_index.append(len(pieces))
                pieces.extend(word_pieces)
                ids.extend(word_ids)
                tok_to_orig_index.extend([index] * len(word_pieces))
            cached = self._contexts[key] = _TokenizedContext(
                pieces, ids, tok_to_orig_index, orig_to_tok_index)
        return cached


def improve_answer_span(doc_tokens, input_start, input_end, tokenizer, orig_answer_text):
    """Narrows an answer's piece span to the pieces of the answer text, if it can.

    Annotations are character spans, projected onto whitespace-separated
    words, so "1895" in "John Smith (1895-1943)." first covers every piece
    of the word "(1895-1943).": "( 1895 - 1943 ) .". The sub-span whose
    pieces equal the answer's own pieces ("1895") is the better label. When
    the answer is part of a piece ("Japan" in "Japanese"), no sub-span
    matches and the span is kept.

    Args:
      doc_tokens: the context's word pieces.
      input_start, input_end: the span of the words that hold the answer, in
        pieces, both ends included.
      tokenizer: a tokenization.FullTokenizer.
      orig_answer_text: the annotated answer.

    Returns:
      (start, end): the first (leftmost, then longest) sub-span whose pieces
      are the answer's, or (input_start, input_end).
    """
    tok_answer_text = " ".join(tokenizer.tokenize(orig_answer_text))
    for new_start in range(input_start, input_end + 1):
        for new_end in range(input_end, new_start - 1, -1):
            if " ".join(doc_tokens[new_start:new_end + 1]) == tok_answer_text:
                return new_start, new_end
    return input_start, input_end


def check_is_max_context(doc_spans, cur_span_index, position):
    """Whether a span is the one where a context piece has the most context.

    A piece's context in a span is the smaller of the number of pieces on
    its left and on its right in that span (their sum is the span's length
    less one); a 0.01 bonus per piece of span length breaks ties towards
    longer spans, and the earliest span wins an exact tie. In "the man went
    to the store and bought a gallon of milk" cut into spans of five words
    two apart, "bought" has context min(4, 0) in "to the store and bought"
    and min(1, 3) in "and bought a gallon of", so the latter scores it.

    Args:
      doc_spans: the windows' (start, length) in context pieces.
      cur_span_index: the index of the span asked about.
      position: the piece's index in the context's pieces.

    Returns:
      True when doc_spans[cur_span_index] is the piece's max-context span.
    """
    return _best_span(doc_spans, position) == cur_span_index


def _best_span(doc_spans, position):
    """The index of a piece's max-context span, or None when no span holds it."""
    best_score = None
    best_span_index = None
    for span_index, (start, length) in enumerate(doc_spans):
        end = start + length - 1
        if not start <= position <= end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score:
            best_score = score
            best_span_index = span_index
    return best_span_index


def _max_context_spans(doc_spans, num_pieces):
    """Every piece's max-context span at once, as check_is_max_context decides it.

    One pass over the spans instead of one per piece and span.

    Returns:
      A list with the index of each piece's max-context span (None for a
      piece that no span holds).
    """
    if len(doc_spans) == 1 and doc_spans[0] == (0, num_pieces):
        # Most contexts fit one window, which then holds every piece.
        return [0] * num_pieces
    best_span = [None] * num_pieces
    best_score = [None] * num_pieces
    for span_index, (start, length) in enumerate(doc_spans):
        end = start + length - 1
        for position in range(start, end + 1):
            score = min(position - start, end - position) + 0.01 * length
            # Strictly greater: the earliest span keeps a tie, as in _best_span.
            if best_score[position] is None or score > best_score[position]:
                best_score[position] = score
                best_span[position] = span_index
    return best_span


DOC_STRIDE_MEANINGS = ("step", "overlap")


def check_doc_stride(max_seq_length, max_query_length, doc_stride, doc_stride_means):
    """Checks that consecutive windows of a long context move forward.

    Args:
      max_seq_length: Pieces per window (--max_seq_length).
      max_query_length: Question pieces kept (--max_query_length).
      doc_stride: --doc_stride, in pieces.
      doc_stride_means: One of DOC_STRIDE_MEANINGS (see window_step()).

    Raises:
      ValueError: naming the flags, for a stride below 1, an unknown
        meaning, or an overlap as long as the context pieces of a window
        with the longest question.
    """
    if doc_stride_means not in DOC_STRIDE_MEANINGS:
        raise ValueError(f"--doc_stride_means={doc_stride_means} is not one of "
                         f"{', '.join(DOC_STRIDE_MEANINGS)}")
    if doc_stride < 1:
        raise ValueError(f"--doc_stride={doc_stride} must be at least 1")
    context_pieces = max_seq_length - max_query_length - 3
    if doc_stride_means == "overlap" and doc_stride >= context_pieces:
        raise ValueError(
            f"--doc_stride={doc_stride} pieces of overlap leave no new piece in a window "
            f"of {context_pieces} context pieces (--max_seq_length={max_seq_length} less "
            f"--max_query_length={max_query_length} and 3): lower --doc_stride, raise "
            "--max_seq_length, or set --doc_stride_means=step")


def window_step(max_tokens_for_doc, doc_stride, doc_stride_means):
    """How far a context's next window starts after the current one's start.

    Args:
      max_tokens_for_doc: The most context pieces a window holds.
      doc_stride: --doc_stride, in pieces.
      doc_stride_means: "step", the original's reading: windows start
        doc_stride pieces apart; or "overlap", Hugging Face's (the `stride`
        of its tokenizers): consecutive windows share doc_stride pieces.

    Returns:
      The step, in pieces (make_doc_spans caps it by the window's length).
    """
    if doc_stride_means == "step":
        return doc_stride
    return max_tokens_for_doc - doc_stride


def make_doc_spans(num_pieces, max_tokens_for_doc, doc_stride, doc_stride_means="step"):
    """Cuts a context of num_pieces pieces into sliding windows.

    Args:
      num_pieces: the context's word pieces.
      max_tokens_for_doc: the most pieces a window holds.
      doc_stride: pieces between the starts of consecutive windows (a
        shorter last window ends the context: the stride is capped by the
        window's length), or shared by consecutive windows (see
        window_step()).
      doc_stride_means: "step" (the original's) or "overlap".

    Returns:
      A list of DocSpan(start, length); empty for an empty context.
    """
    step = window_step(max_tokens_for_doc, doc_stride, doc_stride_means)
    spans = []
    start = 0
    while start < num_pieces:
        length = min(num_pieces - start, max_tokens_for_doc)
        spans.append(DocSpan(start, length))
        if start + length == num_pieces:
            break
        start += min(length, step)
    return spans


def _answer_pieces(example, context, tokenizer):
    """The answer's first and last piece in the context's pieces (training)."""
    start = context.orig_to_tok_index[example.start_position]
    if example.end_position < len(example.doc_tokens) - 1:
        end = context.orig_to_tok_index[example.end_position + 1] - 1
    else:
        end = len(context.pieces) - 1
    return improve_answer_span(context.pieces, start, end, tokenizer,
                               example.orig_answer_text)


def check_window_lengths(max_seq_length, max_query_length):
    """Checks that a window has room for context after the question.

    A window is [CLS] question [SEP] context [SEP]: with max_query_length
    question pieces and the three special tokens, max_seq_length must leave
    at least one piece of context.

    Args:
      max_seq_length: Pieces per window (--max_seq_length).
      max_query_length: Question pieces kept (--max_query_length).

    Raises:
      ValueError: naming both flags.
    """
    if max_seq_length <= max_query_length + 3:
        raise ValueError(f"--max_seq_length={max_seq_length} must be greater than "
                         f"--max_query_length={max_query_length} + 3 ([CLS], [SEP], [SEP]), "
                         "to leave room for the context")


def convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride,
                                 max_query_length, is_training, unique_id_start=1000000000,
                                 doc_stride_means="step"):
    """Converts examples to the windows the model reads, as the original does.

    Args:
      examples: a list of reading.SquadExample.
      tokenizer: a tokenization.FullTokenizer; its vocab has [CLS] and [SEP].
      max_seq_length: tokens per window, [CLS] and [SEP]s included.
      doc_stride: context pieces between the starts of consecutive windows.
      max_query_length: question pieces kept; longer questions are truncated.
      is_training: whether to compute the answer positions.
      unique_id_start: the first window's unique_id; the next ones count up.
      doc_stride_means: "step" (the original's: windows start doc_stride
        pieces apart) or "overlap" (consecutive windows share doc_stride
        pieces); see window_step().

    Returns:
      (features, stats): the list of InputFeatures, in example order, and a
      dict of counts: "truncated_questions" (examples whose question lost
      pieces to max_query_length), and in training "answer_out_of_window"
      (windows of answerable examples that miss part of the answer and so
      point at [CLS]).

    Raises:
      ValueError: when max_seq_length leaves no room for context pieces after
        max_query_length question pieces and the three special tokens, or
        when check_doc_stride() refuses doc_stride (a stride below 1 would
        loop forever in the original).
    """
    check_window_lengths(max_seq_length, max_query_length)
    check_doc_stride(max_seq_length, max_query_length, doc_stride, doc_stride_means)
    tokenizations = _Tokenizations(tokenizer)
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    features = []
    stats = {"truncated_questions": 0}
    if is_training:
        stats["answer_out_of_window"] = 0
    unique_id = unique_id_start
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(example.question_text)
        if len(query_tokens) > max_query_length:
            stats["truncated_questions"] += 1
            query_tokens = query_tokens[:max_query_length]
        context = tokenizations.context(example.doc_tokens)
        answer = None
        if is_training and not example.is_impossible:
            answer = _answer_pieces(example, context, tokenizer)

        prefix_tokens = ["[CLS]", *query_tokens, "[SEP]"]
        prefix_ids = [cls_id, *tokenizer.convert_tokens_to_ids(query_tokens), sep_id]
        doc_offset = len(prefix_tokens)
        spans = make_doc_spans(len(context.pieces), max_seq_length - len(query_tokens) - 3,
                               doc_stride, doc_stride_means)
        # Found once for all windows: the original asked check_is_max_context
        # for each piece of each window.
        best_span = _max_context_spans(spans, len(context.pieces))
        for span_index, (start, length) in enumerate(spans):
            end = start + length
            positions = range(doc_offset, doc_offset + length)
            tokens = [*prefix_tokens, *context.pieces[start:end], "[SEP]"]
            input_ids = [*prefix_ids, *context.ids[start:end], sep_id]
            padding = [0] * (max_seq_length - len(input_ids))
            feature = InputFeatures(
                unique_id=unique_id,
                example_index=example_index,
                doc_span_index=span_index,
                tokens=tokens,
                token_to_orig_map=dict(zip(positions, context.tok_to_orig_index[start:end],
                                           strict=True)),
                token_is_max_context={p: best_span[p - doc_offset + start] == span_index
                                      for p in positions},
                input_ids=input_ids + padding,
                input_mask=[1] * len(input_ids) + padding,
                segment_ids=[0] * doc_offset + [1] * (length + 1) + padding,
                is_impossible=example.is_impossible)
            if is_training:
                feature.start_position, feature.end_position = 0, 0
                if answer is not None:
                    if start <= answer[0] and answer[1] < end:
                        feature.start_position = answer[0] - start + doc_offset
                        feature.end_position = answer[1] - start + doc_offset
                    else:
                        stats["answer_out_of_window"] += 1
            features.append(feature)
            unique_id += 1
    return features, stats
