"""CoNLL-2003 style token files as sentences, with errors that point at `path:line`.

The layout: one token per line, columns separated by spaces or tabs, the word
first and the tag in the last column, "word TAG" or the classic
"word POS chunk TAG", with one exception: when the last column of the first
token line is a number and there are three columns or more, the tag is the
column before it. That reads "word TAG 0", the layout of the CoNLL-2003 copy
in shared/data/conll2003, whose last column is always 0. Only the word and
the tag columns are used. Blank lines end sentences, and a "-DOCSTART-" line
starts a new document.

This module imports neither TensorFlow nor numpy, so that data can be checked
and scored in any process; writing predictions is in outputs.py.
"""

import dataclasses
import os
import re

# The first column of a line that starts a document rather than holding a word.
DOCSTART = "-DOCSTART-"

# The accepted tags: "O", or "B-" / "I-" and an entity type (IOB1 or IOB2).
# E- and S- (IOBES) are refused: the metrics apply conlleval's B/I/O rules only.
TAG_PATTERN = re.compile(r"[BI]-.+")

# Column separators. Only ASCII whitespace: str.split() would also split at a
# no-break space, which is part of a word in some corpora. "\r" is included
# so that files with Windows line endings read the same.
_SEPARATORS = re.compile(r"[ \t\r\f\v]+")
_WHITESPACE = " \t\r\f\v"

# A last column that is not a tag but a number, as in "word TAG 0".
_NUMBER = re.compile(r"-?[0-9]+")


