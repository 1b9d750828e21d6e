"""Raw text to masked-LM and next-sentence pretraining TFRecords.

The input is UTF-8 text with one sentence per line and a blank line between
documents. Each output record is a tf.train.Example with the features of
`input_pipeline.pretraining_features`: a pair laid out as
[CLS] A [SEP] B [SEP], where B is the text that follows A half of the time and
a random span of another document otherwise, with some word pieces masked.

The algorithm keeps the statistics of the original google-research/bert
create_pretraining_data.py:
  - each document, on each of the `dupe_factor` passes, draws a target length
    of max_seq_length - 3, replaced with probability short_seq_prob by a
    uniform length in [2, max_seq_length - 3];
  - sentences accumulate into a chunk until it reaches the target; A is a
    random number of the chunk's first sentences and B the rest, or, half of
    the time and always for a one-sentence chunk, a random span of another
    document, in which case the chunk's unused sentences are put back;
  - the longer segment loses tokens, each one from its front or its back at
    random, until the pair fits;
  - round(15% of the tokens, [CLS] and [SEP] included), at least one and at
    most max_predictions_per_seq, are chosen among the word pieces other than
    [CLS] and [SEP]; 80% become [MASK], 10% a random word piece and 10% stay;
  - whole-word masking chooses words, a word being a piece and the "##"
    pieces that follow it, and masks all of their pieces.

It fixes the original's known bugs:
  - with a single document, the original drew a "random next" from that same
    document; here a random next always comes from another document, and a
    pair that has none to draw from is skipped and counted;
  - under whole-word masking the original chose [MASK]/random/keep for each
    piece, splitting words; the choice is now made once per word
    (wwm_decision_per_piece=True restores the original behaviour);
  - random replacements were drawn from the whole vocab, [unused*], [PAD] and
    the other bracketed special tokens included; they are now drawn from the
    real word pieces only;
  - whole-word groups no longer cross [SEP]: a "##" piece that starts a
    segment, as truncation at the front often leaves, starts its own word.

And, to stream, it differs in scope:
  - the input is processed in windows of consecutive documents, about
    `window_mb` of text each. Random-next spans come from another document of
    the same window rather than from the whole corpus, and records are
    shuffled within a window rather than globally. Peak memory is therefore
    bounded by the window, not by the corpus: a window's records take about
    11 bytes per byte of its text and pass, some 45 MB for 4 MB at
    dupe_factor=5. The reader's shuffle buffer mixes windows further.
  - the end of an input file also ends a document.

Determinism: every pair and mask is a function of (random_seed, window,
pass, block of documents), and the records of a window are shuffled with a
seed of their own and dealt round-robin over the output files. The output
files are therefore byte-for-byte the same whatever the number of workers;
they depend on the input, the flags and window_mb.

Records are serialized and framed as TFRecords here, with numpy, so that
neither the workers nor the main process load TensorFlow: that takes longer
and more memory than generating a whole window.
"""

import bisect
import concurrent.futures
import dataclasses
import functools
import glob
import itertools
import multiprocessing
import os
import random
import time

import numpy as np
from absl import logging

from bert_tf import input_pipeline, tokenization

# Pairs are laid out, masked and serialized in blocks of consecutive documents
# that hold at least this many tokens: enough to make numpy's per-call cost
# small, few enough to spread a window over the workers. A block and a pass
# form a unit of work, with a random seed of its own.
_BLOCK_TOKENS = 32768

# Most pairs masked and serialized at once, which bounds numpy's temporaries
# to some tens of megabytes however long a document is.
_MAX_BATCH_PAIRS = 2048

# A window is closed only once it holds this many documents, so that random
# next spans have another document to come from.
_MIN_WINDOW_DOCUMENTS = 2

# Bounds the per-process memo of word -> word-piece ids, at about 200 bytes an
# entry; a corpus's frequent words come back long before it fills.
_MAX_CACHED_WORDS = 1 << 18

# Records joined into one write to an output file.
_RECORDS_PER_WRITE = 4096

# Seconds between progress lines.
_PROGRESS_INTERVAL_S = 10.0

# Keys that separate the random streams derived from random_seed.
_PAIRS_STREAM = 1
_SHUFFLE_STREAM = 2

_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")


