"""Tokenization classes: BERT's basic and WordPiece tokenizers in pure Python.

This module keeps the public names, arguments and results of the original
google-research/bert `tokenization.py`, so code written against it keeps
working. `bert_tf.text.text_ops` runs the same algorithm inside the TensorFlow graph
and gives the same ids. `VocabTables` adds what building and masking
pretraining records need to know of a vocabulary: the special ids, the word
pieces that a random replacement may draw and which pieces continue a word.

The algorithm, step by step:

1. Cleaning deletes NUL, U+FFFD and control characters (categories Cc and Cf,
   except tab, newline and carriage return) and turns whitespace (space, tab,
   newline, carriage return and category Zs) into a space.
2. Each CJK ideograph becomes a word of its own.
3. The text is split on whitespace, as `str.split()` splits.
4. With `do_lower_case`, each word is lower-cased, put in Unicode NFD and
   stripped of nonspacing marks (category Mn), which removes accents.
5. Each punctuation character (all non-alphanumeric ASCII and category P*)
   becomes a word of its own.
6. WordPiece splits each word into the longest vocabulary entries, greedily
   from the left, writing later pieces with a "##" prefix. A word with a part
   that no entry matches, or with more than `max_input_chars_per_word`
   characters, becomes the unknown token.

Steps 1 to 5 run as a few regular expressions over the whole text instead of a
Python loop over its characters, which is several times faster. Each regular
expression's character class is generated from Python's `unicodedata` by
`char_classes.char_class_ranges()`, so it holds exactly the characters that
the step's definition names. `text_ops` builds its in-graph patterns from the
same ranges.
"""

import collections
import itertools
import os
import re
import unicodedata

import numpy as np

from bert_tf.text import char_classes

# Checkpoint directory names of Google's released BERT models, by casing.
_LOWER_CASED_MODELS = (
    "uncased_L-24_H-1024_A-16",
    "uncased_L-12_H-768_A-12",
    "multilingual_L-12_H-768_A-12",
    "chinese_L-12_H-768_A-12",
)
_CASED_MODELS = (
    "cased_L-12_H-768_A-12",
    "cased_L-24_H-1024_A-16",
    "multi_cased_L-12_H-768_A-12",
)


# The tokens that pretraining records are built with, in VocabTables' order.
_PRETRAINING_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")

