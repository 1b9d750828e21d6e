"""Where the documents come from: text files in one of four layouts, or TensorFlow Datasets.

`open_text_source` checks a run's input before any work and returns a
source whose documents() streams (sentences, num_bytes) pairs, one a
document, for the data builder (builder.py) and the vocab learner
(vocab_learning.py) alike:

  - FileSource reads --input_file's files, laid out as TextInputConfig's
    input_format says: one sentence a line with blank lines between
    documents (the original's format, read as it is), or plain text whose
    documents are blank-line separated paragraphs, lines or whole files,
    split into sentences by sentences.split_sentences;
  - TfdsSource reads a TensorFlow Datasets data set, each example's text
    feature a document of plain text, split alike. TFDS, which imports
    TensorFlow, is imported only here and only then, so that the rest of the
    data builder starts without TensorFlow.
"""

import glob
import itertools
import os

from absl import logging

from bert_tf.pretraining_data.config import (
    FILES,
    LINES,
    PARAGRAPHS,
    SENTENCES,
    PretrainingDataError,
)
from bert_tf.pretraining_data.sentences import split_sentences


def expand_input_patterns(input_patterns):
    """Lists the input files that comma-separated names or globs give.

    Args:
      input_patterns: a comma-separated string of file names and globs, or a
        list of them.

    Returns:
      The files in the order of the patterns, each glob's matches sorted. A
      file named twice is read twice.

    Raises:
      PretrainingDataError: if no pattern is given, a glob matches nothing, or
        a named file is missing.
    """
    if isinstance(input_patterns, str):
        input_patterns = input_patterns.split(",")
    files = []
    for pattern in (p.strip() for p in input_patterns):
        if not pattern:
            continue
        if glob.has_magic(pattern):
            matches = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not matches:
                raise PretrainingDataError(f"no input file matches {pattern!r}")
            files.extend(matches)
        elif os.path.isfile(pattern):
            files.append(pattern)
        elif os.path.isdir(pattern):
            raise PretrainingDataError(
                f"--input_file={pattern} is a folder; give its files, e.g. --input_file="
                f"'{os.path.join(pattern, '*.txt')}' (quoted, so that the shell leaves the glob)")
        else:
            raise PretrainingDataError(f"input file not found: {pattern}")
    if not files:
        raise PretrainingDataError("no input file given")
    return files


def read_lines(path, errors):
    """Streams a text file's lines.

    Args:
      path: the file.
      errors: the UTF-8 error handling, as in PretrainingDataConfig.

    Yields:
      (line, num_bytes): each line stripped ("" for a blank one) and the
      bytes it took in the file.

    Raises:
      PretrainingDataError: on a file that cannot be read, or on bytes that
        are not UTF-8 when errors is "strict".
    """
    try:
        with open(path, "rb") as f:
            # Only "\n" ends a line, as in the original's reader.
            for line_number, raw in enumerate(f, start=1):
                try:
                    yield raw.decode("utf-8", errors).strip(), len(raw)
                except UnicodeDecodeError as e:
                    raise PretrainingDataError(
                        f"{path}:{line_number}: byte {e.start + 1} of the line is not "
                        "UTF-8; fix the file or pass --errors=replace") from e
    except OSError as e:
        raise PretrainingDataError(f"cannot read input file {path}: {e}") from e


def blank_line_documents(lines):
    """Groups lines into documents at blank lines.

    Args:
      lines: (line, num_bytes) pairs, as read_lines yields.

    Yields:
      (lines, num_bytes): each document's non-blank lines and their bytes.
    """
    document, num_bytes = [], 0
    for line, size in lines:
        if line:
            document.append(line)
            num_bytes += size
        elif document:
            yield document, num_bytes
            document, num_bytes = [], 0
    if document:
        yield document, num_bytes


def split_document(lines):
    """The sentences of a document's lines of plain text.

    Args:
      lines: the document's lines.

    Returns:
      A list of sentences.
    """
    return [sentence for line in lines for sentence in split_sentences(line)]


class FileSource:
    """Documents from text files, in one of TextInputConfig's input formats."""

    def __init__(self, files, config):
        """Takes the files to read.

        Args:
          files: the file names, read in order.
          config: a TextInputConfig (its input_format and max_documents).
        """
        self.files = tuple(files)
        self._config = config

    def describe(self):
        """The input, for messages: the file names."""
        return ", ".join(self.files)

    def _file_documents(self, path, errors):
        """One file's documents, as its input format lays them out.

        Args:
          path: the file.
          errors: the UTF-8 error handling.

        Yields:
          (sentences, num_bytes) pairs; the end of the file ends a document.
        """
        lines = read_lines(path, errors)
        input_format = self._config.input_format
        if input_format == SENTENCES:
            yield from blank_line_documents(lines)
        elif input_format == PARAGRAPHS:
            for document, num_bytes in blank_line_documents(lines):
                yield split_document(document), num_bytes
        elif input_format == LINES:
            for line, num_bytes in lines:
                if line:
                    yield split_sentences(line), num_bytes
        elif input_format == FILES:
            text = [(line, num_bytes) for line, num_bytes in lines if line]
            if text:
                yield (split_document(line for line, _ in text),
                       sum(num_bytes for _, num_bytes in text))

    def documents(self, errors):
        """Streams the documents of every file, in order.

        Args:
          errors: the UTF-8 error handling, as in PretrainingDataConfig.

        Returns:
          An iterator of (sentences, num_bytes): a document's sentences and
          the bytes its text took in the file; at most max_documents.

        Raises:
          PretrainingDataError: on a file that cannot be read, or on bytes
            that are not UTF-8 when errors is "strict" (when iterated).
        """
        documents = itertools.chain.from_iterable(
            self._file_documents(path, errors) for path in self.files)
        return itertools.islice(documents, self._config.max_documents)