class PretrainingDataError(ValueError):
    """Bad input, vocab or output location, with a message for the user."""


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """Settings of the data generation, with the original's defaults.

    Attributes:
      vocab_file: the WordPiece vocab, one token per line.
      do_lower_case: whether to lower-case the text (uncased models).
      max_seq_length: tokens per record, [CLS] and [SEP]s included.
      max_predictions_per_seq: at most this many masked positions per record.
      random_seed: seed of every random choice.
      dupe_factor: passes over the input, each with different pairs and masks.
      masked_lm_prob: share of the tokens to mask.
      short_seq_prob: probability that a document's pairs target a random
        length shorter than max_seq_length.
      do_whole_word_mask: mask whole words rather than single word pieces.
      wwm_decision_per_piece: under whole-word masking, choose
        [MASK]/random/keep for each piece, as the original did, rather than
        once per word.
      window_mb: megabytes of text per window; see the module docstring.
      errors: how to treat bytes that are not UTF-8: "strict" (an error that
        names the file and line), "replace" (U+FFFD) or "ignore" (dropped,
        as the original did).
    """

    vocab_file: str
    do_lower_case: bool = True
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    random_seed: int = 12345
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    do_whole_word_mask: bool = False
    wwm_decision_per_piece: bool = False
    window_mb: float = 4.0
    errors: str = "strict"

    def validate(self):
        """Checks that the settings can work together.

        Raises:
          ValueError: naming the first setting that is out of range.
        """
        if self.max_seq_length < 5:
            raise ValueError(
                f"max_seq_length={self.max_seq_length} cannot hold a pair: "
                "[CLS] A [SEP] B [SEP] needs at least 5 tokens")
        if self.max_predictions_per_seq < 1:
            raise ValueError("max_predictions_per_seq must be at least 1, got "
                             f"{self.max_predictions_per_seq}")
        if self.dupe_factor < 1:
            raise ValueError(f"dupe_factor must be at least 1, got {self.dupe_factor}")
        for name in ("masked_lm_prob", "short_seq_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.window_mb <= 0:
            raise ValueError(f"window_mb must be positive, got {self.window_mb}")
        if self.errors not in ("strict", "replace", "ignore"):
            raise ValueError(
                f"errors must be strict, replace or ignore, got {self.errors!r}")


@dataclasses.dataclass
class PretrainingDataSummary:
    """Counts of a run, and the statistics that follow from them.

    Attributes:
      documents: documents with at least one word piece.
      documents_too_short: documents that could not form any pair: those
        without a word piece, and one-sentence documents alone in a window.
      input_tokens: word pieces in the documents.
      instances: records written.
      tokens: tokens in the records, [CLS] and [SEP] included.
      masked_tokens: masked positions.
      masked_to_mask: masked positions that became [MASK].
      masked_to_random: masked positions that became a random word piece.
      masked_kept: masked positions that kept their token.
      random_next: records whose B is a random span.
      truncated: records whose pair had to be truncated.
      skipped_random_next: random-next pairs dropped because their window held
        no other document.
      elapsed_s: seconds the run took.
    """

    documents: int = 0
    documents_too_short: int = 0
    input_tokens: int = 0
    instances: int = 0
    tokens: int = 0
    masked_tokens: int = 0
    masked_to_mask: int = 0
    masked_to_random: int = 0
    masked_kept: int = 0
    random_next: int = 0
    truncated: int = 0
    skipped_random_next: int = 0
    elapsed_s: float = 0.0

    def add(self, other):
        """Adds another summary's counts to this one.

        Args:
          other: a PretrainingDataSummary.
        """
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    @property
    def mask_rate(self):
        """Masked positions per token."""
        return self.masked_tokens / max(1, self.tokens)

    @property
    def random_next_share(self):
        """Share of the records whose B is a random span."""
        return self.random_next / max(1, self.instances)

    @property
    def truncated_share(self):
        """Share of the records whose pair was truncated."""
        return self.truncated / max(1, self.instances)

    @property
    def instances_per_second(self):
        """Records written per second of the run."""
        return self.instances / max(1e-9, self.elapsed_s)

    def describe(self):
        """Returns the summary as a few human-readable lines."""
        masked = max(1, self.masked_tokens)
        return "\n".join([
            f"instances written: {self.instances} in {self.elapsed_s:.1f} s "
            f"({self.instances_per_second:.0f} instances/s)",
            f"documents: {self.documents} ({self.documents_too_short} too short "
            f"to form a pair); word pieces read: {self.input_tokens}",
            f"tokens written: {self.tokens}; mean mask rate: {self.mask_rate:.4f}",
            f"masked as [MASK] / random / kept: {self.masked_to_mask / masked:.3f} / "
            f"{self.masked_to_random / masked:.3f} / {self.masked_kept / masked:.3f}",
            f"random-next share: {self.random_next_share:.4f}; "
            f"truncated share: {self.truncated_share:.4f}; random-next pairs "
            f"skipped for want of another document: {self.skipped_random_next}",
        ])


# ----------------------------------------------------------------------------
# Input: files, documents and windows.


def expand_input_patterns(input_patterns):
    """Lists the input files that comma-separated names or globs give.

    Args:
      input_patterns: a comma-separated string of file names and globs, or a
        list of them.

    Returns:
      The files in the order of the patterns, each glob's matches sorted. A
      file named twice is read twice.

    Raises:
      PretrainingDataError: if no pattern is given, a glob matches nothing, or
        a named file is missing.
    """
    if isinstance(input_patterns, str):
        input_patterns = input_patterns.split(",")
    files = []
    for pattern in (p.strip() for p in input_patterns):
        if not pattern:
            continue
        if glob.has_magic(pattern):
            matches = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not matches:
                raise PretrainingDataError(f"no input file matches {pattern!r}")
            files.extend(matches)
        elif os.path.isfile(pattern):
            files.append(pattern)
        else:
            raise PretrainingDataError(f"input file not found: {pattern}")
    if not files:
        raise PretrainingDataError("no input file given")
    return files


def _read_documents(paths, errors):
    """Streams documents from text files.

    Args:
      paths: the files, read in order; each file's end also ends a document.
      errors: the UTF-8 error handling, as in PretrainingDataConfig.

    Yields:
      (lines, num_bytes): a document's non-blank lines, stripped, and the
      bytes they took in the file.

    Raises:
      PretrainingDataError: on a file that cannot be read, or on bytes that
        are not UTF-8 when errors is "strict".
    """
    for path in paths:
        lines, num_bytes = [], 0
        try:
            with open(path, "rb") as f:
                # Only "\n" ends a line, as in the original's reader.
                for line_number, raw in enumerate(f, start=1):
                    try:
                        line = raw.decode("utf-8", errors).strip()
                    except UnicodeDecodeError as e:
                        raise PretrainingDataError(
                            f"{path}:{line_number}: byte {e.start + 1} of the line is not "
                            "UTF-8; fix the file or pass --errors=replace") from e
                    if line:
                        lines.append(line)
                        num_bytes += len(raw)
                    elif lines:
                        yield lines, num_bytes
                        lines, num_bytes = [], 0
        except OSError as e:
            raise PretrainingDataError(f"cannot read input file {path}: {e}") from e
        if lines:
            yield lines, num_bytes


def _windows(documents, window_bytes):
    """Groups a stream of documents into windows of about window_bytes.

    A window closes after the document that brings it to window_bytes, once
    it holds _MIN_WINDOW_DOCUMENTS. A last window too small to stand alone
    joins the one before it.

    Args:
      documents: an iterable of (lines, num_bytes), as _read_documents yields.
      window_bytes: the size at which a window closes.

    Yields:
      Lists of documents, each a list of lines.
    """
    finished, window, size = None, [], 0
    for lines, num_bytes in documents:
        window.append(lines)
        size += num_bytes
        if size >= window_bytes and len(window) >= _MIN_WINDOW_DOCUMENTS:
            if finished is not None:
                yield finished
            finished, window, size = window, [], 0
    if finished is not None and len(window) < _MIN_WINDOW_DOCUMENTS:
        finished.extend(window)
        window = []
    for last in (finished, window):
        if last:
            yield last


# ----------------------------------------------------------------------------
# Vocab and tokenization.


def _load_vocab(vocab_file):
    """Reads the vocab, turning its errors into PretrainingDataError.

    Args:
      vocab_file: the path given by the user.

    Returns:
      The OrderedDict from token to id that tokenization.load_vocab returns.

    Raises:
      PretrainingDataError: saying what is wrong with the file.
    """
    try:
        return tokenization.load_vocab(vocab_file)
    except (OSError, ValueError) as e:
        raise PretrainingDataError(f"bad vocab file: {e}") from e


class _VocabTables:
    """The ids and per-id flags that pair building and masking need.

    Attributes:
      cls_id, sep_id, mask_id: ids of [CLS], [SEP] and [MASK].
      is_continuation: bool per id, True for "##" pieces.
      replacement_ids: ids that a random replacement may draw: every token
        except bracketed special ones such as [PAD], [UNK] and [unused0].
    """

    def __init__(self, vocab):
        """Builds the tables.

        Args:
          vocab: a mapping from token to id.

        Raises:
          PretrainingDataError: if [CLS], [SEP] or [MASK] is missing.
        """
        missing = [t for t in _SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise PretrainingDataError(f"the vocab lacks {', '.join(missing)}")
        self.cls_id, self.sep_id, self.mask_id = (vocab[t] for t in _SPECIAL_TOKENS)
        self.is_continuation = np.zeros(max(vocab.values()) + 1, dtype=bool)
        replacements = []
        for token, token_id in vocab.items():
            self.is_continuation[token_id] = token.startswith("##")
            if not (len(token) > 2 and token[0] == "[" and token[-1] == "]"):
                replacements.append(token_id)
        if not replacements:
            raise PretrainingDataError("the vocab has no word piece to draw from")
        self.replacement_ids = np.array(sorted(replacements), dtype=np.int32)


class _CachedTokenizer:
    """Word-piece ids of lines, memoized per space-separated word.

    FullTokenizer's result for a line is the concatenation of its results for
    the line's space-separated parts: cleaning, lower-casing, accent
    stripping, punctuation splitting and WordPiece all work within a
    whitespace-delimited word. Real text repeats its words, so looking each up
    once is many times faster than tokenizing every line.
    """

    def __init__(self, tokenizer):
        """Wraps a tokenizer.

        Args:
          tokenizer: a tokenization.FullTokenizer.
        """
        self._tokenizer = tokenizer
        self._ids = {}

    def _word_ids(self, word):
        """Tokenizes one word and remembers its ids.

        Args:
          word: a space-free string.

        Returns:
          A tuple of ids.
        """
        if len(self._ids) >= _MAX_CACHED_WORDS:
            self._ids.clear()
        tokenizer = self._tokenizer
        ids = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)))
        self._ids[word] = ids
        return ids

    def tokenize_documents(self, documents):
        """Converts documents to word-piece ids, dropping empty sentences.

        Args:
          documents: a list of documents, each a list of lines.

        Returns:
          (tokens, sentence_lengths, document_sentences, num_empty): the ids
          of all sentences, concatenated (int32); each sentence's length;
          each document's number of sentences, documents without any word
          piece left out; and how many documents were left out.
        """
        tokens, sentence_lengths, document_sentences = [], [], []
        ids_of = self._ids.get
        for lines in documents:
            num_sentences = 0
            for line in lines:
                words = line.split(" ")
                # map() and chain() keep the common case, all words known, in C.
                pieces = list(map(ids_of, words))
                if None in pieces:
                    pieces = [self._word_ids(word) if ids is None else ids
                              for word, ids in zip(words, pieces, strict=True)]
                start = len(tokens)
                tokens.extend(itertools.chain.from_iterable(pieces))
                if len(tokens) > start:
                    sentence_lengths.append(len(tokens) - start)
                    num_sentences += 1
            if num_sentences:
                document_sentences.append(num_sentences)
        return (np.array(tokens, dtype=np.int32),
                np.array(sentence_lengths, dtype=np.int64),
                np.array(document_sentences, dtype=np.int64),
                len(documents) - len(document_sentences))