# The word piece cache holds this many words before it starts over; a corpus's
# frequent words come back within a few thousand lines, so this keeps nearly
# all hits while bounding memory.
_WORDPIECE_CACHE_SIZE = 200_000


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
    """Checks that the casing flag matches a released checkpoint's casing.

    The casing is not stored in `bert_config.json`, so it is guessed from the
    directory name of Google's released checkpoints. Other names pass.

    Args:
      do_lower_case: the `--do_lower_case` flag the user passed.
      init_checkpoint: path of the checkpoint, e.g.
        "gs://bucket/uncased_L-12_H-768_A-12/bert_model.ckpt", or None.

    Raises:
      ValueError: if the checkpoint is a released model of the other casing.
    """
    if not init_checkpoint:
        return
    match = re.match("^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
    if match is None:
        return
    model_name = match.group(1)
    if model_name in _LOWER_CASED_MODELS and not do_lower_case:
        flag, casing, right_flag = "False", "lowercased", "True"
    elif model_name in _CASED_MODELS and do_lower_case:
        flag, casing, right_flag = "True", "cased", "False"
    else:
        return
    raise ValueError(
        f"--do_lower_case={flag} does not fit --init_checkpoint={init_checkpoint}: "
        f"{model_name} looks like a {casing} model, so pass --do_lower_case={right_flag} "
        "to fine-tune it the way it was pre-trained. If that guess is wrong, remove this "
        "check (tokenization.validate_case_matches_checkpoint)."
    )


# A vocab with more than this share of word pieces holding capitals is cased:
# an uncased one has none, bert-base-cased's has about a quarter.
_CASED_VOCAB_SHARE = 0.01


class CasingError(ValueError):
    """A casing that a vocab cannot be read with; the message names --do_lower_case."""


def _is_special(token):
    """Whether a token is a special one ([CLS], [unused0]), written in capitals in any vocab."""
    return token.startswith("[") and token.endswith("]")


def vocab_casing(vocab):
    """Whether a vocab was built from lower-cased text, by its word pieces alone.

    Uncased: no word piece holds a capital letter, while most of those that
    hold letters hold letters that have a case (Latin, Greek, Cyrillic ...).
    A vocab of scripts without case (Chinese, Korean, Japanese) is neither,
    so that do_lower_case=False, which keeps their characters composed and
    their marks, stays open to it.

    Args:
      vocab: load_vocab()'s dict, or any iterable of the vocab's tokens.

    Returns:
      (casing, capitals): casing "uncased", "cased" (more than 1% of the
      word pieces hold capitals) or None; capitals the number of word
      pieces that hold one.
    """
    tokens = [token for token in vocab if not _is_special(token)]
    capitals = sum(1 for token in tokens if token != token.lower())
    if capitals > _CASED_VOCAB_SHARE * len(tokens):
        return "cased", capitals
    lettered = [token for token in tokens if any(char.isalpha() for char in token)]
    with_case = sum(1 for token in lettered if any(char.upper() != char.lower()
                                                   for char in token))
    if capitals == 0 and with_case > len(lettered) / 2:
        return "uncased", 0
    return None, capitals


def check_case_fits_vocab(do_lower_case, vocab, vocab_file):
    """Refuses a casing that would turn a vocab's words into [UNK]: the one casing rule.

    With do_lower_case=False, an uncased vocab (vocab_casing) has no word
    piece for any capitalised word: 4% of a common English text's tokens
    would be [UNK], with nothing to say so. Every place where a vocab and a
    casing meet checks them here, before any work: fine-tuning and feature
    extraction (model_files.find), the data builder, and the conversions
    that write a casing with a vocab (a TF Hub or keras-hub output).

    Args:
      do_lower_case: The casing to use.
      vocab: load_vocab()'s dict of the vocab.
      vocab_file: Its path, for the message.

    Raises:
      CasingError: do_lower_case=False with an uncased vocab.
    """
    if not do_lower_case and vocab_casing(vocab)[0] == "uncased":
        raise CasingError(f"--do_lower_case=False, but {vocab_file} has no word piece with a "
                          "capital letter (an uncased vocab): capitalised words would be [UNK]; "
                          "pass --do_lower_case=True")


def case_mismatch_with_vocab(do_lower_case, vocab, vocab_file):
    """Says whether lower-casing contradicts a cased vocab, for a warning.

    For checkpoints whose casing is recorded nowhere. Lower-cased text still
    finds a cased vocab's lower-case word pieces, so this is a warning; the
    other way round is refused (check_case_fits_vocab).

    Args:
      do_lower_case: The casing the run uses.
      vocab: load_vocab()'s dict of the vocab.
      vocab_file: Its path, for the message.

    Returns:
      A one-line warning, or None when the flag fits the vocab.
    """
    casing, capitals = vocab_casing(vocab)
    if do_lower_case and casing == "cased":
        return (f"--do_lower_case=True, but {capitals} word pieces of {vocab_file} hold capital "
                "letters (a cased vocab), which lower-cased text never matches; pass "
                "--do_lower_case=False")
    return None


def convert_to_unicode(text):
    """Converts `text` to `str`, decoding bytes as UTF-8.

    Args:
      text: a `str`, or UTF-8 `bytes`; bytes that are not valid UTF-8 are
        dropped, as the original does.

    Returns:
      The text as `str`.

    Raises:
      ValueError: if `text` is neither `str` nor `bytes`.
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise ValueError(f"Unsupported string type: {type(text)}")


def printable_text(text):
    """Returns `text` as a `str` suitable for `print` or logging.

    Args:
      text: a `str`, or UTF-8 `bytes`.

    Returns:
      The text as `str`.

    Raises:
      ValueError: if `text` is neither `str` nor `bytes`.
    """
    # On Python 3 printing wants `str`, which is what convert_to_unicode gives.
    return convert_to_unicode(text)


def load_vocab(vocab_file):
    """Loads a vocabulary file: one token a line, its id the line's number.

    As in the original, each line is stripped of surrounding whitespace. A
    token on two lines is an error: the original kept the later line's id, so
    that the earlier id stood for no token and text was read with ids other
    than the vocab's author meant. Blank lines may repeat: no text matches
    them.

    Args:
      vocab_file: path of the vocabulary, local or a URL that `tf.io.gfile`
        reads (e.g. "gs://bucket/vocab.txt").

    Returns:
      An `OrderedDict` from token to id, in order of first appearance.

    Raises:
      OSError: if the file cannot be read.
      ValueError: if the file is not UTF-8, holds no token, or holds a token
        twice (naming both lines).
    """
    path = os.fspath(vocab_file)
    lines = _read_file(path).split(b"\n")
    # A newline ends the last line; it does not start an empty one.
    if lines[-1] == b"":
        lines.pop()
    vocab = collections.OrderedDict()
    for index, line in enumerate(lines):
        try:
            token = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"Vocab file {path} is not UTF-8: line {index + 1} has the invalid byte "
                f"{line[error.start]:#04x} at column {error.start + 1}"
            ) from error
        token = token.strip()
        if token and token in vocab:
            raise ValueError(
                f"Vocab file {path}: line {index + 1} repeats line {vocab[token] + 1}, "
                f"{token!r}: the token would take the later id and the earlier id no token; "
                "remove one of the lines")
        vocab[token] = index
    if not any(vocab):
        raise ValueError(f"Vocab file {path} is empty: it holds no token")
    return vocab


def _read_file(path):
    """Returns the bytes of a vocab file, local or remote.

    Raises:
      OSError: naming the file, if it cannot be read.
    """
    if "://" not in path:
        try:
            with open(path, "rb") as reader:
                return reader.read()
        except OSError as error:
            raise type(error)(
                error.errno, f"Cannot read vocab file {path}: {error.strerror}"
            ) from error
    # Only remote file systems such as gs:// need TensorFlow, so local
    # vocabularies load without importing it.
    import tensorflow as tf

    try:
        with tf.io.gfile.GFile(path, "rb") as reader:
            return reader.read()
    except tf.errors.OpError as error:
        raise OSError(
            f"Cannot read vocab file {path}: {type(error).__name__} {error.message}"
        ) from error


class VocabTables:
    """The ids and per-id flags that building and masking pretraining records need.

    Both masking implementations read their ids from here, the data builder's
    (static) and the input pipeline's (dynamic), so that they agree.

    Attributes:
      cls_id, sep_id, mask_id: ids of [CLS], [SEP] and [MASK].
      is_continuation: bool numpy array, one entry per id, True for "##"
        pieces.
      replacement_ids: int32 numpy array, sorted: the ids that a random
        replacement may draw, every token except bracketed special ones such
        as [PAD], [UNK] and [unused0].
    """

    def __init__(self, vocab):
        """Builds the tables.

        Args:
          vocab: a mapping from token to id, as `load_vocab` returns.

        Raises:
          ValueError: if [CLS], [SEP] or [MASK] is missing, or no token is
            left to draw replacements from.
        """
        missing = [t for t in _PRETRAINING_SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise ValueError(f"the vocab lacks {', '.join(missing)}")
        self.cls_id, self.sep_id, self.mask_id = (vocab[t] for t in _PRETRAINING_SPECIAL_TOKENS)
        self.is_continuation = np.zeros(max(vocab.values()) + 1, dtype=bool)
        replacements = []
        for token, token_id in vocab.items():
            self.is_continuation[token_id] = token.startswith("##")
            if not (len(token) > 2 and token[0] == "[" and token[-1] == "]"):
                replacements.append(token_id)
        if not replacements:
            raise ValueError("the vocab has no word piece to draw from")
        self.replacement_ids = np.array(sorted(replacements), dtype=np.int32)

    @classmethod
    def from_file(cls, vocab_file):
        """Reads a vocab file and builds its tables.

        Every problem with the file is a ValueError, so that callers that
        report bad settings to the user need to catch one type only.

        Args:
          vocab_file: path of the vocabulary, one token a line (see
            `load_vocab`).

        Returns:
          A VocabTables.

        Raises:
          ValueError: "bad vocab file: ..." if the file cannot be read, is not
            UTF-8 or is empty; or as the constructor raises.
        """
        try:
            vocab = load_vocab(vocab_file)
        except (OSError, ValueError) as e:
            raise ValueError(f"bad vocab file: {e}") from e
        return cls(vocab)


def convert_by_vocab(vocab, items):
    """Maps each item through `vocab`: tokens to ids, or ids to tokens.

    Args:
      vocab: a mapping, e.g. token -> id (`FullTokenizer.vocab`) or
        id -> token (`FullTokenizer.inv_vocab`).
      items: an iterable of keys of `vocab`.

    Returns:
      The list of the items' values.

    Raises:
      KeyError: if an item is not in `vocab`.
    """
    return list(map(vocab.__getitem__, items))


def convert_tokens_to_ids(vocab, tokens):
    """Converts tokens to ids.

    Args:
      vocab: a mapping from token to id.
      tokens: an iterable of tokens.

    Returns:
      The list of ids.
    """
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    """Converts ids to tokens.

    Args:
      inv_vocab: a mapping from id to token.
      ids: an iterable of ids.

    Returns:
      The list of tokens.
    """
    return convert_by_vocab(inv_vocab, ids)

# The original module's character tests, kept with their behaviour so that code
# (and the original tokenization_test.py) written against it keeps working.
# BasicTokenizer itself uses the equivalent classes of char_classes.py.


def _is_whitespace(char):
    """Whether char is whitespace: space, tab, newline, carriage return or category Zs."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char):
    """Whether char is a control character (category C*), tab, newline and return excepted."""
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def _is_punctuation(char):
    """Whether char is punctuation: any non-alphanumeric ASCII, or category P*.

    "$", "^" and "`" are symbols to Unicode but punctuation here, as in the
    original.
    """
    code_point = ord(char)
    if 33 <= code_point <= 47 or 58 <= code_point <= 64 or 91 <= code_point <= 96 \
            or 123 <= code_point <= 126:
        return True
    return unicodedata.category(char).startswith("P")



def whitespace_tokenize(text):
    """Splits `text` on whitespace, as `str.split()` does.

    Args:
      text: a `str`.

    Returns:
      The list of non-empty words.
    """
    return text.split()


class FullTokenizer:
    """Runs end-to-end tokenization: basic tokenization, then WordPiece."""

    def __init__(self, vocab_file, do_lower_case=True):
        """Loads the vocabulary and builds both tokenizers.

        Args:
          vocab_file: path of the vocabulary, one token a line (see
            `load_vocab`).
          do_lower_case: whether to lower-case the text and strip accents; True
            for the uncased models.
        """
        self.vocab_file = os.fspath(vocab_file)
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {index: token for token, index in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)

    def tokenize(self, text):
        """Splits text into word pieces.

        Args:
          text: a `str`, or UTF-8 `bytes`.

        Returns:
          The list of word pieces, e.g. ["un", "##want", "##ed"].
        """
        words = self.basic_tokenizer.tokenize(text)
        # Basic tokens hold no whitespace, so joining them with spaces hands
        # WordPiece exactly these words.
        return self.wordpiece_tokenizer.tokenize(" ".join(words))

    def convert_tokens_to_ids(self, tokens):
        """Converts word pieces to their ids.

        Args:
          tokens: an iterable of word pieces.

        Returns:
          The list of ids.

        Raises:
          KeyError: if a token is not in the vocabulary; the message names the
            vocab file.
        """
        try:
            return convert_by_vocab(self.vocab, tokens)
        except KeyError as error:
            token = error.args[0]
            if token == self.wordpiece_tokenizer.unk_token:
                message = (
                    f"Vocab file {self.vocab_file} has no unknown token {token!r}, which "
                    "stands for words that its word pieces cannot spell"
                )
            else:
                message = f"Token {token!r} is not in vocab file {self.vocab_file}"
            raise KeyError(message) from None

    def convert_ids_to_tokens(self, ids):
        """Converts ids to their word pieces.

        Args:
          ids: an iterable of ids.

        Returns:
          The list of word pieces.
        """
        return convert_by_vocab(self.inv_vocab, ids)


class BasicTokenizer:
    """Runs basic tokenization: cleaning, lower casing, punctuation splitting."""

    def __init__(self, do_lower_case=True):
        """Constructs a BasicTokenizer.

        Args:
          do_lower_case: whether to lower-case the input and strip accents.
        """
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        """Splits a piece of text into words and punctuation.

        Args:
          text: a `str`, or UTF-8 `bytes`.

        Returns:
          The list of words, e.g. ["hello", "!", "how", "are", "you", "?"].
        """
        text = self._clean_text(convert_to_unicode(text))
        if self.do_lower_case:
            # The original lower-cases and strips accents word by word. Doing
            # it on the whole text gives the same words: the one mapping that
            # looks at neighbours, the final sigma, looks only across
            # case-ignorable characters, and no whitespace character is one;
            # NFD never reorders across a space; and no character lower-cases
            # or decomposes into whitespace (tests/unit/text/test_tokenization.py checks
            # these facts for every character).
            text = self._run_strip_accents(text.lower())
        return self._split_words(text)

    @staticmethod
    def _clean_text(text):
        """Deletes NUL, U+FFFD and control characters; turns whitespace into spaces."""
        patterns = char_classes.patterns_for(text)
        text = patterns["removed"].sub("", text)
        return patterns["whitespace"].sub(" ", text)

    @staticmethod
    def _run_strip_accents(text):
        """Puts text in NFD and drops its nonspacing marks (category Mn)."""
        if text.isascii():
            # ASCII text is its own NFD and holds no marks.
            return text
        text = unicodedata.normalize("NFD", text)
        return char_classes.patterns_for(text)["accent"].sub("", text)

    @staticmethod
    def _split_words(text):
        """Splits on whitespace, and makes each punctuation mark and CJK ideograph a word.

        Splitting off CJK ideographs here rather than before lower casing, as
        the original does, gives the same words: lower casing and NFD neither
        create nor remove CJK ideographs (tests/unit/text/test_tokenization.py checks
        this for every character).
        """
        return char_classes.patterns_for(text)["word"].findall(text)


class WordpieceTokenizer:
    """Runs WordPiece tokenization."""

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=200):
        """Constructs a WordpieceTokenizer.

        The vocabulary must not change afterwards: the tokenizer caches the
        pieces of each word it has seen.

        Args:
          vocab: a mapping whose keys are the vocabulary's tokens; pieces
            after the first of a word carry a "##" prefix.
          unk_token: the token that replaces a word WordPiece cannot spell.
          max_input_chars_per_word: longer words become `unk_token`.
        """
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        # No match can be longer than the longest token, so the search for
        # each piece starts there instead of at the end of the word.
        self._max_piece_chars = max((len(token) for token in vocab), default=0)
        self._cache = _WordCache(self._split_word)

    def tokenize(self, text):
        """Splits each whitespace-separated word of `text` into word pieces.

        This is greedy longest-match-first: each piece is the longest
        vocabulary entry that starts the rest of the word. For example,
        "unaffable" becomes ["un", "##aff", "##able"].

        Args:
          text: a `str` or UTF-8 `bytes` of whitespace-separated words that
            `BasicTokenizer` has already produced.

        Returns:
          The list of word pieces.
        """
        words = whitespace_tokenize(convert_to_unicode(text))
        return list(itertools.chain.from_iterable(map(self._cache.__getitem__, words)))

    def _split_word(self, word):
        """Returns the word pieces of one word, or (unk_token,)."""
        if len(word) > self.max_input_chars_per_word:
            return (self.unk_token,)
        pieces = []
        start = 0
        while start < len(word):
            end = min(len(word), start + self._max_piece_chars)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                # No entry matches at `start`: the whole word is unknown.
                return (self.unk_token,)
            pieces.append(piece)
            start = end
        return tuple(pieces)


