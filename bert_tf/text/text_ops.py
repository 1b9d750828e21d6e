"""BERT tokenization inside the TensorFlow graph, and packing into BERT's inputs.

`BertTextTokenizer` runs the algorithm of `bert_tf.text.tokenization` with
TensorFlow and tensorflow_text ops, so it works in `tf.data` pipelines, in
`tf.function`s and in SavedModels that take raw text, and it gives the same
ids as `tokenization.FullTokenizer`. `BertPacker` then lays the ids out as
`[CLS] a [SEP] b [SEP]` with fixed-length padding, as `tokenization.pack_ids`
does in Python.

Why not `tensorflow_text.BertTokenizer`: its lower casing is NFKC case
folding, which also maps "ß" to "ss", "ﬁ" to "fi", full-width letters to
ASCII and superscripts to plain letters, and it turns control characters into
spaces instead of deleting them, so its ids differ from the original's. Here
each step of the original has its own op:

1. Texts that are not valid UTF-8, which one RE2 match finds, lose their
   invalid bytes (`unicode_transcode`), as Python's
   `decode("utf-8", "ignore")` drops them.
2. Cleaning deletes control characters and turns whitespace into spaces
   (`regex_replace`). U+2028 and U+2029, which the original's cleaning keeps
   but `str.split()` splits on, become spaces too.
3. With `do_lower_case`: ICU lower casing (`tf.strings.lower`, the full
   mapping that `str.lower` applies, final sigma included), NFD
   (`normalize_utf8`), then deletion of nonspacing marks (`regex_replace`).
4. Each punctuation mark and CJK ideograph gets a space on either side
   (`regex_replace`), and `tf.strings.split` splits on the spaces.
5. Words longer than `max_input_chars_per_word` characters become the unknown
   token; `FastWordpieceTokenizer` splits the rest into word pieces.

Unicode versions. Every character class (controls, whitespace, marks,
punctuation, ideographs) comes from Python's `unicodedata` through
`char_classes.char_class_ranges()`, so RE2's own Unicode tables play no part.
ICU's do: TensorFlow's ICU lower-cases, tensorflow_text's ICU normalizes, and
either may follow another Unicode version than Python's `unicodedata` (with
Python 3.11 and TensorFlow 2.21: Unicode 14.0 for Python, 13.0 for
TensorFlow's ICU and 16.0 for tensorflow_text's). On first use,
`_icu_disagreements()` runs both on every code point that can hold a
character and lists those where they differ: letters that only the newer
version lower-cases, characters that only the newer version decomposes, and
marks whose combining class only the newer version knows. The rare strings that hold one take a
slower path that folds those characters from a table Python computed.

Known residual difference: where a capital sigma lower-cases to final "ς" or
to "σ" depends on its neighbours being cased or case-ignorable, and for
characters that only the newer Unicode version knows (with the versions
above: the Vithkuqi, Glagolitic and Latin letters and the marks and symbols
added in Unicode 14.0) ICU and Python may judge the sigma differently. Only a
"Σ" next to such a character, possibly across case-ignorable ones, is
affected. Likewise, were Python's Unicode version newer than
tensorflow_text's, a combining mark that only Python knows would cut the text
on the slower path, and NFD would not reorder marks across it.
"""

import functools
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.text import char_classes, tokenization

# Matches valid UTF-8: code points up to U+10FFFF, surrogates excluded. RE2's
# "." would also accept encoded surrogates, which Python's decoder rejects.
_VALID_UTF8_PATTERN = r"[\x{0}-\x{d7ff}\x{e000}-\x{10ffff}]*"

# Marks of the lowest and highest non-zero canonical combining classes (1 and
# 240). NFD moves a mark of class c before a preceding mark of a higher
# class, so "a" + x + low mark and "a" + high mark + x reveal the class of x.
_LOW_CLASS_MARK = "\u0334"
_HIGH_CLASS_MARK = "\u0345"

# Planes 4 to 13 hold no characters in any Unicode version so far, and planes
# 15 and 16 only private use ones, which have no case, decomposition or
# combining class: ICU and Python can only disagree on planes 0 to 3 and 14.
_PROBED_PLANES = (0, 1, 2, 3, 14)


