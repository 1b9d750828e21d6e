"""Input lines -> InputExample -> InputFeatures: what the model is given.

Input: one example a line, split on " ||| " as the original does (its regex
^(.*) \\|\\|\\| (.*)$). Before any work, count_examples() reads the file once
to check every line, so that an empty line, one with nothing on a side of
"|||" (which the original embedded as text), or one with two " ||| " (whose
first text the original made "a ||| b"), fails the run at once with the
file and line named. With word_level, the words of a line are its
whitespace-separated words (a pair's first text's, then its second's), each
tokenized on its own; words that truncation cuts off entirely get no vector
(a warning counts the truncated examples).

Layers (--layers) are counted as the original counts them: -1 is the last
transformer layer and -N the first of N; 0 .. N-1 count from the first.
"emb" is the embedding output, the input to the first layer (Hugging Face's
hidden_states[0]).
"""

import dataclasses
import re

import tensorflow as tf

from bert_tf.text import tokenization

# The --layers name of the embedding output.
EMBEDDINGS = "emb"
# The original's separator of a pair's two texts on one input line.
_SEPARATOR = " ||| "
_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")
# A line that is only the separator, or has nothing on one side of it.
_BARE_SEPARATOR = re.compile(r"^\|\|\|(\s.*)?$|^(.*\s)?\|\|\|$")


class ExtractionError(ValueError):
    """Input or settings that extraction cannot run with; the message names the flag or line."""


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """One requested layer.

    Attributes:
      name: As written in --layers, normalized ("-1", "0", "emb"); names npz
        arrays and tfrecord features.
      index: The jsonl "index": the integer given, or "emb".
      position: Its place in [embedding_output, layer_0, ..., layer_{N-1}].
    """

    name: str
    index: int | str
    position: int


