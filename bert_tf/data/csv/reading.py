"""A CSV or TSV file of one's own as a header and rows, with errors that point at `path:line`.

The first row is the header: it names the columns, which flags (or the
default names in settings.py) pick. The delimiter comes from --delimiter, else
from the extension (.csv: comma, .tsv: tab). CSV files are read as RFC 4180
writes them (spreadsheets, pandas): a quoted cell may hold commas, quotes
("" for one) and line breaks; a stray quote is an error, not a silently
changed cell. TSV files are read with quoting off, as GLUE's: a tab or a
line break cannot be inside a cell, and a quote is text.

Files are read through tf.io.gfile (a file may be on GCS), as UTF-8, with a
byte-order mark dropped (spreadsheets write one).
"""

import csv
import dataclasses
import os

import tensorflow as tf

from bert_tf.data.csv.settings import DELIMITERS

# Bytes read at a time.
_READ_CHUNK_BYTES = 1 << 20


class LabelledDataError(ValueError):
    """A data file that does not fit the run's columns, labels or problem type.

    The message starts with `path:line:` (or `path:` for the file as a whole)
    so that an editor can jump to the row.
    """


@dataclasses.dataclass(frozen=True)
class Table:
    """A file's header and rows.

    Attributes:
      path: The file.
      columns: The header's column names.
      rows: (line, cells) of each row after the header, line the 1-based
        line it starts on; blank lines are left out.
    """

    path: str
    columns: tuple
    rows: tuple

    def column(self, name, flag, defaults=(), required=True):
        """The index of a column named by a flag, or by the first default name the header has.

        Args:
          name: The flag's value; None to look for the defaults.
          flag: The flag's name, for the message ("--label_column").
          defaults: Header names to look for when name is None.
          required: Whether a missing column is an error.

        Returns:
          The column's index, or None for a column not required and not there.

        Raises:
          LabelledDataError: a required column that is not there, naming the
            file and the columns it has.
        """
        wanted = [name] if name is not None else list(defaults)
        for candidate in wanted:
            if candidate in self.columns:
                return self.columns.index(candidate)
        if not required and name is None:
            return None
        what = (f"no column {name!r} ({flag})" if name is not None else
                f"no column named {' or '.join(repr(d) for d in defaults)}: name it with "
                f"{flag}")
        raise LabelledDataError(f"{self.path}:1: {what}; its columns are: "
                                f"{', '.join(self.columns)}")


def delimiter_for(path, delimiter=None):
    """The column separator of a file: the one given, else by the file's extension.

    Args:
      path: The file.
      delimiter: --delimiter, or None. "\\t" and "tab" both mean a tab.

    Returns:
      A one-character string.

    Raises:
      LabelledDataError: no delimiter given for a file that is neither .csv
        nor .tsv, or one that is not one character.
    """
    if delimiter is not None:
        delimiter = "\t" if delimiter in ("\\t", "tab") else delimiter
        if len(delimiter) != 1:
            raise LabelledDataError(f"--delimiter={delimiter!r} must be one character "
                                    "(\\t or tab for a tab)")
        return delimiter
    extension = os.path.splitext(path)[1].lower()
    if extension not in DELIMITERS:
        raise LabelledDataError(f"{path}: give --delimiter: the extension {extension!r} is "
                                "neither .csv (comma) nor .tsv (tab)")
    return DELIMITERS[extension]


def _lines(binary_file, path):
    """The file's lines as text, each ending in "\\n", split at b"\\n" only.

    Splitting at b"\\n" alone keeps a carriage return inside a CSV cell as
    the file has it; "\\r\\n" line ends are dropped by the csv module.
    """
    pending, number = b"", 0

    def decoded(raw):
        try:
            # "utf-8-sig" drops a byte-order mark, which only the first line has.
            return raw.decode("utf-8-sig" if number == 1 else "utf-8") + "\n"
        except UnicodeDecodeError as error:
            raise LabelledDataError(f"{path}:{number}: not UTF-8 ({error.reason})") from error

    while chunk := binary_file.read(_READ_CHUNK_BYTES):
        *lines, pending = (pending + chunk).split(b"\n")
        for raw in lines:
            number += 1
            yield decoded(raw)
    if pending:
        number += 1
        yield decoded(pending)


def read_table(path, flag, delimiter=None):
    """Reads a CSV or TSV file with a header row.

    Args:
      path: The file, local or any filesystem tf.io.gfile reads.
      flag: The flag that named it ("--train_file"), for the missing-file error.
      delimiter: --delimiter, or None for the extension's.

    Returns:
      A Table.

    Raises:
      FileNotFoundError: the file does not exist.
      LabelledDataError: the path is a folder, or the file is empty, not
        UTF-8, badly quoted, or has a row of another width than its header.
    """
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    if tf.io.gfile.isdir(path):
        raise LabelledDataError(f"{flag}={path} is a folder; give a .csv or .tsv file")
    separator = delimiter_for(path, delimiter)
    # A TSV cell holds no tab nor line break: quotes are text there, as in GLUE.
    quoting = {"quoting": csv.QUOTE_NONE} if separator == "\t" else {"strict": True}
    header, rows = None, []
    with tf.io.gfile.GFile(path, "rb") as f:
        reader = csv.reader(_lines(f, path), delimiter=separator, **quoting)
        start = 1
        try:
            for cells in reader:
                line, start = start, reader.line_num + 1
                if not cells:
                    continue
                if header is None:
                    header = tuple(cell.strip() for cell in cells)
                    duplicates = sorted({c for c in header if header.count(c) > 1})
                    if duplicates:
                        raise LabelledDataError(f"{path}:{line}: the header names "
                                                f"{', '.join(duplicates)} more than once")
                    continue
                if len(cells) != len(header):
                    raise LabelledDataError(
                        f"{path}:{line}: {len(cells)} columns, but the header has "
                        f"{len(header)} (delimiter {separator!r})")
                rows.append((line, cells))
        except csv.Error as error:
            raise LabelledDataError(
                f"{path}:{reader.line_num}: {error} (a CSV cell with a quote in it is quoted "
                'whole, its quotes doubled: "say ""hi""")') from error
    if header is None:
        raise LabelledDataError(f"{path}: the file is empty: it needs a header row and rows")
    return Table(path, header, tuple(rows))
