"""Pairs: the [CLS] A [SEP] B [SEP] instances of a block of documents.

`plan_block` lays out one pass's pairs over a block of a window's documents
as token ranges (a `PairLayout`): the chunking into A and B, the random-next
spans and the truncation follow the original's statistics (see the package
docstring). `pack_pairs` then lays the pairs out as rows of token ids for
masking and writing. The layout's random choices come from a random.Random
that workers.py seeds for each unit of work.
"""

import bisect
import dataclasses

import numpy as np


@dataclasses.dataclass
class PairLayout:
    """Token ranges of a block's pairs, as int64 arrays of one entry a pair.

    Attributes:
      a_start, a_length: segment A is tokens[a_start:a_start + a_length].
      b_start, b_length: segment B, likewise.
      truncated: 1 where the pair was truncated.
      is_random_next: 1 where B is a random span.
    """

    a_start: np.ndarray
    a_length: np.ndarray
    b_start: np.ndarray
    b_length: np.ndarray
    truncated: np.ndarray
    is_random_next: np.ndarray

    def batches(self, size):
        """Splits the pairs into consecutive layouts of at most `size` pairs.

        Args:
          size: the most pairs per layout.

        Yields:
          PairLayouts, in order.
        """
        fields = dataclasses.astuple(self)
        for start in range(0, len(self.a_start), size):
            yield PairLayout(*(f[start:start + size] for f in fields))


def _uniform_int(rng, low, high):
    """Draws an integer uniformly from [low, high], like random.Random.randint.

    randint's exact rejection sampling takes several Python calls, a large
    share of the pair layout's time; scaling a 53-bit float is biased by less
    than 2**-30 for the ranges used here.

    Args:
      rng: a random.Random.
      low, high: the inclusive bounds.

    Returns:
      The integer.
    """
    return low + int(rng.random() * (high - low + 1))


def truncate_pair(a_start, a_end, b_start, b_end, max_tokens, rng):
    """Shortens the longer segment, token by token, until the pair fits.

    The original removes one token at a time from the longer segment (B on a
    tie), from its front or back with equal odds. The number removed from
    each segment follows from the lengths alone, and the number taken from a
    front is then Binomial(removed, 1/2): it is drawn as the count of set bits
    in that many random bits.

    Args:
      a_start, a_end, b_start, b_end: the segments' token ranges.
      max_tokens: how many tokens the pair may keep.
      rng: a random.Random.

    Returns:
      (a_start, a_length, b_start, b_length, truncated) after truncation.
    """
    a_length, b_length = a_end - a_start, b_end - b_start
    excess = a_length + b_length - max_tokens
    if excess <= 0:
        return a_start, a_length, b_start, b_length, False
    # First even out the lengths, then alternate, starting with B.
    from_longer = min(excess, abs(a_length - b_length))
    rest = excess - from_longer
    a_cut = rest // 2 + (from_longer if a_length > b_length else 0)
    b_cut = rest - rest // 2 + (0 if a_length > b_length else from_longer)
    a_front = rng.getrandbits(a_cut).bit_count()
    b_front = rng.getrandbits(b_cut).bit_count()
    return (a_start + a_front, a_length - a_cut, b_start + b_front, b_length - b_cut, True)


def _random_span(document, target_length, offsets, document_offsets, rng):
    """Draws segment B from another document: sentences from a random start.

    Args:
      document: the index of A's document, which is excluded.
      target_length: the span ends with the first sentence that brings it to
        this many tokens, or with the document.
      offsets: the window's sentence offsets, as a list.
      document_offsets: the window's document offsets, as a list.
      rng: a random.Random.

    Returns:
      (start, end) token offsets of the span, or None if the window has no
      other document.
    """
    num_documents = len(document_offsets) - 1
    if num_documents < 2:
        return None
    other = _uniform_int(rng, 0, num_documents - 2)
    if other >= document:
        other += 1
    first, end = document_offsets[other], document_offsets[other + 1]
    start = _uniform_int(rng, first, end - 1)
    last = min(bisect.bisect_left(offsets, offsets[start] + target_length, start + 1, end + 1), end)
    return offsets[start], offsets[last]


