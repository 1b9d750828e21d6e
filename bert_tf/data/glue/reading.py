"""GLUE's TSV files as rows of text, with errors that point at `path:line`.

Files are read through `tf.io.gfile`, so a data_dir may live on GCS, as UTF-8
with the byte-order mark dropped (MRPC's headers start with one), by Python's
csv module with a tab delimiter and quoting off: quote characters in GLUE
sentences are literal text, and a quote-aware reader would merge rows or drop
characters.
"""

import csv

import tensorflow as tf

# Bytes read at a time from a TSV file.
_READ_CHUNK_BYTES = 1 << 20


class GlueDataError(ValueError):
    """A data file whose rows do not fit its task's layout.

    The message starts with `path:line:` so that an editor can jump to the
    row, or, for an example read through TFDS, with the example's guid.

    Args:
      message: What is wrong, prefixed with the file and the 1-based line.
    """


def _binary_lines(binary_file):
    """Splits a binary file into lines at b"\\n" only, reading it in chunks.

    GFile's own line iteration is not used: it deletes every carriage return,
    even one inside a line, which would change text silently.

    Args:
      binary_file: A file opened in binary mode.

    Returns:
      A generator of bytes lines without their b"\\n".
    """
    pending = b""
    while chunk := binary_file.read(_READ_CHUNK_BYTES):
        *lines, pending = (pending + chunk).split(b"\n")
        yield from lines
    if pending:
        yield pending


def _decoded_lines(binary_file, path):
    """Yields the lines of a binary file as text, with the byte-order mark dropped.

    Args:
      binary_file: A file opened in binary mode.
      path: The file's path, for error messages.

    Returns:
      A generator of str lines, each ending in "\\n".
    """
    for number, raw in enumerate(_binary_lines(binary_file), start=1):
        try:
            # "utf-8-sig" drops a leading byte-order mark and is plain UTF-8
            # otherwise; only the first line can start with one.
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8") + "\n"
        except UnicodeDecodeError as error:
            raise GlueDataError(f"{path}:{number}: not UTF-8 ({error.reason})") from error


def read_tsv(path, task):
    """Yields the rows of a TSV file with their 1-based line numbers.

    Args:
      path: The file, local or any filesystem tf.io.gfile reads.
      task: The task name, for the missing-file error.

    Returns:
      A generator of (line_number, list of str) pairs.

    Raises:
      FileNotFoundError: The file does not exist.
      GlueDataError: The file is not UTF-8 or has a stray carriage return.
    """
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{task}: data file not found: {path}")
    with tf.io.gfile.GFile(path, "rb") as f:
        reader = csv.reader(_decoded_lines(f, path), delimiter="\t", quoting=csv.QUOTE_NONE)
        try:
            for row in reader:
                yield reader.line_num, row
        except csv.Error as error:
            raise GlueDataError(f"{path}:{reader.line_num}: {error}") from error