@dataclasses.dataclass
class _Window:
    """A window of tokenized documents.

    Attributes:
      index: the window's position in the input, 0 first.
      tokens: int32 ids of every sentence, concatenated.
      sentence_offsets: int64 [num_sentences + 1]; sentence s is
        tokens[sentence_offsets[s]:sentence_offsets[s + 1]].
      document_offsets: int64 [num_documents + 1]; document d is sentences
        document_offsets[d] to document_offsets[d + 1] - 1.
      num_empty: documents dropped for having no word piece.
    """

    index: int
    tokens: np.ndarray
    sentence_offsets: np.ndarray
    document_offsets: np.ndarray
    num_empty: int

    @functools.cached_property
    def offset_lists(self):
        """(sentence_offsets, document_offsets) as lists, for fast scalar use."""
        return self.sentence_offsets.tolist(), self.document_offsets.tolist()

    @property
    def num_documents(self):
        """Documents in the window."""
        return len(self.document_offsets) - 1

    def blocks(self):
        """Splits the documents into blocks of at least _BLOCK_TOKENS tokens.

        Returns:
          A list of (first_document, end_document) pairs.
        """
        document_tokens = self.sentence_offsets[self.document_offsets]
        bounds, first = [], 0
        while first < self.num_documents:
            end = int(np.searchsorted(document_tokens, document_tokens[first] + _BLOCK_TOKENS))
            end = min(max(end, first + 1), self.num_documents)
            bounds.append((first, end))
            first = end
        return bounds


