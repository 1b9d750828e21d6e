"""Learning a WordPiece vocabulary (vocab.txt) from raw text.

The input is the data builder's, read the same way (sources.py): UTF-8
text files in one of its input formats, or a TensorFlow Datasets data set;
documents and sentences do not matter here, lines of text do. The steps:

  1. Words: every line is split into words by bert_tf's own BasicTokenizer,
     the one FullTokenizer runs before WordPiece (punctuation split off, CJK
     ideographs split apart, and with do_lower_case lower-cased and accents
     stripped), so that the learner sees exactly the words that tokenizing
     with the learned vocab will later see. The words are counted.
  2. Word pieces: tensorflow-text's learner
     (tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib,
     the algorithm behind its bert_vocab_from_dataset) chooses the pieces. It
     searches for the count threshold whose vocab comes within 5% below the
     target size, keeps every character of the input (the most frequent
     max_unique_chars of them) both as a word start and as a "##" piece, so
     that every word made of those characters has a spelling, and drops words
     longer than max_word_chars from the counts. Its search is written out
     here as its learn() runs it, with a progress line per threshold tried;
     the vocab is the same (tests/unit/pretraining_data/test_vocab_learning.py).
  3. Layout: the special tokens go where bert-base-uncased and the original
     code have them: [PAD] at id 0 (records pad with 0), then up to 99
     [unusedN] slots, [UNK], [CLS], [SEP], [MASK] (ids 100-103 with the
     default 99 slots), any further [unusedN] slots, and then the learned
     pieces: the characters, then the rest by count. bert_tf looks every
     special token but [PAD] up by name, so other numbers of slots work too.

The learner is pure Python: on a 7.5 MB corpus it takes minutes per
vocabulary (bench/vocab_learning_speed.py). max_lines bounds the sample.
"""

import collections
import dataclasses
import os
import time

import tensorflow as tf
from absl import logging
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from bert_tf import io_utils
from bert_tf.pretraining_data.config import TextInputConfig
from bert_tf.pretraining_data.sources import open_text_source
from bert_tf.settings import setting
from bert_tf.text import tokenization

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"
# In bert-base-uncased's order, after [PAD] and the first unused slots.
SPECIAL_TOKENS = (UNK_TOKEN, "[CLS]", "[SEP]", "[MASK]")
# bert-base-uncased puts 99 [unusedN] slots before [UNK] and the rest after [MASK].
UNUSED_BEFORE_SPECIAL = 99

# tensorflow-text's learner returns a vocab between (1 - this) * target and the target.
_SLACK_RATIO = 0.05
# The learner's own bound on distinct words, the most frequent kept.
_MAX_INPUT_WORDS = 5_000_000
# Fold the per-line counts of space-separated strings into word counts at
# this many distinct strings, to bound memory on a large input.
_MAX_PENDING_STRINGS = 500_000
# Seconds between progress lines while reading.
_PROGRESS_EVERY_S = 10.0
# How many [UNK] words the summary shows.
_UNKNOWN_EXAMPLES = 5


class VocabLearningError(ValueError):
    """Bad input, size or output location, with a message for the user."""