class _WordCache(dict):
    """Maps each word to its word pieces, splitting words on first sight.

    Being a dict with `__missing__`, a hit costs one C-level lookup, with no
    Python code run.
    """

    def __init__(self, split_word):
        """Creates an empty cache.

        Args:
          split_word: the function from a word to its tuple of word pieces.
        """
        super().__init__()
        self._split_word = split_word

    def __missing__(self, word):
        """Splits a word that is not cached yet, and caches it."""
        if len(self) >= _WORDPIECE_CACHE_SIZE:
            self.clear()
        pieces = self[word] = self._split_word(word)
        return pieces


def pack_ids(ids_a, ids_b=None, *, max_seq_length, cls_id, sep_id):
    """Packs the token ids of one example into BERT's fixed-length inputs.

    The layout is `[CLS] a [SEP]`, or `[CLS] a [SEP] b [SEP]` for a pair, then
    zeros up to `max_seq_length`. A single segment keeps its first
    `max_seq_length - 2` ids. A pair is truncated as the original
    `run_classifier.py` does: the last id of the longer segment (of `b` on a
    tie) is dropped until the pair fits in `max_seq_length - 3`.
    `text_ops.BertPacker` does the same in the TensorFlow graph.

    Args:
      ids_a: the first segment's token ids.
      ids_b: the second segment's token ids, or None.
      max_seq_length: the length of every output list.
      cls_id: the id of "[CLS]".
      sep_id: the id of "[SEP]".

    Returns:
      A dict of lists of `max_seq_length` ints: "input_ids", "input_mask" (1
      for real tokens, 0 for padding) and "segment_ids" (0 for `[CLS] a
      [SEP]`, 1 for `b [SEP]`).

    Raises:
      ValueError: if `max_seq_length` leaves no room for the special tokens.
    """
    ids_a = list(ids_a)
    if ids_b is None:
        _check_room(max_seq_length, 2)
        ids_a = ids_a[: max_seq_length - 2]
        input_ids = [cls_id, *ids_a, sep_id]
        segment_ids = [0] * len(input_ids)
    else:
        _check_room(max_seq_length, 3)
        ids_b = list(ids_b)
        _truncate_seq_pair(ids_a, ids_b, max_seq_length - 3)
        input_ids = [cls_id, *ids_a, sep_id, *ids_b, sep_id]
        segment_ids = [0] * (len(ids_a) + 2) + [1] * (len(ids_b) + 1)
    padding = [0] * (max_seq_length - len(input_ids))
    return {
        "input_ids": input_ids + padding,
        "input_mask": [1] * len(input_ids) + padding,
        "segment_ids": segment_ids + padding,
    }


def _check_room(max_seq_length, special_tokens):
    """Raises ValueError if `max_seq_length` cannot hold the special tokens."""
    if max_seq_length < special_tokens:
        raise ValueError(
            f"max_seq_length={max_seq_length} leaves no room for the "
            f"{special_tokens} special tokens"
        )


def _truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Truncates a pair in place to `max_length`, always from the longer one.

    Dropping from the longer segment keeps more of a short one, whose every
    token likely carries more information.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()
