"""SWAG's CSV files -> SwagExamples, every row checked.

SWAG (Zellers et al., 2018) ships train.csv, val.csv and test.csv with a
header row: an unnamed first column (the row's index), video-id, fold-ind,
startphrase, sent1, sent2, gold-source, ending0 to ending3 and label (absent
from test.csv). A question is sent1, the start of the next sentence (sent2),
and the endings that may complete it; label is the right ending's number.

The columns are found by name in the header, so other files in the same
layout (more or fewer endings, without the bookkeeping columns) read too. A
row that does not fit is a SwagDataError naming path:line, the line its row
starts on (a quoted field may span lines). Rows with an empty ending are
read, and counted in one warning.
"""

import csv
import dataclasses
import io

import tensorflow as tf

from bert_tf import messages

# Columns every file needs; ending0 .. ending<n-1> and, to train or score, label too.
CONTEXT, START, LABEL, INDEX = "sent1", "sent2", "label", ""


class SwagDataError(ValueError):
    """A SWAG file whose header or rows do not fit its layout; the message starts with path:line."""


@dataclasses.dataclass(frozen=True)
class SwagExample:
    """One question.

    Attributes:
      example_id: The row's index column, or its first line's number without one.
      context: sent1, the first sentence.
      start: sent2, the start of the next one.
      endings: The candidate endings of sent2, in column order.
      label: The right ending's number; None where the file has no labels.
      line: The row's first line in its file, for messages.
    """

    example_id: str
    context: str
    start: str
    endings: tuple
    label: int | None
    line: int


def second_segments(example):
    """The second segment of each choice: the start of the sentence and one ending.

    As the BERT paper packs SWAG (and Hugging Face's run_swag.py): [CLS]
    context [SEP] start + ending [SEP], one sequence per ending.

    Args:
      example: A SwagExample.

    Returns:
      A list of str, one per ending.
    """
    return [f"{example.start} {ending}".strip() for ending in example.endings]


def _endings_in(header, path):
    """The ending columns' indices, ending0 .. ending<n-1> in order."""
    endings = []
    while f"ending{len(endings)}" in header:
        endings.append(header.index(f"ending{len(endings)}"))
    if not endings:
        raise SwagDataError(f"{path}:1: the header has no ending0 column (a SWAG file's header "
                            "names sent1, sent2, ending0, ending1, ... and label)")
    return endings


def read_examples(path, num_choices, labelled):
    """Reads and checks a SWAG CSV file.

    Args:
      path: The file, local or any filesystem tf.io.gfile reads.
      num_choices: The endings each question must have (the model's choices).
      labelled: Whether every row needs a label (training and scoring do;
        a test file has none, and a label column there is not read).

    Returns:
      A list of SwagExample, in file order.

    Raises:
      FileNotFoundError: The file does not exist.
      SwagDataError: A header without the needed columns or with another
        number of endings, a row with another number of fields, or a label
        that is not one of the endings' numbers.
    """
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"swag: data file not found: {path}")
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SwagDataError(f"{path}:{line}: not UTF-8 ({error.reason})") from error
    # newline="": the csv module itself tells line ends from newlines inside quotes.
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return _read_rows(reader, path, num_choices, labelled)
    except csv.Error as error:
        raise SwagDataError(f"{path}:{reader.line_num}: {error}") from error


def _read_rows(reader, path, num_choices, labelled):
    """read_examples' work on an open csv.reader."""
    header = next(reader, None)
    if header is None:
        raise SwagDataError(f"{path}:1: the file is empty; a SWAG file starts with its header")
    missing = [name for name in (CONTEXT, START) + ((LABEL,) if labelled else ())
               if name not in header]
    if missing:
        raise SwagDataError(f"{path}:1: the header has no {', '.join(missing)} column (it has "
                            f"{', '.join(repr(name) for name in header)})")
    endings = _endings_in(header, path)
    if len(endings) != num_choices:
        raise SwagDataError(
            f"{path}:1: the header has {len(endings)} endings (ending0 to "
            f"ending{len(endings) - 1}), but the model takes {num_choices} per question")
    context, start = header.index(CONTEXT), header.index(START)
    label = header.index(LABEL) if labelled else None
    index = header.index(INDEX) if INDEX in header else None
    examples = []
    empty, first_empty = 0, None
    while True:
        # The row starts on the line after the last one read: a quoted field
        # with newlines ends lines later, where reader.line_num then is.
        line = reader.line_num + 1
        row = next(reader, None)
        if row is None:
            break
        if not row:
            continue
        if len(row) != len(header):
            raise SwagDataError(f"{path}:{line}: {len(row)} fields, but the header has "
                                f"{len(header)}")
        examples.append(SwagExample(
            example_id=row[index] if index is not None else str(line),
            context=row[context], start=row[start],
            endings=tuple(row[i] for i in endings),
            label=_label(row[label], num_choices, path, line) if labelled else None,
            line=line))
        blank = [number for number, i in enumerate(endings) if not row[i].strip()]
        if blank:
            empty += 1
            first_empty = first_empty or f"line {line} (ending{blank[0]})"
    if empty:
        rows = "1 row has" if empty == 1 else f"{empty} rows have"
        messages.warn(f"{path}: {rows} an empty ending, the first {first_empty}; such a choice "
                 "is sent2 alone")
    return examples


def _label(value, num_choices, path, line):
    """A row's label as an int in [0, num_choices)."""
    if value.strip().isdigit() and int(value) < num_choices:
        return int(value)
    raise SwagDataError(f"{path}:{line}: label {value!r} is not one of the endings' numbers "
                        f"0 to {num_choices - 1}")