@dataclasses.dataclass(frozen=True)
class VocabLearningConfig:
    """Settings of a vocabulary learning run.

    Each setting is learn_vocab.py's flag of the same name, with its default
    and help (config_flags generates the flags).

    Attributes:
      vocab_size: the target size of the vocab, special tokens and unused
        slots included (bert-base-uncased: 30522). The result is at most this
        size and, when the input has enough frequent pieces, within 5% below.
      do_lower_case: lower-case the text and strip accents (uncased models).
      num_unused: [unusedN] slots to reserve, for tokens a user adds later
        without resizing the model (bert-base-uncased has 994).
      min_count: a piece seen fewer times than this is never chosen (the
        learner's lower count threshold); characters are kept regardless.
      max_lines: read at most this many lines (sentences, once plain text
        is split); None reads all.
      max_unique_chars: keep at most this many characters, the most frequent;
        words with any other character are left out of the learning and
        tokenize to [UNK].
      max_word_chars: words longer than this are left out of the learning
        (they still tokenize, piece by piece).
      errors: how to treat bytes that are not UTF-8: "strict", "replace" or
        "ignore", as the data builder's --errors.
      text_input: where the text comes from and its layout, as the data
        builder's.
    """

    vocab_size: int = setting(
        30522, "Target size of the vocab, special tokens and unused slots included "
        "(bert-base-uncased's is 30522). The result is at most this and, when the text holds "
        "enough frequent pieces, within 5% below; the summary says why when it is smaller.",
        lower_bound=1)
    do_lower_case: bool = setting(
        True, "Lower-case the text and strip accents: True for an uncased model, False for a "
        "cased one. Pass the same value to create_pretraining_data.py and the fine-tuning "
        "scripts.")
    num_unused: int = setting(
        UNUSED_BEFORE_SPECIAL, "[unusedN] slots to reserve for tokens added later without "
        "resizing the model; the first 99 go before [UNK], the rest after [MASK], as in "
        "bert-base-uncased (which has 994).", lower_bound=0)
    min_count: int = setting(
        10, "A word piece seen fewer times than this is never chosen (characters always are); "
        "lower it for a small text.", lower_bound=1)
    max_lines: int | None = setting(
        None, "Read at most this many non-blank lines (sentences, once plain text is split): "
        "a sample that bounds time and memory. Default: all of them.", lower_bound=1)
    max_unique_chars: int = setting(
        1000, "Keep at most this many characters, the most frequent; words with another "
        "character are left out of the learning and become [UNK].", lower_bound=1)
    # No flag: the learner's own bound.
    max_word_chars: int = 50
    errors: str = setting(
        "strict", "What to do with bytes that are not UTF-8: strict stops with the file and "
        "line, replace reads U+FFFD, ignore drops them (as the original did).",
        choices=("strict", "replace", "ignore"))
    text_input: TextInputConfig = TextInputConfig()

    def validate(self):
        """Checks that the settings are in range.

        Raises:
          ValueError: naming the first setting that is out of range.
        """
        for name in ("vocab_size", "min_count", "max_unique_chars", "max_word_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.num_unused < 0:
            raise ValueError(f"num_unused must not be negative, got {self.num_unused}")
        if self.max_lines is not None and self.max_lines < 1:
            raise ValueError(f"max_lines must be at least 1, got {self.max_lines}")
        if self.errors not in ("strict", "replace", "ignore"):
            raise ValueError(f"errors must be strict, replace or ignore, got {self.errors!r}")
        self.text_input.validate()


@dataclasses.dataclass
class VocabLearningSummary:
    """What a run read and wrote, and how the vocab splits the words it read.

    Attributes:
      lines: non-blank lines read.
      input_bytes: their bytes in the files.
      words: words (BasicTokenizer's) in those lines.
      distinct_words: distinct words among them.
      target_size: the vocab_size asked for.
      vocab_size: tokens written.
      shortfall: why vocab_size is below target_size, or "" when it is not.
      num_reserved: [PAD], [UNK], [CLS], [SEP], [MASK] and the unused slots.
      num_characters: single characters (each is also in the vocab as "##c").
      num_word_starts: pieces of two or more characters that start a word.
      num_continuations: "##" pieces of two or more characters.
      pieces: word pieces of the words read, tokenized with the vocab.
      whole_words: words that are a single piece of the vocab.
      unknown_words: words that tokenize to [UNK]: they hold a character the
        vocab lacks (or are longer than WordPiece's limit).
      unknown_examples: a few of the distinct [UNK] words.
      read_s: seconds spent reading and counting.
      learn_s: seconds the learner took.
    """

    lines: int = 0
    input_bytes: int = 0
    words: int = 0
    distinct_words: int = 0
    target_size: int = 0
    vocab_size: int = 0
    shortfall: str = ""
    num_reserved: int = 0
    num_characters: int = 0
    num_word_starts: int = 0
    num_continuations: int = 0
    pieces: int = 0
    whole_words: int = 0
    unknown_words: int = 0
    unknown_examples: tuple = ()
    read_s: float = 0.0
    learn_s: float = 0.0

    @property
    def pieces_per_word(self):
        """Word pieces per word of the input."""
        return self.pieces / max(1, self.words)

    @property
    def whole_word_share(self):
        """Share of the input's words that the vocab holds whole."""
        return self.whole_words / max(1, self.words)

    def describe(self):
        """Returns the summary as a few human-readable lines."""
        learned = max(1, self.vocab_size - self.num_reserved)
        lines = [
            f"vocab written: {self.vocab_size} tokens (target {self.target_size})"
            + (f"; {self.shortfall}" if self.shortfall else ""),
            f"layout: {self.num_reserved} special and unused, {self.num_characters} characters "
            f"(each also as ##c), {self.num_word_starts} word starts "
            f"({self.num_word_starts / learned:.1%}), {self.num_continuations} ## pieces "
            f"({self.num_continuations / learned:.1%})",
            f"input: {self.lines} lines, {self.input_bytes / 1e6:.1f} MB, {self.words} words "
            f"({self.distinct_words} distinct), read in {self.read_s:.1f} s; "
            f"learned in {self.learn_s:.1f} s",
            f"on the input: {self.pieces_per_word:.3f} word pieces per word, "
            f"{self.whole_word_share:.1%} of the words whole, {self.unknown_words} [UNK]",
        ]
        if self.unknown_examples:
            lines.append("[UNK] words (characters outside the vocab): "
                         + " ".join(repr(word) for word in self.unknown_examples))
        return "\n".join(lines)


def reserved_tokens(num_unused):
    """The special tokens and unused slots, in bert-base-uncased's order.

    Args:
      num_unused: how many [unusedN] slots.

    Returns:
      A list: [PAD], the first min(num_unused, 99) unused slots, [UNK],
      [CLS], [SEP], [MASK], the other unused slots.
    """
    unused = [f"[unused{i}]" for i in range(num_unused)]
    return ([PAD_TOKEN, *unused[:UNUSED_BEFORE_SPECIAL], *SPECIAL_TOKENS,
             *unused[UNUSED_BEFORE_SPECIAL:]])


def count_words(source, config):
    """Reads the input and counts its words as BasicTokenizer splits them.

    Args:
      source: the input, as sources.open_text_source returns it.
      config: a VocabLearningConfig (its casing, max_lines and errors).

    Returns:
      (word_counts, lines, input_bytes): a Counter of words, the lines
      (sentences) read and their bytes.

    Raises:
      PretrainingDataError: a file that cannot be read, or bytes that are
        not UTF-8 with errors="strict".
    """
    basic = tokenization.BasicTokenizer(do_lower_case=config.do_lower_case)
    word_counts, pending = collections.Counter(), collections.Counter()

    def fold():
        # BasicTokenizer splits within space-separated strings only (as the
        # data builder's word cache relies on), so each distinct string is
        # tokenized once, however often it occurs.
        for string, count in pending.items():
            for word in basic.tokenize(string):
                word_counts[word] += count
        pending.clear()

    lines = input_bytes = 0
    start = last_report = time.time()
    for document, num_bytes in source.documents(config.errors):
        if config.max_lines is not None:
            document = document[:config.max_lines - lines]
        for line in document:
            pending.update(line.split(" "))
        lines += len(document)
        input_bytes += num_bytes
        if len(pending) > _MAX_PENDING_STRINGS:
            fold()
        if time.time() - last_report > _PROGRESS_EVERY_S:
            last_report = time.time()
            logging.info("read %d lines (%.1f MB) in %.0f s", lines, input_bytes / 1e6,
                         last_report - start)
        if config.max_lines is not None and lines >= config.max_lines:
            break
    fold()
    logging.info("read %d lines (%.1f MB), %d words (%d distinct) in %.1f s", lines,
                 input_bytes / 1e6, sum(word_counts.values()), len(word_counts),
                 time.time() - start)
    return word_counts, lines, input_bytes


def _learnable(word_counts):
    """The (word, count) pairs a vocab.txt can hold.

    A vocab line is stripped when it is read (tokenization.load_vocab), so a
    word with a character that Python counts as whitespace and BERT does not
    (U+2028, U+2029) could not be written as a token; such words are left out
    of the learning and tokenize to [UNK].
    """
    return [(word, count) for word, count in word_counts.items()
            if not any(char.isspace() for char in word)]


def _learner_input(word_counts, reserved, config):
    """The words the learner learns from, filtered as tensorflow-text's learn() filters them.

    Args:
      word_counts: the (word, count) pairs.
      reserved: the reserved tokens, which are not learned from.
      config: a VocabLearningConfig.

    Returns:
      (pairs, characters): the (word, count) pairs kept (words no longer
      than max_word_chars, made of the max_unique_chars most frequent
      characters, the most frequent 5 million), and the set of their
      characters, each of which the vocab will hold.
    """
    kept = learner.get_input_words(word_counts, reserved, config.max_word_chars)
    allowed = learner.get_allowed_chars(kept, config.max_unique_chars)
    pairs = learner.filter_input_words(kept, allowed, _MAX_INPUT_WORDS)
    return pairs, learner.extract_char_tokens(pairs)


def _search_threshold(word_counts, pairs, reserved, config):
    """Runs tensorflow-text's learner: a binary search for the count threshold.

    The steps of wordpiece_tokenizer_learner_lib.learn() (its
    learn_binary_search, with its defaults), written as a loop so that each
    try, which takes seconds to minutes, logs a progress line.

    Args:
      word_counts: the (word, count) pairs before filtering, which bound the search.
      pairs: the filtered pairs, as _learner_input returns them.
      reserved: the reserved tokens, first in the vocab.
      config: a VocabLearningConfig.

    Returns:
      The vocab of the last threshold tried: within _SLACK_RATIO below the
      target, or the closest the search reached (which may be above it).
    """
    params = learner.Params(
        upper_thresh=int(1e7), lower_thresh=config.min_count, num_iterations=4,
        max_input_tokens=_MAX_INPUT_WORDS, max_token_length=config.max_word_chars,
        max_unique_chars=config.max_unique_chars, vocab_size=config.vocab_size,
        slack_ratio=_SLACK_RATIO, include_joiner_token=True, joiner="##",
        reserved_tokens=reserved)
    upper, lower = learner.get_search_threshs(word_counts, params.upper_thresh,
                                              params.lower_thresh)
    start = time.time()
    while True:
        threshold = (upper + lower) // 2
        vocab = learner.learn_with_thresh(pairs, threshold, params)
        logging.info("pieces seen at least %d times: %d tokens (%.0f s so far)", threshold,
                     len(vocab), time.time() - start)
        within_slack = (len(vocab) <= config.vocab_size
                        and config.vocab_size - len(vocab) <= _SLACK_RATIO * config.vocab_size)
        if within_slack or lower >= upper or threshold <= 1:
            return vocab
        if len(vocab) > config.vocab_size:
            lower = threshold + 1
        else:
            upper = threshold - 1


def learn_vocab(word_counts, config):
    """Learns a WordPiece vocabulary from word counts.

    Args:
      word_counts: a mapping from word (as BasicTokenizer gives it) to count.
      config: a VocabLearningConfig.

    Returns:
      (vocab, shortfall): the tokens in id order, at most config.vocab_size
      of them, and why there are fewer than config.vocab_size ("" when
      there are not).

    Raises:
      VocabLearningError: if there are no words, or vocab_size cannot hold
        the reserved tokens and the characters.
    """
    word_pairs = _learnable(word_counts)
    if not word_pairs:
        raise VocabLearningError("the input holds no words to learn a vocab from")
    reserved = reserved_tokens(config.num_unused)
    pairs, characters = _learner_input(word_pairs, reserved, config)
    needed = len(reserved) + 2 * len(characters)
    if config.vocab_size < needed:
        raise VocabLearningError(
            f"vocab_size={config.vocab_size} is too small: the {len(reserved)} special and "
            f"unused tokens and the input's {len(characters)} characters (each also as a "
            f"## piece) need {needed}; raise vocab_size, or lower max_unique_chars or "
            "num_unused")
    vocab = _search_threshold(word_pairs, pairs, reserved, config)
    if len(vocab) > config.vocab_size:
        # The search can end above the target when no threshold lands below
        # it; the rarest pieces go, never a character, so that every word
        # still has a spelling.
        keep = set(reserved) | characters | {"##" + char for char in characters}
        excess = len(vocab) - config.vocab_size
        dropped = set()
        for token in reversed(vocab):
            if len(dropped) == excess:
                break
            if token not in keep:
                dropped.add(token)
        vocab = [token for token in vocab if token not in dropped]
    shortfall = ""
    if len(vocab) < (1 - _SLACK_RATIO) * config.vocab_size:
        shortfall = (f"{config.vocab_size - len(vocab)} fewer: the input has no more pieces "
                     f"seen at least min_count={config.min_count} times (more text, or a "
                     "lower min_count, gives more)")
    elif len(vocab) < config.vocab_size:
        shortfall = (f"{config.vocab_size - len(vocab)} fewer: the learner stops within "
                     f"{_SLACK_RATIO:.0%} below the target")
    return vocab, shortfall


def describe_vocab(vocab, word_counts, num_reserved, summary):
    """Fills a summary's layout counts and how the vocab splits the counted words.

    Args:
      vocab: the tokens in id order.
      word_counts: a mapping from word to count.
      num_reserved: how many tokens at the start are special or unused.
      summary: the VocabLearningSummary to fill.
    """
    summary.vocab_size = len(vocab)
    summary.num_reserved = num_reserved
    for token in vocab[num_reserved:]:
        if len(token) == 1 or (token.startswith("##") and len(token) == 3):
            summary.num_characters += len(token) == 1
        elif token.startswith("##"):
            summary.num_continuations += 1
        else:
            summary.num_word_starts += 1
    wordpiece = tokenization.WordpieceTokenizer(vocab={token: i for i, token in enumerate(vocab)})
    unknown = []
    for word, count in word_counts.items():
        pieces = wordpiece.tokenize(word)
        summary.words += count
        summary.pieces += count * len(pieces)
        if pieces == [UNK_TOKEN]:
            summary.unknown_words += count
            unknown.append((count, word))
        elif len(pieces) == 1:
            summary.whole_words += count
    summary.distinct_words = len(word_counts)
    summary.unknown_examples = tuple(word for _, word in sorted(unknown, reverse=True)
                                     [:_UNKNOWN_EXAMPLES])


def check_output_path(output_file, input_files):
    """Refuses an output file that is one of the input files.

    Args:
      output_file: the vocab.txt to write.
      input_files: the input files.

    Raises:
      VocabLearningError: if output_file is an input file.
    """
    output = os.path.realpath(output_file)
    for path in input_files:
        if os.path.realpath(path) == output:
            raise VocabLearningError(
                f"output file {output_file} is also an input file: writing it would "
                "overwrite the text")


def learn_vocab_file(input_patterns, output_file, config):
    """Learns a vocabulary from text and writes it as a vocab.txt.

    The file appears only when complete: a run that fails or is killed
    leaves an earlier vocab.txt as it was.

    Args:
      input_patterns: comma-separated file names and globs, or a list of
        them, laid out as config.text_input.input_format says; None when
        config.text_input.tfds_name gives the text.
      output_file: the vocab.txt to write, one token a line in id order.
      config: a VocabLearningConfig.

    Returns:
      A VocabLearningSummary.

    Raises:
      VocabLearningError: the settings, the input, the size or the output
        location are not usable.
      PretrainingDataError: a missing or unreadable input file, or a TFDS
        data set that cannot be read.
    """
    try:
        config.validate()
    except ValueError as e:
        raise VocabLearningError(str(e)) from e
    source = open_text_source(input_patterns, config.text_input)
    check_output_path(output_file, source.files)
    start = time.time()
    word_counts, lines, input_bytes = count_words(source, config)
    summary = VocabLearningSummary(lines=lines, input_bytes=input_bytes,
                                   target_size=config.vocab_size,
                                   read_s=time.time() - start)
    if not word_counts:
        raise VocabLearningError(f"the input holds no words: {source.describe()}")
    logging.info("learning a vocab of at most %d tokens from %d distinct words",
                 config.vocab_size, len(word_counts))
    start = time.time()
    vocab, summary.shortfall = learn_vocab(word_counts, config)
    summary.learn_s = time.time() - start
    describe_vocab(vocab, word_counts, len(reserved_tokens(config.num_unused)), summary)
    directory = os.path.dirname(output_file)
    if directory:
        tf.io.gfile.makedirs(directory)
    with io_utils.atomic_write(output_file) as f:
        f.write("".join(token + "\n" for token in vocab))
    return summary