def parse_layers(text, num_hidden_layers):
    """Parses --layers, e.g. "-1,-2,-3,-4" or "emb,0,-1".

    Args:
      text: Comma-separated layer indices, or EMBEDDINGS.
      num_hidden_layers: N, the model's transformer layers.

    Returns:
      A list of LayerSpec, in the order given.

    Raises:
      ExtractionError: naming --layers, for an entry that is not an index, an
        index out of range, or an entry given twice.
    """
    specs = []
    for entry in text.split(","):
        entry = entry.strip()
        if entry == EMBEDDINGS:
            specs.append(LayerSpec(EMBEDDINGS, EMBEDDINGS, 0))
            continue
        try:
            index = int(entry)
        except ValueError:
            raise ExtractionError(
                f"--layers={text}: {entry!r} is not a layer index (an integer, or "
                f"{EMBEDDINGS!r} for the embedding output)") from None
        if not -num_hidden_layers <= index < num_hidden_layers:
            raise ExtractionError(
                f"--layers={text}: layer {index} is out of range: the model has "
                f"{num_hidden_layers} layers, -1 (the last) to {-num_hidden_layers} (the "
                f"first), or 0 to {num_hidden_layers - 1}")
        # index % N maps -1 to N - 1; +1 skips the embedding output.
        specs.append(LayerSpec(str(index), index, index % num_hidden_layers + 1))
    names = [spec.name for spec in specs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ExtractionError(f"--layers={text}: {', '.join(repeated)} given twice")
    return specs


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One input line.

    Attributes:
      unique_id: The line's 0-based number: the jsonl "linex_index".
      text_a: The text, or a pair's first text.
      text_b: A pair's second text, else None.
    """

    unique_id: int
    text_a: str
    text_b: str | None


def parse_line(line, unique_id, where):
    """Reads one input line as the original does: "text" or "text_a ||| text_b".

    Args:
      line: The line, with or without its newline.
      unique_id: Its 0-based number.
      where: "file:line", for the error message.

    Returns:
      An InputExample.

    Raises:
      ExtractionError: naming `where`, for an empty line, an empty side
        of " ||| " (the original would have embedded "" or "|||"), or more
        than one " ||| " (the original's first text would hold the others).
    """
    line = line.strip()
    if not line:
        raise ExtractionError(
            f"{where}: empty line; each line holds a text, or two joined by ' ||| '")
    if _BARE_SEPARATOR.match(line):
        raise ExtractionError(f"{where}: nothing on one side of '|||' in {line!r}")
    separators = line.count(_SEPARATOR)
    if separators > 1:
        raise ExtractionError(
            f"{where}: {separators} ' ||| ' separators; a line holds a text, or two joined by "
            "one ' ||| '")
    match = _PAIR.match(line)
    if match is None:
        return InputExample(unique_id, line, None)
    return InputExample(unique_id, match.group(1), match.group(2))


def read_examples(input_file):
    """Reads the input file lazily, one example a line.

    Args:
      input_file: A local path or any tf.io.gfile filesystem's.

    Yields:
      InputExample, in file order.

    Raises:
      ExtractionError: naming the file (and line), for a file that cannot
        be read, a line that is not UTF-8, or a line parse_line refuses.
    """
    try:
        with tf.io.gfile.GFile(input_file, "rb") as reader:
            for number, raw in enumerate(reader):
                where = f"{input_file}:{number + 1}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ExtractionError(f"{where}: not UTF-8 text ({e.reason} at byte "
                                          f"{e.start})") from None
                yield parse_line(line, number, where)
    except tf.errors.OpError as e:
        message = f"--input_file={input_file}: cannot read it: {e.message}"
        raise ExtractionError(message) from None


def count_examples(input_file):
    """Reads the whole input once, checking every line, before any work.

    A bad line then fails the run in seconds, not after hours of encoding,
    and the progress log can tell how far along it is.

    Args:
      input_file: The input path.

    Returns:
      The number of examples.

    Raises:
      ExtractionError: as read_examples, or for a file without lines.
    """
    count = sum(1 for _ in read_examples(input_file))
    if count == 0:
        raise ExtractionError(f"--input_file={input_file} is empty: it holds no line")
    return count


@dataclasses.dataclass(frozen=True)
class InputFeatures:
    """One example, tokenized and packed to max_seq_length.

    Attributes:
      unique_id: The example's line number, from 0.
      tokens: The real tokens, [CLS] and [SEP] included.
      input_ids, input_mask, segment_ids: max_seq_length ints each.
      words: With word_level, the whitespace-separated words that kept at
        least one piece after truncation; else None.
      word_spans: (start, end) of each of `words`' pieces in `tokens`.
      truncated: Whether pieces were dropped to fit max_seq_length.
    """

    unique_id: int
    tokens: list
    input_ids: list
    input_mask: list
    segment_ids: list
    words: list | None
    word_spans: list
    truncated: bool


def _segment(text, tokenizer, word_level):
    """A text's word pieces, and with word_level its words and pieces per word.

    Word by word, each word is tokenized on its own so that its pieces are
    known. A word that yields no piece at all (only characters that
    tokenization deletes) becomes [UNK], so that every word gets a vector.
    """
    if not word_level:
        return tokenizer.tokenize(text), None, None
    words = text.split()
    pieces = [tokenizer.tokenize(word) or [tokenizer.wordpiece_tokenizer.unk_token]
              for word in words]
    return [p for word_pieces in pieces for p in word_pieces], words, [len(p) for p in pieces]


def _kept_words(words, counts, offset, kept):
    """The words whose first piece survived truncation, and their spans.

    Args:
      words: A segment's words.
      counts: Their numbers of pieces.
      offset: Where the segment's first piece sits in the packed tokens.
      kept: How many of the segment's pieces survived.

    Returns:
      (words, [(start, end)]), the spans in packed-token positions.
    """
    kept_words, spans = [], []
    start = 0
    for word, count in zip(words, counts, strict=True):
        if start >= kept:
            break
        kept_words.append(word)
        spans.append((offset + start, offset + min(start + count, kept)))
        start += count
    return kept_words, spans


def convert_example(example, tokenizer, max_seq_length, word_level=False):
    """Tokenizes and packs one example as the original does.

    "[CLS] a [SEP]" or "[CLS] a [SEP] b [SEP]", padded with zeros; a pair is
    truncated from its longer text to max_seq_length - 3, a single text to
    max_seq_length - 2. As in the original, a second text that yields no word
    piece makes a single-text example.

    Args:
      example: An InputExample.
      tokenizer: A tokenization.FullTokenizer.
      max_seq_length: The packed length.
      word_level: Tokenize word by word (whitespace-separated), to know each
        word's pieces. The pieces are those of tokenizing the whole text,
        except around characters that str.split() and BERT's tokenizer treat
        differently (e.g. U+001C, a separator to one, deleted by the other).

    Returns:
      An InputFeatures.
    """
    tokens_a, words_a, counts_a = _segment(example.text_a, tokenizer, word_level)
    tokens_b, words_b, counts_b = [], [], []
    if example.text_b is not None:
        tokens_b, words_b, counts_b = _segment(example.text_b, tokenizer, word_level)
    ids_b = tokenizer.convert_tokens_to_ids(tokens_b) if tokens_b else None
    packed = tokenization.pack_ids(
        tokenizer.convert_tokens_to_ids(tokens_a), ids_b, max_seq_length=max_seq_length,
        cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
    # pack_ids truncates; the segment ids tell how much of each text it kept.
    real_segments = [s for s, m in zip(packed["segment_ids"], packed["input_mask"],
                                       strict=True) if m]
    kept_a = real_segments.count(0) - 2
    kept_b = real_segments.count(1) - 1 if ids_b else 0
    tokens = ["[CLS]", *tokens_a[:kept_a], "[SEP]"]
    if ids_b:
        tokens += [*tokens_b[:kept_b], "[SEP]"]

    words, spans = None, []
    if word_level:
        words, spans = _kept_words(words_a, counts_a, 1, kept_a)
        if ids_b:
            more_words, more_spans = _kept_words(words_b, counts_b, kept_a + 2, kept_b)
            words, spans = words + more_words, spans + more_spans
    return InputFeatures(
        unique_id=example.unique_id, tokens=tokens, input_ids=packed["input_ids"],
        input_mask=packed["input_mask"], segment_ids=packed["segment_ids"], words=words,
        word_spans=spans, truncated=kept_a < len(tokens_a) or kept_b < len(tokens_b))