def _plan_document(document, offsets, document_offsets, config, rng, pairs, summary):
    """Appends one pass's pairs over one document to `pairs`.

    Args:
      document: the document's index in the window.
      offsets: the window's sentence offsets, as a list.
      document_offsets: the window's document offsets, as a list.
      config: a PretrainingDataConfig.
      rng: a random.Random.
      pairs: a list that receives (a_start, a_length, b_start, b_length,
        truncated, is_random_next) tuples, the fields of a PairLayout.
      summary: a PretrainingDataSummary that counts skipped pairs.
    """
    max_tokens = config.max_seq_length - 3
    # As in the original, the target is drawn once per document and pass.
    target = max_tokens
    if rng.random() < config.short_seq_prob:
        target = _uniform_int(rng, 2, max_tokens)
    start, end = document_offsets[document], document_offsets[document + 1]
    while start < end:
        chunk_start = offsets[start]
        # The chunk takes sentences until it reaches the target or the end.
        last = min(bisect.bisect_left(offsets, chunk_start + target, start + 1, end + 1), end) - 1
        num_sentences = last - start + 1
        a_sentences = _uniform_int(rng, 1, num_sentences - 1) if num_sentences > 1 else 1
        a_end = offsets[start + a_sentences]
        if num_sentences == 1 or rng.random() < 0.5:
            span = _random_span(document, target - (a_end - chunk_start), offsets,
                                document_offsets, rng)
            # B's own sentences went unused: they start the next chunk.
            start += a_sentences
            if span is None:
                summary.skipped_random_next += 1
                continue
            b_start, b_end, is_random_next = span[0], span[1], True
        else:
            b_start, b_end, is_random_next = a_end, offsets[last + 1], False
            start = last + 1
        pairs.append(truncate_pair(chunk_start, a_end, b_start, b_end, max_tokens, rng)
                     + (is_random_next,))


def plan_block(window, first_document, end_document, config, rng, summary):
    """Lays out one pass's pairs over a block of documents.

    Args:
      window: the corpus.Window.
      first_document, end_document: the block's documents.
      config: a PretrainingDataConfig.
      rng: a random.Random.
      summary: a PretrainingDataSummary that counts skipped pairs.

    Returns:
      A PairLayout, or None if the block yields no pair.
    """
    pairs = []
    offsets, document_offsets = window.offset_lists
    for document in range(first_document, end_document):
        _plan_document(document, offsets, document_offsets, config, rng, pairs, summary)
    if not pairs:
        return None
    return PairLayout(*np.array(pairs, dtype=np.int64).T)


def pack_pairs(tokens, layout, max_seq_length, vocab):
    """Lays the pairs out as [CLS] A [SEP] B [SEP] followed by padding.

    Args:
      tokens: the window's token ids.
      layout: a PairLayout.
      max_seq_length: the row length.
      vocab: a tokenization.VocabTables.

    Returns:
      (input_ids, segment_ids, is_candidate, length): int32 [N, L] ids,
      int32 [N, L] segment ids, bool [N, L] marking A's and B's tokens (the
      masking candidates), and int64 [N] tokens per row.
    """
    column = np.arange(max_seq_length)
    a_length, b_length = layout.a_length[:, None], layout.b_length[:, None]
    b_first = a_length + 2
    in_a = (column >= 1) & (column <= a_length)
    in_b = (column >= b_first) & (column < b_first + b_length)
    source = np.where(in_a, layout.a_start[:, None] + column - 1,
                      np.where(in_b, layout.b_start[:, None] + column - b_first, 0))
    is_candidate = in_a | in_b
    input_ids = np.where(is_candidate, tokens[source], 0).astype(np.int32)
    rows = np.arange(len(input_ids))
    input_ids[:, 0] = vocab.cls_id
    input_ids[rows, layout.a_length + 1] = vocab.sep_id
    input_ids[rows, layout.a_length + layout.b_length + 2] = vocab.sep_id
    segment_ids = ((column >= b_first) & (column <= b_first + b_length)).astype(np.int32)
    return input_ids, segment_ids, is_candidate, layout.a_length + layout.b_length + 3