class ConllDataError(ValueError):
    """A token file whose lines do not fit the CoNLL layout.

    The message starts with `path:line:` so that an editor can jump to the line.

    Args:
      message: What is wrong, prefixed with the file and the 1-based line.
    """


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One sentence of a token file.

    Attributes:
      words: The words, as tuple of str.
      tags: The tags, one per word, as tuple of str; None when the file has
        no tag column (only read with has_tags=False).
      lines: The 1-based line number of each word in the file, so that
        errors and predictions can point back at the file.
      document: The index of the document, counting the documents that
        "-DOCSTART-" lines separate from 0; 0 in a file without them.
    """

    words: tuple
    tags: tuple | None
    lines: tuple
    document: int


def numbered_lines(path):
    """Yields the lines of a UTF-8 file with their 1-based numbers.

    Lines are split at "\\n" only (not at the other characters str.splitlines
    knows) and decoded one at a time, so that a bad byte gets its line number.

    Args:
      path: The file.

    Returns:
      A generator of (line_number, str) pairs; each str keeps its line ending
      ("\\n" or "\\r\\n"; none on a last line without one). A byte-order mark
      at the start of the file is dropped.

    Raises:
      FileNotFoundError: The file does not exist (the message names it).
      ConllDataError: A line is not UTF-8.
    """
    with open(path, "rb") as f:
        # Binary files iterate at b"\n" only.
        for number, raw in enumerate(f, start=1):
            try:
                # "utf-8-sig" drops a leading byte-order mark and is plain
                # UTF-8 otherwise; only the first line can start with one.
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise ConllDataError(
                    f"{os.fspath(path)}:{number}: not UTF-8 ({error.reason} at byte "
                    f"{error.start} of the line)"
                ) from error


def split_columns(line):
    """The columns of a line, split at runs of spaces and tabs.

    Args:
      line: A line of text, with or without its ending.

    Returns:
      A list of str; empty for a blank line.
    """
    stripped = line.strip(_WHITESPACE + "\n")
    return _SEPARATORS.split(stripped) if stripped else []


def _tag_column(columns):
    """The index of the tag column, chosen from a file's first token line.

    Args:
      columns: The columns of the line.

    Returns:
      -2 for "word TAG 0" (three columns or more, the last a number), else -1.
    """
    return -2 if len(columns) >= 3 and _NUMBER.fullmatch(columns[-1]) else -1


def _check_tag(tag, path, number):
    """Raises ConllDataError unless tag is "O", "B-TYPE" or "I-TYPE".

    Args:
      tag: The tag column of a line.
      path: The file, for the message.
      number: The 1-based line, for the message.

    Raises:
      ConllDataError: The tag is malformed.
    """
    if tag != "O" and not TAG_PATTERN.fullmatch(tag):
        raise ConllDataError(
            f"{path}:{number}: tag {tag!r} is not 'O', 'B-TYPE' or 'I-TYPE' "
            "(IOB1/IOB2 tags are expected in the tag column)"
        )


def read_conll(path, has_tags=True):
    """Reads a CoNLL token file into sentences.

    Every token line must have the same number of columns; blank lines (any
    number of them) separate sentences, and "-DOCSTART-" lines (whatever their
    other columns) start a new document and end the current sentence. A last
    sentence without a blank line after it counts.

    Whenever a file has two columns or more, its tag column (the last one, or
    the one before a number column: see the module docstring) is read and
    checked, has_tags=False included: a file whose tag column is not tags
    fails here rather than giving wrong scores later.

    Args:
      path: The file.
      has_tags: Whether the file must have a tag column. False reads files to
        predict on, which may hold only words (then every Sentence's tags is
        None).

    Returns:
      A list of Sentence, in file order.

    Raises:
      FileNotFoundError: The file does not exist.
      ConllDataError: A line is not UTF-8, has no tag column although
        has_tags is True, has another number of columns than the first token
        line, or has a malformed tag.
    """
    name = os.fspath(path)
    sentences = []
    words, tags, lines = [], [], []
    # (column count, line number, tag column index) of the first token line.
    layout = None
    document = 0
    # Whether a non-blank line came before: a "-DOCSTART-" that opens the
    # file starts document 0, each later one the next document.
    started = False

    def end_sentence():
        if words:
            sentences.append(Sentence(
                words=tuple(words),
                tags=tuple(tags) if layout[0] > 1 else None,
                lines=tuple(lines),
                document=document,
            ))
        words.clear()
        tags.clear()
        lines.clear()

    for number, line in numbered_lines(path):
        columns = split_columns(line)
        if not columns:
            end_sentence()
            continue
        if columns[0] == DOCSTART:
            end_sentence()
            if started:
                document += 1
            started = True
            continue
        started = True
        if has_tags and len(columns) == 1:
            raise ConllDataError(
                f"{name}:{number}: no tag column: only the word {columns[0]!r}; "
                "expected 'word TAG', 'word TAG 0' or 'word POS chunk TAG'"
            )
        if layout is None:
            layout = (len(columns), number, _tag_column(columns))
        elif len(columns) != layout[0]:
            raise ConllDataError(
                f"{name}:{number}: {len(columns)} columns, but line {layout[1]} "
                f"has {layout[0]}: every token line needs the same columns"
            )
        if len(columns) > 1:
            tag = columns[layout[2]]
            _check_tag(tag, name, number)
            tags.append(tag)
        words.append(columns[0])
        lines.append(number)
    end_sentence()
    return sentences


def label_list(sentences):
    """The tags of some sentences, in a fixed order for a model's label ids.

    "O" comes first, and is there even when no sentence has it: it is the
    label a tagger falls back to. The others follow sorted by entity type,
    then B before I, e.g. ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"], so the
    ids do not depend on the order of the file.

    Args:
      sentences: Sentence objects (or anything with a `tags` sequence).

    Returns:
      A list of str.

    Raises:
      ValueError: A sentence has no tags (read from a word-only file).
    """
    seen = set()
    for index, sentence in enumerate(sentences):
        if sentence.tags is None:
            raise ValueError(f"sentence {index} has no tags: label_list needs a tagged file")
        seen.update(sentence.tags)
    seen.discard("O")
    # "B-X"[2:] is the type, "B-X"[0] the prefix; "B" sorts before "I".
    return ["O"] + sorted(seen, key=lambda tag: (tag[2:], tag[0]))
