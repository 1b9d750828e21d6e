"""The corpus side of the data builder: documents -> windows of token ids.

Documents, streamed from the input (sources.py), are grouped into windows
of about window_mb of text (`group_windows`), tokenized in parts, possibly
in several processes (`CachedTokenizer`), and the parts joined into a
`Window`: its token ids and sentence and document offsets, which the pair
layout (instances.py) works on.
"""

import dataclasses
import functools
import itertools

import numpy as np

# Pairs are laid out, masked and serialized in blocks of consecutive documents
# that hold at least this many tokens: enough to make numpy's per-call cost
# small, few enough to spread a window over the workers. A block and a pass
# form a unit of work, with a random seed of its own.
_BLOCK_TOKENS = 32768

# A window is closed only once it holds this many documents, so that random
# next spans have another document to come from.
_MIN_WINDOW_DOCUMENTS = 2

# Bounds the per-process memo of word -> word-piece ids, at about 200 bytes an
# entry; a corpus's frequent words come back long before it fills.
_MAX_CACHED_WORDS = 1 << 18


def group_windows(documents, window_bytes):
    """Groups a stream of documents into windows of about window_bytes.

    A window closes after the document that brings it to window_bytes, once
    it holds _MIN_WINDOW_DOCUMENTS. A last window too small to stand alone
    joins the one before it.

    Args:
      documents: an iterable of (sentences, num_bytes), as a source's
        documents() yields (sources.py).
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


class CachedTokenizer:
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
class Window:
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


def assemble_window(index, parts):
    """Joins the tokenized parts of a window.

    Args:
      index: the window's position in the input.
      parts: results of CachedTokenizer.tokenize_documents, in order.

    Returns:
      A Window.
    """
    tokens, sentence_lengths, document_sentences, num_empty = zip(*parts, strict=True)
    return Window(
        index=index,
        tokens=np.concatenate(tokens),
        sentence_offsets=np.concatenate([[0], np.cumsum(np.concatenate(sentence_lengths))]),
        document_offsets=np.concatenate([[0], np.cumsum(np.concatenate(document_sentences))]),
        num_empty=sum(num_empty))