def _assemble_window(index, parts):
    """Joins the tokenized parts of a window.

    Args:
      index: the window's position in the input.
      parts: results of _CachedTokenizer.tokenize_documents, in order.

    Returns:
      A _Window.
    """
    tokens, sentence_lengths, document_sentences, num_empty = zip(*parts, strict=True)
    return _Window(
        index=index,
        tokens=np.concatenate(tokens),
        sentence_offsets=np.concatenate([[0], np.cumsum(np.concatenate(sentence_lengths))]),
        document_offsets=np.concatenate([[0], np.cumsum(np.concatenate(document_sentences))]),
        num_empty=sum(num_empty))


# ----------------------------------------------------------------------------
# Pairs.


@dataclasses.dataclass
class _PairLayout:
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
        """Splits the pairs into consecutive layouts of at most `size` pairs."""
        fields = dataclasses.astuple(self)
        for start in range(0, len(self.a_start), size):
            yield _PairLayout(*(f[start:start + size] for f in fields))


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


def _truncate_pair(a_start, a_end, b_start, b_end, max_tokens, rng):
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
        truncated, is_random_next) tuples, the fields of a _PairLayout.
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
        pairs.append(_truncate_pair(chunk_start, a_end, b_start, b_end, max_tokens, rng)
                     + (is_random_next,))


def _plan_block(window, first_document, end_document, config, rng, summary):
    """Lays out one pass's pairs over a block of documents.

    Args:
      window: the _Window.
      first_document, end_document: the block's documents.
      config: a PretrainingDataConfig.
      rng: a random.Random.
      summary: a PretrainingDataSummary that counts skipped pairs.

    Returns:
      A _PairLayout, or None if the block yields no pair.
    """
    pairs = []
    offsets, document_offsets = window.offset_lists
    for document in range(first_document, end_document):
        _plan_document(document, offsets, document_offsets, config, rng, pairs, summary)
    if not pairs:
        return None
    return _PairLayout(*np.array(pairs, dtype=np.int64).T)


def _pack_pairs(tokens, layout, max_seq_length, vocab):
    """Lays the pairs out as [CLS] A [SEP] B [SEP] followed by padding.

    Args:
      tokens: the window's token ids.
      layout: a _PairLayout.
      max_seq_length: the row length.
      vocab: a _VocabTables.

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


# ----------------------------------------------------------------------------
# Masking.


def _choose_words(word_start, word_length, num_to_predict, rng):
    """Chooses words to mask, in random order, up to num_to_predict pieces.

    As in the original, words go in a random order, and a word that would
    take the count past num_to_predict is passed over for later, smaller
    ones.

    Args:
      word_start: bool [N, L], True at the first piece of each candidate word.
      word_length: int [N, L], each word's piece count at its first piece.
      num_to_predict: int [N], the pieces to mask per row.
      rng: a numpy Generator.

    Returns:
      bool [N, L], True at the first piece of each chosen word.
    """
    keys = np.where(word_start, rng.random(word_start.shape, dtype=np.float32), 2.0)
    order = np.argsort(keys, axis=1)
    lengths = np.take_along_axis(word_length, order, axis=1)
    num_words = word_start.sum(axis=1)
    if lengths.max(initial=0) <= 1:
        # All words are single pieces: the first num_to_predict words fit.
        taken = np.arange(lengths.shape[1]) < np.minimum(num_to_predict, num_words)[:, None]
    else:
        taken = np.zeros(lengths.shape, dtype=bool)
        count = np.zeros(len(lengths), dtype=np.int64)
        for rank in range(lengths.shape[1]):
            fits = (lengths[:, rank] > 0) & (count + lengths[:, rank] <= num_to_predict)
            taken[:, rank] = fits
            count += np.where(fits, lengths[:, rank], 0)
            if np.all((count >= num_to_predict) | (rank + 1 >= num_words)):
                break
    chosen = np.zeros(lengths.shape, dtype=bool)
    np.put_along_axis(chosen, order, taken, axis=1)
    return chosen


def _word_starts(input_ids, is_candidate, config, vocab):
    """Finds the words that masking chooses among.

    Args:
      input_ids: int32 [N, L] ids.
      is_candidate: bool [N, L], True at A's and B's tokens.
      config: a PretrainingDataConfig.
      vocab: a _VocabTables.

    Returns:
      (word_start, start_column): bool [N, L], True at the first piece of each
      word; int [N, L], for each candidate, the column of its word's first
      piece.
    """
    word_start = is_candidate
    if config.do_whole_word_mask:
        # A "##" piece joins the word before it, unless a segment starts with it.
        previous_is_candidate = np.zeros_like(is_candidate)
        previous_is_candidate[:, 1:] = is_candidate[:, :-1]
        joins = vocab.is_continuation[input_ids] & previous_is_candidate
        word_start = is_candidate & ~joins
    column = np.arange(input_ids.shape[1])
    start_column = np.maximum.accumulate(np.where(word_start, column, 0), axis=1)
    return word_start, start_column


def _mask_tokens(input_ids, is_candidate, length, config, vocab, rng):
    """Masks a block's rows as the masked-LM task asks.

    Args:
      input_ids: int32 [N, L] ids, left unchanged.
      is_candidate: bool [N, L], True at A's and B's tokens.
      length: int [N], tokens per row, [CLS] and [SEP]s included.
      config: a PretrainingDataConfig.
      vocab: a _VocabTables.
      rng: a numpy Generator.

    Returns:
      (masked_ids, positions, labels, num_masked, decision_counts):
      int32 [N, L] ids after masking; int [N, P] masked positions, ascending
      and zero-padded; int [N, P] their original ids; int [N] masked
      positions per row; and how many became [MASK], a random piece, or kept
      their token.
    """
    rows, width = input_ids.shape
    word_start, start_column = _word_starts(input_ids, is_candidate, config, vocab)
    row_index = np.arange(rows)[:, None]
    word_length = np.bincount(
        (row_index * width + start_column)[is_candidate], minlength=rows * width
    ).reshape(rows, width)
    num_to_predict = np.minimum(
        config.max_predictions_per_seq,
        np.maximum(1, np.round(length * config.masked_lm_prob).astype(np.int64)))
    chosen_start = _choose_words(word_start, word_length, num_to_predict, rng)
    chosen = chosen_start[row_index, start_column] & is_candidate

    # One uniform draw decides [MASK] (< 0.8), keep (< 0.9) or random.
    decision = rng.random((rows, width), dtype=np.float32)
    if config.do_whole_word_mask and not config.wwm_decision_per_piece:
        decision = decision[row_index, start_column]
    to_mask = chosen & (decision < 0.8)
    to_random = chosen & (decision >= 0.9)
    random_ids = vocab.replacement_ids[rng.integers(0, len(vocab.replacement_ids), (rows, width))]
    masked_ids = np.where(to_mask, vocab.mask_id, np.where(to_random, random_ids, input_ids))

    num_masked = chosen.sum(axis=1)
    hit_rows, hit_columns = np.nonzero(chosen)
    slot = np.arange(len(hit_rows)) - np.repeat(np.cumsum(num_masked) - num_masked, num_masked)
    positions = np.zeros((rows, config.max_predictions_per_seq), dtype=np.int64)
    labels = np.zeros_like(positions)
    positions[hit_rows, slot] = hit_columns
    labels[hit_rows, slot] = input_ids[hit_rows, hit_columns]
    total = int(num_masked.sum())
    as_mask, as_random = int(to_mask.sum()), int(to_random.sum())
    decisions = (as_mask, as_random, total - as_mask - as_random)
    return masked_ids.astype(np.int32), positions, labels, num_masked, decisions


# ----------------------------------------------------------------------------
# Serialization: tf.train.Example protos and TFRecord framing, in numpy.


@dataclasses.dataclass
class _Bytes:
    """One variable-length byte string per row, for a batch of N rows.

    The strings are kept as a list of column blocks, each a uint8 [N, w]
    matrix with a bool [N, w] mask of its valid bytes; row n's string is the
    valid bytes of its row in every block, in order. Joining strings is then
    joining lists, and numpy serializes a whole batch of records at once.

    Attributes:
      blocks: a list of (values, valid) pairs; valid is None where all bytes
        are valid.
      lengths: int64 [N], valid bytes per row.
    """

    blocks: list
    lengths: np.ndarray

    @classmethod
    def dense(cls, values):
        """Wraps a uint8 [N, w] matrix whose bytes are all valid."""
        return cls([(values, None)], np.full(len(values), values.shape[1], dtype=np.int64))

    @classmethod
    def constant(cls, data, rows):
        """Repeats the byte string `data` on `rows` rows."""
        values = np.frombuffer(data, dtype=np.uint8)
        return cls.dense(np.broadcast_to(values, (rows, len(values))))

    @classmethod
    def concat(cls, *parts):
        """Joins byte strings row by row."""
        return cls([block for part in parts for block in part.blocks],
                   sum(part.lengths for part in parts))

    def flatten(self):
        """Returns every row's string, concatenated, as a uint8 array."""
        values = np.concatenate([v for v, _ in self.blocks], axis=1)
        valid = np.concatenate(
            [np.broadcast_to(True, v.shape) if m is None else m for v, m in self.blocks], axis=1)
        return values[valid]