class BertTextTokenizer(tf.Module):
    """BERT's tokenizer on TensorFlow ops: the same ids as `FullTokenizer`.

    Attributes:
      vocab: the `OrderedDict` from token to id of `tokenization.load_vocab`,
        e.g. for the ids of "[CLS]" and "[SEP]".
      do_lower_case: whether the text is lower-cased and stripped of accents.
    """

    def __init__(
        self,
        vocab_file,
        do_lower_case=True,
        unk_token="[UNK]",
        max_input_chars_per_word=200,
        name=None,
    ):
        """Loads the vocabulary and builds the in-graph tokenizer.

        Args:
          vocab_file: path of the vocabulary, one token a line (see
            `tokenization.load_vocab`).
          do_lower_case: whether to lower-case the text and strip accents;
            True for the uncased models.
          unk_token: the token for words that WordPiece cannot spell.
          max_input_chars_per_word: longer words become `unk_token`.
          name: the name of this `tf.Module`.

        Raises:
          ValueError: if the vocabulary lacks `unk_token`, or cannot be loaded
            (see `tokenization.load_vocab`).
        """
        super().__init__(name=name)
        vocab = tokenization.load_vocab(vocab_file)
        if unk_token not in vocab:
            raise ValueError(
                f"Vocab file {vocab_file} has no unknown token {unk_token!r}, which the "
                "in-graph tokenizer needs for words that its word pieces cannot spell"
            )
        self.vocab = vocab
        self.do_lower_case = do_lower_case
        self._unk_token = unk_token
        self._max_input_chars_per_word = max_input_chars_per_word

        # WordPiece never matches a blank line or a bare "##" (each piece has
        # at least one character), so they are left out; the table
        # `_piece_ids` maps the remaining entries, and duplicates, back to the
        # ids the Python form gives them.
        pieces = [token for token in vocab if token and token != "##"]
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=pieces,
            suffix_indicator="##",
            # A UTF-8 character takes at most 4 bytes, so only the character
            # limit, applied in `tokenize`, ever makes a word unknown.
            max_bytes_per_word=4 * max_input_chars_per_word,
            token_out_type=tf.int32,
            unknown_token=unk_token,
            no_pretokenization=True,
        )
        self._piece_ids = tf.constant([vocab[token] for token in pieces], tf.int32)

        classes = char_classes.char_class_ranges()
        own_word = _re2_class(classes["punctuation"] + classes["cjk"])
        # U+2028 and U+2029 survive cleaning but split words. Turning them
        # into spaces along with the other whitespace leaves only spaces to
        # split on; lower casing cannot tell, as they are neither cased nor
        # case-ignorable.
        separators = {
            code_point
            for first, last in classes["whitespace"] + classes["split"]
            for code_point in range(first, last + 1)
        } - {0x20}
        self._removed_pattern = f"[{_re2_class(classes['removed'])}]+"
        self._separator_pattern = f"[{_re2_class((cp, cp) for cp in sorted(separators))}]"
        self._accent_pattern = f"[{_re2_class(classes['accent'])}]+"
        self._own_word_pattern = f"([{own_word}])"

        self._special_folds = None
        if do_lower_case:
            folds = _icu_disagreements()
            if folds:
                special = _re2_class((ord(char), ord(char)) for char in folds)
                self._special_pattern = f"[{special}]"
                self._no_special_pattern = f"[^{special}]*"
                self._special_folds = tf.lookup.StaticHashTable(
                    tf.lookup.KeyValueTensorInitializer(
                        tf.constant([char.encode() for char in folds]),
                        tf.constant([fold.encode() for fold in folds.values()]),
                    ),
                    default_value="",
                )

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def tokenize(self, text):
        """Tokenizes a batch of texts into word piece ids.

        Args:
          text: a `[batch]` tf.string tensor of UTF-8 texts.

        Returns:
          A `tf.RaggedTensor` `[batch, (tokens)]` of int32 ids, without
          [CLS] or [SEP]: for each text, the ids of
          `FullTokenizer.tokenize`.
        """
        words = self.basic_tokenize(text)
        # A word that is too long becomes the unknown token, which WordPiece
        # maps to its own id.
        too_long = (
            tf.strings.length(words.flat_values, unit="UTF8_CHAR") > self._max_input_chars_per_word
        )
        words = words.with_flat_values(tf.where(too_long, self._unk_token, words.flat_values))
        pieces = self._wordpiece.tokenize(words)
        ids = pieces.with_flat_values(tf.gather(self._piece_ids, pieces.flat_values))
        return ids.merge_dims(1, 2)

    def split_words_with_offsets(self, text):
        """Splits raw texts into words where basic tokenization splits them, with offsets.

        Words end at whitespace, and each punctuation mark or CJK ideograph is
        a word of its own, as in `basic_tokenize`; but the words are the raw
        text's own substrings (not cleaned, cased or stripped of accents), so
        that their offsets point into the input.

        Args:
          text: a `[batch]` tf.string tensor of UTF-8 texts.

        Returns:
          (words, starts, ends): `tf.RaggedTensor`s `[batch, (words)]` of the
          words and of their byte offsets in the text (end exclusive).
        """
        whitespace = self._separator_pattern[:-1] + "\\x{20}]"
        return tf_text.regex_split_with_offsets(
            text, f"{whitespace}|{self._own_word_pattern[1:-1]}",
            keep_delim_regex_pattern=self._own_word_pattern[1:-1])

    def basic_tokenize(self, text):
        """Splits texts into words and punctuation, as `BasicTokenizer` does.

        Args:
          text: a `[batch]` tf.string tensor of UTF-8 texts.

        Returns:
          A `tf.RaggedTensor` `[batch, (words)]` of UTF-8 strings: for each
          text, the words of `BasicTokenizer.tokenize`.
        """
        # Dropping invalid bytes is slow, and text is nearly always valid, so
        # only the invalid texts are transcoded.
        text = _replace_rows(
            text,
            text,
            tf.logical_not(tf.strings.regex_full_match(text, _VALID_UTF8_PATTERN)),
            lambda invalid: tf.strings.unicode_transcode(
                invalid, "UTF-8", "UTF-8", errors="ignore"
            ),
        )
        text = tf.strings.regex_replace(text, self._removed_pattern, "")
        text = tf.strings.regex_replace(text, self._separator_pattern, " ")
        if self.do_lower_case:
            text = self._lower_and_strip_accents(text)
        # Padding punctuation and ideographs with spaces and splitting on
        # spaces is several times faster than tensorflow_text.regex_split.
        # Splitting off CJK ideographs here instead of before lower casing
        # gives the same words, as in `tokenization.BasicTokenizer`.
        text = tf.strings.regex_replace(text, self._own_word_pattern, r" \1 ")
        return tf.strings.split(text)

    def _lower_and_strip_accents(self, text):
        """Lower-cases, puts in NFD and deletes nonspacing marks, as Python does."""
        folded = _fold(text)
        if self._special_folds is not None:
            has_special = tf.logical_not(
                tf.strings.regex_full_match(text, self._no_special_pattern)
            )
            folded = _replace_rows(folded, text, has_special, self._fold_piecewise)
        return tf.strings.regex_replace(folded, self._accent_pattern, "")

    def _fold_piecewise(self, text):
        """Folds texts that hold characters on which ICU and Python disagree.

        The texts are cut before and after each such character; the table
        folds those characters, and ICU the pieces between them.
        """
        pieces = tf_text.regex_split(text, self._special_pattern, self._special_pattern)
        is_special = tf.strings.regex_full_match(pieces.flat_values, self._special_pattern)
        folded = tf.where(
            is_special,
            self._special_folds.lookup(pieces.flat_values),
            _fold(pieces.flat_values),
        )
        return tf.strings.reduce_join(pieces.with_flat_values(folded), axis=1)