def _first_line(error):
    """An exception's message, its first line only: TFDS's run to whole lists."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class TfdsSource:
    """Documents from a TensorFlow Datasets data set, each example's text feature one."""

    files = ()

    def __init__(self, builder, config):
        """Takes a prepared data set.

        Args:
          builder: the data set's tfds DatasetBuilder, prepared.
          config: a TextInputConfig (its tfds_* settings and max_documents).
        """
        self._builder = builder
        self._config = config

    def describe(self):
        """The input, for messages: the data set, split and feature."""
        return (f"TensorFlow Datasets {self._config.tfds_name}, split "
                f"{self._config.tfds_split}, feature {self._config.tfds_text_feature}")

    def _examples(self):
        """Each example's text feature, as bytes."""
        import tensorflow_datasets as tfds

        dataset = self._builder.as_dataset(split=self._config.tfds_split, shuffle_files=False)
        for example in tfds.as_numpy(dataset):
            yield example[self._config.tfds_text_feature]

    def documents(self, errors):
        """Streams the examples' texts as documents, in the data set's order.

        Args:
          errors: the UTF-8 error handling, as in PretrainingDataConfig.

        Returns:
          An iterator of (sentences, num_bytes): an example's sentences and
          the bytes of its text; examples without text are left out; at most
          max_documents.

        Raises:
          PretrainingDataError: on a text that is not UTF-8 when errors is
            "strict" (when iterated).
        """
        def texts():
            for number, raw in enumerate(self._examples(), start=1):
                try:
                    sentences = split_sentences(raw.decode("utf-8", errors))
                except UnicodeDecodeError as e:
                    raise PretrainingDataError(
                        f"{self.describe()}: example {number} is not UTF-8 at byte "
                        f"{e.start + 1}; pass --errors=replace") from e
                if sentences:
                    yield sentences, len(raw)

        return itertools.islice(texts(), self._config.max_documents)


def _tfds_builder(config):
    """The tfds DatasetBuilder of --tfds_name, its text feature checked.

    Args:
      config: a TextInputConfig.

    Returns:
      The builder, not necessarily prepared.

    Raises:
      PretrainingDataError: the name is not a TFDS data set, or it has no
        text feature of the name --tfds_text_feature gives.
    """
    import tensorflow_datasets as tfds

    name, feature = config.tfds_name, config.tfds_text_feature
    try:
        builder = tfds.builder(name, data_dir=config.tfds_data_dir)
    except ValueError as e:
        # DatasetNotFoundError, and a config or version the data set lacks.
        raise PretrainingDataError(
            f"--tfds_name={name}: {_first_line(e)} (the data sets: "
            "https://www.tensorflow.org/datasets/catalog)") from e
    features = builder.info.features
    if feature not in features:
        raise PretrainingDataError(
            f"--tfds_text_feature={feature}: {name} has no such feature; its features: "
            f"{', '.join(sorted(features))}")
    if not isinstance(features[feature], tfds.features.Text):
        raise PretrainingDataError(
            f"--tfds_text_feature={feature}: {name}'s {feature} is a "
            f"{type(features[feature]).__name__}, not text")
    return builder


def _prepare(builder, config):
    """Downloads and prepares a data set that is not in its data folder yet.

    Args:
      builder: the tfds DatasetBuilder.
      config: a TextInputConfig.

    Raises:
      PretrainingDataError: TFDS could not prepare it.
    """
    if builder.is_prepared():
        return
    logging.info("preparing %s in %s with TensorFlow Datasets", config.tfds_name,
                 builder.data_dir)
    try:
        builder.download_and_prepare()
    # TFDS fails in many ways here, none of them a bug of this code: no
    # network, a data set whose preparation needs Apache Beam or another
    # package, one that needs a manual download. Each ends in one line.
    except Exception as e:
        raise PretrainingDataError(
            f"--tfds_name={config.tfds_name} is not prepared in {builder.data_dir} and "
            f"TensorFlow Datasets could not prepare it: {_first_line(e)}") from e


def _check_split(builder, config):
    """Checks that --tfds_split names data the data set has.

    Args:
      builder: the prepared tfds DatasetBuilder.
      config: a TextInputConfig.

    Raises:
      PretrainingDataError: the split is unknown or its slice is malformed.
    """
    try:
        builder.info.splits[config.tfds_split]
    except (KeyError, ValueError) as e:
        raise PretrainingDataError(
            f"--tfds_split={config.tfds_split}: {_first_line(e)} ({config.tfds_name}'s "
            f"splits: {', '.join(builder.info.splits)})") from e


def open_text_source(input_patterns, config):
    """Checks a run's input and returns its source of documents.

    Args:
      input_patterns: --input_file: comma-separated files and globs, or a
        list of them; None or empty when the text comes from TFDS.
      config: a TextInputConfig.

    Returns:
      A FileSource or, with config.tfds_name, a TfdsSource (prepared, if it
      was not, by downloading it).

    Raises:
      PretrainingDataError: neither or both of --input_file and --tfds_name
        given, or an input that cannot be read (see expand_input_patterns
        and the TFDS checks).
    """
    if config.tfds_name and input_patterns:
        raise PretrainingDataError("give --input_file or --tfds_name, not both")
    if not config.tfds_name:
        if not input_patterns:
            raise PretrainingDataError("give the text: --input_file or --tfds_name")
        return FileSource(expand_input_patterns(input_patterns), config)
    builder = _tfds_builder(config)
    _prepare(builder, config)
    _check_split(builder, config)
    return TfdsSource(builder, config)