@functools.cache
def _small_varints():
    """The varints of 0 to 2**16 - 1, packed for lookup.

    Returns:
      uint32 [2**16], little-endian: each value's varint in the first three
      bytes (zero-padded), its size in bytes in the fourth.
    """
    encoded, _, size = _compute_varints(np.arange(1 << 16, dtype=np.int64), 3)
    packed = np.zeros((1 << 16, 4), dtype=np.uint8)
    packed[:, :3], packed[:, 3] = encoded, size
    return packed.view("<u4")[:, 0]


def _compute_varints(values, width):
    """Encodes non-negative integers as protobuf varints, with arithmetic.

    Args:
      values: int64 array of any shape, each below 2**(7 * width).
      width: bytes to reserve per value.

    Returns:
      (encoded, valid, size): uint8 values.shape + [width], each value's
      varint left-aligned; bool of the same shape, its bytes; int64
      values.shape, their count.
    """
    shift = 7 * np.arange(width, dtype=np.int64)
    size = np.ones(values.shape, dtype=np.int64)
    for s in shift[1:]:
        size += values >= (1 << s)
    byte = np.arange(width)
    valid = byte < size[..., None]
    continues = (byte + 1 < size[..., None]).astype(np.int64) << 7
    encoded = ((values[..., None] >> shift) & 0x7F | continues).astype(np.uint8)
    return encoded, valid, size