class BertPacker:
    """Packs token ids into BERT's inputs: `[CLS] a [SEP] b [SEP]`, padded.

    This is `tokenization.pack_ids` on batches of ragged ids, in the graph: a
    single segment keeps its first `max_seq_length - 2` ids, and a pair is
    truncated as the original `run_classifier.py` does, dropping the last id
    of the longer segment (of `b` on a tie) until it fits in
    `max_seq_length - 3`.
    """

    def __init__(self, max_seq_length, cls_id, sep_id):
        """Creates a packer.

        Args:
          max_seq_length: the length of each packed sequence: an int, or a
            scalar int32 tensor (a SavedModel's argument), which is not
            checked.
          cls_id: the id of "[CLS]".
          sep_id: the id of "[SEP]".
        """
        self.max_seq_length = max_seq_length
        self.cls_id = cls_id
        self.sep_id = sep_id

    def __call__(self, segment_a, segment_b=None):
        """Packs one or two segments of each example.

        Args:
          segment_a: a `tf.RaggedTensor` `[batch, (tokens)]` of integer ids,
            e.g. from `BertTextTokenizer.tokenize`.
          segment_b: the second segments, likewise, or None.

        Returns:
          A dict of int32 tensors of static shape `[batch, max_seq_length]`:
          "input_ids", "input_mask" (1 for real tokens, 0 for padding) and
          "segment_ids" (0 for `[CLS] a [SEP]`, 1 for `b [SEP]`).

        Raises:
          ValueError: if `max_seq_length` leaves no room for the special
            tokens.
        """
        segments = [segment_a] if segment_b is None else [segment_a, segment_b]
        special_tokens = len(segments) + 1
        if isinstance(self.max_seq_length, int) and self.max_seq_length < special_tokens:
            raise ValueError(
                f"max_seq_length={self.max_seq_length} leaves no room for the "
                f"{special_tokens} special tokens"
            )
        length = self.max_seq_length
        lengths = [tf.cast(segment.row_lengths(), tf.int32) for segment in segments]
        budget = length - special_tokens
        if segment_b is None:
            kept = [tf.minimum(lengths[0], budget)]
        else:
            # The original drops one id at a time from the longer segment. That
            # leaves a short segment whole and the other one the rest of the
            # budget; when both are long, `a` keeps the larger half, because a
            # tie drops from `b`.
            kept_a = tf.minimum(lengths[0], tf.maximum((budget + 1) // 2, budget - lengths[1]))
            kept = [kept_a, tf.minimum(lengths[1], budget - kept_a)]

        # Each output column takes [CLS], an id of a segment, [SEP] or padding
        # by where it falls; this builds dense tensors directly, which traces
        # and runs faster than concatenating ragged ones.
        column = tf.range(length)[tf.newaxis, :]
        input_ids = tf.where(column == 0, self.cls_id, 0)
        segment_ids = tf.zeros_like(input_ids)
        start = tf.ones_like(kept[0])[:, tf.newaxis]
        for segment_type, (segment, keep) in enumerate(zip(segments, kept, strict=True)):
            end = start + keep[:, tf.newaxis]
            # A Python int keeps the width static; a tensor gives it at run time.
            width = ([None, length] if isinstance(length, int)
                     else tf.stack([segment.nrows(), tf.cast(length, tf.int64)]))
            ids = tf.gather(
                tf.cast(segment, tf.int32).to_tensor(0, shape=width),
                tf.clip_by_value(column - start, 0, length - 1),
                batch_dims=1,
            )
            input_ids = tf.where((column >= start) & (column < end), ids, input_ids)
            input_ids = tf.where(column == end, self.sep_id, input_ids)
            segment_ids = tf.where((column >= start) & (column <= end), segment_type, segment_ids)
            start = end + 1
        return {
            "input_ids": input_ids,
            "input_mask": tf.cast(column < start, tf.int32),
            "segment_ids": segment_ids,
        }


def _replace_rows(target, source, mask, function):
    """Replaces rows of `target` by `function` of the same rows of `source`.

    Args:
      target: a `[batch]` tensor.
      source: a `[batch]` tensor.
      mask: a `[batch]` bool tensor: the rows to replace.
      function: maps a `[rows]` tensor of `source` rows to their new values;
        it only runs on the rows of `mask`.

    Returns:
      `target`, with `function(source[mask])` in the rows of `mask`.
    """
    rows = tf.where(mask)
    return tf.tensor_scatter_nd_update(target, rows, function(tf.gather_nd(source, rows)))


def _fold(text):
    """ICU's lower casing and NFD of a string tensor."""
    return tf_text.normalize_utf8(tf.strings.lower(text, encoding="utf-8"), "NFD")


@functools.cache
def _icu_disagreements():
    """Finds the characters that ICU folds differently from Python.

    Folding is lower casing then NFD. Each character that survives cleaning
    is probed alone and next to marks of the lowest and highest combining
    class, which catches differences in case mapping, decomposition and
    combining class alike. Runs once per process, eagerly.

    Returns:
      A dict from each such character to Python's fold of it, in code point
      order.
    """
    cleaned = set()
    for name in ("removed", "whitespace"):
        for first, last in char_classes.char_class_ranges()[name]:
            cleaned.update(range(first, last + 1))
    chars = [
        chr(code_point)
        for plane in _PROBED_PLANES
        for code_point in range(plane << 16, (plane + 1) << 16)
        if not 0xD800 <= code_point <= 0xDFFF and code_point not in cleaned
    ]
    probes = [
        *chars,
        *(f"a{char}{_LOW_CLASS_MARK}" for char in chars),
        *(f"a{_HIGH_CLASS_MARK}{char}" for char in chars),
    ]
    with tf.init_scope():
        folded = _fold(tf.constant(probes)).numpy()
    disagreeing = {
        chars[index % len(chars)]
        for index, (probe, icu) in enumerate(zip(probes, folded, strict=True))
        if icu.decode("utf-8") != unicodedata.normalize("NFD", probe.lower())
    }
    return {char: unicodedata.normalize("NFD", char.lower()) for char in sorted(disagreeing)}


def _re2_class(ranges):
    """Writes code point ranges as the body of an RE2 character class."""
    return "".join(
        f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}"
        for first, last in ranges
    )
