"""Predicted tags written back into a copy of the input CoNLL file.

The output is the input, line for line, with the predicted tag appended as
one more column on each token line: "-DOCSTART-" lines, blank lines and the
line endings are copied as they are (a byte-order mark is dropped), so that
the file lines up with the input. conlleval, which reads the last two columns
as gold and predicted tags, scores the output of a "word TAG" or
"word POS chunk TAG" file directly; for "word TAG 0" it would read the 0 as
gold (use bert_tf.data.conll.entity_scores there).

This is apart from reading.py because the atomic writer imports TensorFlow
(it writes through tf.io.gfile, so outputs may go to GCS).
"""

import os

from bert_tf.data.conll.reading import DOCSTART, numbered_lines, split_columns
from bert_tf.io_utils import atomic_write


def _predictions_by_line(sentences, predicted_tags):
    """Maps each token line number to its (word, predicted tag).

    Args:
      sentences: Sentence objects, read from the source file.
      predicted_tags: One sequence of tags per sentence.

    Returns:
      A dict {line_number: (word, tag)}.

    Raises:
      ValueError: The counts of sentences or tags differ, two sentences claim
        the same line, or a tag is empty or holds whitespace (it would not be
        one column).
    """
    if len(predicted_tags) != len(sentences):
        raise ValueError(
            f"{len(predicted_tags)} predicted tag sequences for {len(sentences)} sentences"
        )
    by_line = {}
    for index, (sentence, tags) in enumerate(zip(sentences, predicted_tags, strict=True)):
        if len(tags) != len(sentence.words):
            raise ValueError(
                f"sentence {index}: {len(tags)} predicted tags for {len(sentence.words)} words"
            )
        for word, number, tag in zip(sentence.words, sentence.lines, tags, strict=True):
            if not isinstance(tag, str) or split_columns(tag) != [tag]:
                raise ValueError(f"sentence {index}: predicted tag {tag!r} is not one column")
            if number in by_line:
                raise ValueError(f"sentence {index}: line {number} is in two sentences")
            by_line[number] = (word, tag)
    return by_line


def _line_ending(line):
    """Splits a line into its text and its ending ("\\r\\n", "\\n" or "")."""
    for ending in ("\r\n", "\n"):
        if line.endswith(ending):
            return line[: -len(ending)], ending
    return line, ""


def write_conll(path, sentences, predicted_tags, source_path):
    """Writes source_path again with a predicted tag column, only once complete.

    Each token line of source_path gets, after its last column (trailing
    spaces dropped), a tab if its columns are separated by tabs, else a space,
    and its predicted tag. Every other line is copied unchanged. Words beyond
    a model's maximum length still need a tag here: the caller predicts them
    (e.g. "O") rather than drop them, so that the output keeps every line.

    Args:
      path: The output file, local or any tf.io.gfile filesystem.
      sentences: The Sentence list that read_conll(source_path) returned.
      predicted_tags: One sequence of tag strings per sentence, as long as
        its words.
      source_path: The file the sentences were read from.

    Raises:
      FileNotFoundError: source_path does not exist.
      ConllDataError: source_path is not UTF-8.
      ValueError: The predictions do not fit the sentences, or the sentences
        do not match source_path's token lines (another file, or a file
        changed since it was read). Nothing is written then.
    """
    by_line = _predictions_by_line(sentences, predicted_tags)
    source = os.fspath(source_path)
    output = []
    for number, line in numbered_lines(source):
        columns = split_columns(line)
        if not columns or columns[0] == DOCSTART:
            output.append(line)
            continue
        if number not in by_line:
            raise ValueError(f"{source}:{number}: token line is in none of the sentences")
        word, tag = by_line.pop(number)
        if columns[0] != word:
            raise ValueError(
                f"{source}:{number}: word {columns[0]!r}, but the sentences have {word!r} "
                "there: were they read from this file?"
            )
        text, ending = _line_ending(line)
        text = text.rstrip(" \t\r\f\v")
        separator = "\t" if "\t" in text else " "
        output.append(f"{text}{separator}{tag}{ending}")
    if by_line:
        extra = sorted(by_line)
        shown = ", ".join(map(str, extra[:5])) + (", ..." if len(extra) > 5 else "")
        raise ValueError(
            f"{source}: the sentences have words on lines {shown}, "
            "which are not token lines of the file"
        )
    with atomic_write(path, "w") as f:
        f.write("".join(output))