def _varints(values):
    """Encodes non-negative integers as protobuf varints.

    Args:
      values: int [N, K], each below 2**63.

    Returns:
      A _Bytes whose row n is the concatenated varints of values[n].
    """
    values = np.asarray(values, dtype=np.int64)
    rows, count = values.shape
    largest = int(values.max(initial=0))
    if largest < 1 << 7:
        return _Bytes.dense(values.astype(np.uint8))
    if largest < 1 << 16:
        # Token ids and lengths: one lookup beats computing them. The fourth
        # byte, the size, is never valid, as sizes are at most 3.
        packed = _small_varints()[values].view(np.uint8).reshape(rows, count, 4)
        encoded, size = packed, packed[..., 3].astype(np.int64)
        valid = np.arange(4) < size[..., None]
    else:
        encoded, valid, size = _compute_varints(values, (largest.bit_length() + 6) // 7)
    width = encoded.shape[-1]
    return _Bytes([(encoded.reshape(rows, count * width), valid.reshape(rows, count * width))],
                  size.sum(axis=1))


def _field(number, payload):
    """Encodes a length-delimited protobuf field around each row's payload.

    Args:
      number: the field number, at most 15 so that the tag is one byte.
      payload: a _Bytes.

    Returns:
      A _Bytes: tag, varint length, payload.
    """
    tag = _Bytes.constant(bytes([number << 3 | 2]), len(payload.lengths))
    return _Bytes.concat(tag, _varints(payload.lengths[:, None]), payload)


def _feature(spec, values):
    """Encodes one tf.train.Feature per row.

    Args:
      spec: the input_pipeline.FeatureSpec.
      values: [N, spec.length] numbers.

    Returns:
      A _Bytes of serialized Feature messages.
    """
    if spec.dtype == input_pipeline.INT64:
        # Feature.int64_list is field 3; Int64List.value is field 1, packed.
        return _field(3, _field(1, _varints(values)))
    floats = np.ascontiguousarray(values, dtype="<f4").view(np.uint8)
    # Feature.float_list is field 2; FloatList.value is field 1, packed.
    return _field(2, _field(1, _Bytes.dense(floats)))


def _encode_examples(columns):
    """Serializes one tf.train.Example per row.

    Args:
      columns: a list of (FeatureSpec, [N, length] values) in writing order.

    Returns:
      A _Bytes of serialized Example messages.
    """
    rows = len(columns[0][1])
    entries = []
    for spec, values in columns:
        # A map<string, Feature> entry: key is field 1, value field 2.
        name = _field(1, _Bytes.constant(spec.name.encode(), rows))
        entry = _Bytes.concat(name, _field(2, _feature(spec, values)))
        entries.append(_field(1, entry))  # Features.feature is field 1.
    return _field(1, _Bytes.concat(*entries))  # Example.features is field 1.


@functools.cache
def _crc32c_table():
    """The byte table of CRC-32C (Castagnoli, reflected), as uint32 [256]."""
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78), table >> 1)
    return table.astype(np.uint32)


def _crc32c_shift(register):
    """Advances CRC-32C registers over one zero byte, a linear map."""
    return _crc32c_table()[register & 0xFF] ^ (register >> 8)


@functools.cache
def _crc32c_terms(length):
    """Tables that compute the CRC-32C of messages of up to `length` bytes.

    The CRC register is linear in the message, so a message's CRC is the
    XOR of one term per byte, which depends on the byte and on its distance
    from the end (contributions[distance, byte]), and of a term for the
    initial register, which depends on the length (initial[length]).
    Looking the terms up and XOR-ing them computes a whole batch of CRCs
    without a Python loop over the bytes.

    Args:
      length: the longest message to support.

    Returns:
      (contributions, initial): uint32 [length, 256] and [length + 1].
    """
    contributions = np.empty((length, 256), dtype=np.uint32)
    initial = np.empty(length + 1, dtype=np.uint32)
    contributions[0], initial[0] = _crc32c_table(), 0xFFFFFFFF
    for distance in range(1, length):
        contributions[distance] = _crc32c_shift(contributions[distance - 1])
    for size in range(1, length + 1):
        initial[size] = _crc32c_shift(initial[size - 1:size])[0]
    return contributions, initial


def _masked_crc32c(data, lengths):
    """Computes TFRecord's masked CRC-32C of consecutive messages.

    Args:
      data: uint8 [sum(lengths)], the messages back to back.
      lengths: int64 [N], each message's size, all positive.

    Returns:
      uint8 [N, 4]: the little-endian masked checksums.
    """
    # Rounding the size up to a power of two lets a few tables serve all.
    contributions, initial = _crc32c_terms(1 << (int(lengths.max()) - 1).bit_length())
    ends = np.cumsum(lengths)
    # Index of each byte's term in the flattened table: its distance from its
    # message's end, times 256, plus the byte. int32, where it is wide
    # enough, halves the memory traffic.
    dtype = np.int32 if len(data) < 1 << 23 else np.int64
    index = np.repeat(((ends - 1) << 8).astype(dtype), lengths)
    index -= np.arange(0, len(data) << 8, 256, dtype=dtype)
    index += data
    crc = np.bitwise_xor.reduceat(contributions.reshape(-1).take(index), ends - lengths)
    crc ^= initial[lengths] ^ np.uint32(0xFFFFFFFF)
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(0xA282EAD8)
    return masked.astype("<u4").view(np.uint8).reshape(-1, 4)


def _frame_tfrecords(records):
    """Frames serialized records in the TFRecord format.

    Each record becomes: its length (uint64), the length's masked CRC, the
    data, the data's masked CRC; all little-endian.

    Args:
      records: a _Bytes of serialized records.

    Returns:
      (data, lengths): the framed records back to back, as bytes, and each
      one's size.
    """
    data, lengths = records.flatten(), records.lengths
    header = lengths.astype("<u8").view(np.uint8).reshape(-1, 8)
    framed_lengths = lengths + 16
    starts = np.cumsum(framed_lengths) - framed_lengths
    framed = np.empty(int(framed_lengths.sum()), dtype=np.uint8)
    framed[starts[:, None] + np.arange(8)] = header
    framed[starts[:, None] + np.arange(8, 12)] = _masked_crc32c(header.reshape(-1),
                                                                np.full(len(lengths), 8))
    # Record r's data moves past its own 12 header bytes and the 16 framing
    # bytes of each record before it.
    framed[np.arange(len(data)) + np.repeat(16 * np.arange(len(lengths)) + 12, lengths)] = data
    framed[(starts + 12 + lengths)[:, None] + np.arange(4)] = _masked_crc32c(data, lengths)
    return framed.tobytes(), framed_lengths


# ----------------------------------------------------------------------------
# Work units: a pass over a block of documents.


class _Generator:
    """Everything a process needs to tokenize windows and write their pairs."""

    def __init__(self, config):
        """Loads the vocab.

        Args:
          config: a PretrainingDataConfig.
        """
        self.config = config
        tokenizer = tokenization.FullTokenizer(config.vocab_file, config.do_lower_case)
        self.vocab = _VocabTables(tokenizer.vocab)
        self.tokenizer = _CachedTokenizer(tokenizer)
        self.features = input_pipeline.pretraining_features(
            config.max_seq_length, config.max_predictions_per_seq)

    def _random_generators(self, window_index, pass_index, block_index):
        """Seeds the random streams of one unit from random_seed.

        Args:
          window_index, pass_index, block_index: the unit.

        Returns:
          (random.Random for the pair layout, numpy Generator for masking).
        """
        seed = np.random.SeedSequence([
            _PAIRS_STREAM, self.config.random_seed % (1 << 64), window_index, pass_index,
            block_index])
        layout_seed, mask_seed = seed.spawn(2)
        layout_state = layout_seed.generate_state(4).tobytes()
        layout_rng = random.Random(int.from_bytes(layout_state, "little"))
        return layout_rng, np.random.default_rng(mask_seed)

    def generate(self, window, units):
        """Writes the records of some units of a window.

        Args:
          window: a _Window.
          units: a list of (pass_index, block_index, first_document,
            end_document).

        Returns:
          (blocks, summary): for each unit that has records, their framed
          TFRecords back to back and each one's size, in unit order; and a
          PretrainingDataSummary of the units.
        """
        summary = PretrainingDataSummary()
        blocks = []
        for pass_index, block_index, first, end in units:
            layout_rng, mask_rng = self._random_generators(window.index, pass_index, block_index)
            layout = _plan_block(window, first, end, self.config, layout_rng, summary)
            if layout is not None:
                # A block of one huge document has many pairs: batches bound
                # the memory that masking and serializing them take.
                blocks += [self._write_block(window.tokens, batch, mask_rng, summary)
                           for batch in layout.batches(_MAX_BATCH_PAIRS)]
        return blocks, summary

    def _write_block(self, tokens, layout, rng, summary):
        """Masks and serializes the pairs of one unit.

        Args:
          tokens: the window's token ids.
          layout: a _PairLayout.
          rng: a numpy Generator.
          summary: a PretrainingDataSummary to count into.

        Returns:
          (data, lengths), as _frame_tfrecords returns.
        """
        config = self.config
        input_ids, segment_ids, is_candidate, length = _pack_pairs(
            tokens, layout, config.max_seq_length, self.vocab)
        masked_ids, positions, labels, num_masked, decisions = _mask_tokens(
            input_ids, is_candidate, length, config, self.vocab, rng)
        input_mask = np.arange(config.max_seq_length) < length[:, None]
        weights = np.arange(config.max_predictions_per_seq) < num_masked[:, None]
        values = (masked_ids, input_mask, segment_ids, positions, labels, weights,
                  layout.is_random_next[:, None])
        records = _encode_examples(list(zip(self.features, values, strict=True)))

        summary.instances += len(length)
        summary.tokens += int(length.sum())
        summary.masked_tokens += int(num_masked.sum())
        summary.masked_to_mask += decisions[0]
        summary.masked_to_random += decisions[1]
        summary.masked_kept += decisions[2]
        summary.random_next += int(layout.is_random_next.sum())
        summary.truncated += int(layout.truncated.sum())
        return _frame_tfrecords(records)


# Each worker process builds its own _Generator once, in _init_worker.
_generator = None


def _init_worker(config):
    """Builds this process's _Generator."""
    global _generator
    _generator = _Generator(config)


def _tokenize_task(documents):
    """Runs _CachedTokenizer.tokenize_documents in a worker."""
    return _generator.tokenizer.tokenize_documents(documents)


def _generate_task(window, units):
    """Runs _Generator.generate in a worker."""
    return _generator.generate(window, units)


class _InlineExecutor(concurrent.futures.Executor):
    """Runs each task when it is submitted, in this process."""

    def submit(self, fn, /, *args, **kwargs):
        """Runs fn(*args, **kwargs) and returns a finished Future."""
        future = concurrent.futures.Future()
        future.set_result(fn(*args, **kwargs))
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        """Frees this process's _Generator, its vocab and word cache."""
        global _generator
        _generator = None


def _make_executor(config, num_workers):
    """Starts the processes that tokenize and generate.

    Args:
      config: a PretrainingDataConfig.
      num_workers: 1 runs everything in this process.

    Returns:
      A concurrent.futures.Executor whose processes hold a _Generator.
    """
    if num_workers == 1:
        _init_worker(config)
        return _InlineExecutor()
    # "spawn" rather than "fork": a caller that has loaded TensorFlow (tests,
    # notebooks) holds threads and locks that forking would copy half-done.
    return concurrent.futures.ProcessPoolExecutor(
        num_workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker, initargs=(config,))


def _split(items, parts):
    """Cuts a list into at most `parts` contiguous, nearly equal pieces."""
    size = max(1, -(-len(items) // parts))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _units(window, dupe_factor):
    """Lists a window's work units in their canonical order.

    Args:
      window: a _Window.
      dupe_factor: the number of passes.

    Returns:
      A list of (pass_index, block_index, first_document, end_document).
    """
    blocks = window.blocks()
    return [(pass_index, block_index, first, end)
            for pass_index in range(dupe_factor)
            for block_index, (first, end) in enumerate(blocks)]


# ----------------------------------------------------------------------------
# Output.


class _OutputFiles:
    """Writes records round-robin to files that appear only when complete.

    Records go to temporary files next to their destinations, which are
    renamed over the destinations by commit(); close() without commit()
    deletes them.
    """

    def __init__(self, paths):
        """Creates the temporary files.

        Args:
          paths: the output files.

        Raises:
          PretrainingDataError: if a file cannot be created.
        """
        if len(set(paths)) != len(paths):
            raise PretrainingDataError(f"an output file is named twice: {paths}")
        self.paths = list(paths)
        self._files = []
        self._written = 0
        try:
            for path in self.paths:
                if os.path.isdir(path):
                    raise IsADirectoryError("it is a directory")
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
                self._files.append(open(f"{path}.incomplete-{os.getpid()}", "wb"))
        except OSError as e:
            self.close()
            raise PretrainingDataError(f"cannot write output file {path}: {e}") from e

    def write(self, blocks, order):
        """Appends records, dealing them to the files in turn.

        Args:
          blocks: a list of (data, lengths): framed records back to back, and
            each one's size.
          order: the order in which to write the records, indices into the
            records of all blocks.
        """
        # Views into the blocks spare copying a window's records again.
        records = []
        for data, lengths in blocks:
            view, ends = memoryview(data), np.cumsum(lengths).tolist()
            records += [view[start:end] for start, end in zip([0, *ends[:-1]], ends,
                                                              strict=True)]
        records = [records[i] for i in order]
        count = len(self._files)
        for k, f in enumerate(self._files):
            mine = records[(k - self._written) % count::count]
            # Joining a few thousand records per write is much faster than
            # writing each, and needs only a few megabytes.
            for first in range(0, len(mine), _RECORDS_PER_WRITE):
                f.write(b"".join(mine[first:first + _RECORDS_PER_WRITE]))
        self._written += len(records)

    def commit(self):
        """Closes the files and renames them to their final names."""
        for f, path in zip(self._files, self.paths, strict=True):
            f.close()
            os.replace(f.name, path)
        self._files = []

    def close(self):
        """Deletes whatever commit() did not rename."""
        for f in self._files:
            f.close()
            os.remove(f.name)
        self._files = []


class _Progress:
    """Logs documents, instances and instances/s every few seconds."""

    def __init__(self):
        """Starts the clock."""
        self.start = time.monotonic()
        self._last = self.start

    def update(self, summary, windows, force=False):
        """Logs a progress line if it is time to.

        Args:
          summary: the PretrainingDataSummary so far.
          windows: windows done so far.
          force: log even if the last line was recent.
        """
        now = time.monotonic()
        if force or now - self._last >= _PROGRESS_INTERVAL_S:
            self._last = now
            rate = summary.instances / max(1e-9, now - self.start)
            logging.info("%d windows, %d documents, %d instances, %.0f instances/s",
                         windows, summary.documents, summary.instances, rate)


def _submit_tokenization(executor, documents, parts):
    """Submits a raw window's documents for tokenization.

    Args:
      executor: the Executor.
      documents: a list of documents, each a list of lines, or None.
      parts: how many tasks to split them into.

    Returns:
      A list of Futures of _CachedTokenizer.tokenize_documents results; empty
      if documents is None.
    """
    return [executor.submit(_tokenize_task, chunk) for chunk in _split(documents or [], parts)]


def _submit_generation(executor, window, dupe_factor, parts):
    """Submits a tokenized window's units for generation.

    Args:
      executor: the Executor.
      window: a _Window.
      dupe_factor: the number of passes.
      parts: how many tasks to split the units into.

    Returns:
      A list of Futures of _Generator.generate results, in unit order.
    """
    return [executor.submit(_generate_task, window, units)
            for units in _split(_units(window, dupe_factor), parts)]


def _write_window(output, window, generating, config, summary):
    """Waits for a window's records and writes them, shuffled.

    Args:
      output: the _OutputFiles.
      window: the _Window.
      generating: the Futures that _submit_generation returned.
      config: a PretrainingDataConfig.
      summary: a PretrainingDataSummary to count into.
    """
    blocks = []
    for future in generating:
        task_blocks, task_summary = future.result()
        blocks += task_blocks
        summary.add(task_summary)
    shuffle = np.random.default_rng(np.random.SeedSequence(
        [_SHUFFLE_STREAM, config.random_seed % (1 << 64), window.index]))
    output.write(blocks, shuffle.permutation(sum(len(lengths) for _, lengths in blocks)))


def _window_summary(window):
    """Counts a window's documents and tokens.

    Args:
      window: a _Window.

    Returns:
      A PretrainingDataSummary.
    """
    summary = PretrainingDataSummary(
        documents=window.num_documents, input_tokens=len(window.tokens),
        documents_too_short=window.num_empty)
    if window.num_documents == 1 and window.document_offsets[1] == 1:
        # Alone in its window, a one-sentence document has no pair to form.
        summary.documents_too_short += 1
    return summary


def create_pretraining_data(input_patterns, output_files, config, num_workers=1):
    """Writes pretraining TFRecords from raw text.

    Args:
      input_patterns: comma-separated input files and globs, or a list.
      output_files: the output files, a comma-separated string or a list;
        records are dealt to them in turn.
      config: a PretrainingDataConfig.
      num_workers: processes that tokenize and generate; the output does not
        depend on it.

    Returns:
      A PretrainingDataSummary.

    Raises:
      ValueError: on bad settings.
      PretrainingDataError: on a bad input, vocab or output location.
    """
    config.validate()
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    if isinstance(output_files, str):
        output_files = [p.strip() for p in output_files.split(",") if p.strip()]
    if not output_files:
        raise PretrainingDataError("no output file given")
    input_files = expand_input_patterns(input_patterns)
    # Check the vocab here, where an error is clearest, before any worker.
    _VocabTables(_load_vocab(config.vocab_file))

    progress = _Progress()
    summary = PretrainingDataSummary()
    documents = _read_documents(input_files, config.errors)
    windows = _windows(documents, int(config.window_mb * (1 << 20)))
    parts = 2 * num_workers
    output = _OutputFiles(output_files)
    index = 0
    try:
        with _make_executor(config, num_workers) as executor:
            pending = _submit_tokenization(executor, next(windows, None), parts)
            while pending:
                window = _assemble_window(index, [f.result() for f in pending])
                summary.add(_window_summary(window))
                generating = _submit_generation(executor, window, config.dupe_factor, parts)
                # Read and tokenize the next window while this one generates.
                pending = _submit_tokenization(executor, next(windows, None), parts)
                _write_window(output, window, generating, config, summary)
                index += 1
                progress.update(summary, index)
        if summary.documents == 0:
            raise PretrainingDataError(
                f"the input holds no text: {', '.join(input_files)}")
        output.commit()
    finally:
        output.close()
    summary.elapsed_s = time.monotonic() - progress.start
    progress.update(summary, index, force=True)
    return summary
