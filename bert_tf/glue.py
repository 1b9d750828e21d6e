"""GLUE and XNLI for fine-tuning: examples from TSV or TFDS, metrics, submission files.

Reading. Each task has a processor that turns the TSV files of the standard
GLUE download (`download_glue_data.py`) into `InputExample`s, with the
original repository's column choices and guid formats. Files are read through
`tf.io.gfile`, so a data_dir may live on GCS, as UTF-8 with the byte-order
mark dropped (MRPC's headers start with one), by Python's csv module with a
tab delimiter and quoting off: quote characters in GLUE sentences are literal
text, and a quote-aware reader would merge rows or drop characters.

Checks. A row whose column count differs from the file's is an error that
gives `path:line`, except in QQP, whose full train set has rows with missing
fields: those rows are skipped, counted and logged, as common GLUE readers
skip them (google-research/bert itself has no QQP processor). A label the
task does not know is an error with `path:line`; a missing file is an error
that names the task and the path. Headers are recognised, not assumed:
CoLA's train and dev files have none, every other file has one.

Splits. `get_train_examples`, `get_dev_examples` and `get_test_examples` read
one split each; a processor's `eval_splits` and `predict_splits` list the
splits a runner loops over (MNLI: matched and mismatched), and
`submission_file(split)` names the file GLUE expects for a predict split.
Test examples carry the file's own index column in their guid ("test-17",
where the original numbered CoLA and MRPC test rows by line, from 1), which
is the index a submission file needs, and no label: None, where the original
put a dummy first label.

TFDS. `examples_from_tfds("glue/mrpc", "validation")` reads the same tasks
from TensorFlow Datasets and maps TFDS's label names onto the processor's.

Scoring. `compute_metrics` gives the metrics GLUE reports for a task, in
numpy only; every metric takes `is_real_example` so that the examples added
to fill the last batch count nowhere. `write_test_results` writes the
original's test_results.tsv and `write_submission` a GLUE submission file,
each through a temporary file that is renamed only once it is complete.
"""

import contextlib
import csv
import dataclasses
import math
import os
import uuid

import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds
from absl import logging

# Values that the key column (label, else index) of a GLUE header holds. A
# first row whose key cell is one of these is a header; any other first row is
# data, which is how CoLA's header-less train and dev files are told apart.
_HEADER_WORDS = frozenset(
    {"index", "id", "label", "gold_label", "quality", "is_duplicate", "score"})

# How many skipped line numbers a QQP warning lists before it stops.
_MAX_LINES_LOGGED = 10

# Bytes read at a time from a TSV file.
_READ_CHUNK_BYTES = 1 << 20


class GlueDataError(ValueError):
    """A data file whose rows do not fit its task's layout.

    The message starts with `path:line:` so that an editor can jump to the row.

    Args:
      message: What is wrong, prefixed with the file and the 1-based line.
    """


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One example for sentence (pair) classification or regression.

    Args:
      guid: A unique id: the split name, "-", and the row's id. The id is the
        file's index column where the file has one, else the row's 0-based
        line number, as the original numbers them.
      text_a: The untokenized first sequence.
      text_b: The untokenized second sequence; None for single-sentence tasks.
      label: A label string of the processor's `get_labels()`, a float for a
        regression task, or None where the split has no labels (test splits).
    """

    guid: str
    text_a: str
    text_b: str | None = None
    label: str | float | None = None


@dataclasses.dataclass(frozen=True)
class _File:
    """One split's file and where it keeps each field, as 0-based column indices.

    Args:
      name: The file's path relative to data_dir.
      text_a: The first sentence's column.
      text_b: The second sentence's column, or None.
      label: The label's column, or None for unlabelled files; negative counts
        from the end (MNLI keeps gold_label last after a varying number of
        annotator columns).
      index: The id column that goes into the guid, or None to use the line.
      width: The number of columns of every row, or None to take the header's
        (MNLI and XNLI dev files differ in width between releases).
      language: The column that XNLI dev rows are filtered on, or None.
    """

    name: str
    text_a: int
    text_b: int | None = None
    label: int | None = None
    index: int | None = None
    width: int | None = None
    language: int | None = None

    @property
    def min_width(self):
        """The fewest columns a row needs for every field to exist."""
        used = [c for c in (self.text_a, self.text_b, self.label, self.index, self.language)
                if c is not None]
        # A label counted from the end needs a column of its own after the rest.
        return max(c for c in used if c >= 0) + 1 + (1 if any(c < 0 for c in used) else 0)

    @property
    def key(self):
        """The column whose first-row value tells a header from data."""
        return self.label if self.label is not None else self.index


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


def _read_tsv(path, task):
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


# Metrics. Every function takes 1-D predictions and labels of equal length and
# an optional is_real_example mask; examples with mask 0 are dropped first.


def _real(predictions, labels, is_real_example):
    """Checks shapes and drops the padding examples.

    Args:
      predictions: 1-D array-like.
      labels: 1-D array-like of the same length.
      is_real_example: None, or a 1-D array-like of 0/1 (or bools) of the
        same length: 0 marks a padding example.

    Returns:
      (predictions, labels) as numpy arrays of the real examples.

    Raises:
      ValueError: Shapes differ, the mask holds other values than 0 and 1, or
        no real example is left.
    """
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.ndim != 1 or predictions.shape != labels.shape:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} must be "
                         "1-D and of equal length")
    if is_real_example is not None:
        mask = np.asarray(is_real_example)
        if mask.shape != labels.shape:
            raise ValueError(f"is_real_example {mask.shape} must match labels {labels.shape}")
        if not np.isin(mask, (0, 1)).all():
            raise ValueError("is_real_example must hold only 0 and 1")
        mask = mask.astype(bool)
        predictions, labels = predictions[mask], labels[mask]
    if labels.size == 0:
        raise ValueError("no real examples to score")
    return predictions, labels


def accuracy(predictions, labels, is_real_example=None):
    """The fraction of examples whose prediction equals the label.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [0, 1].
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    return float(np.mean(predictions == labels))


def f1_score(predictions, labels, is_real_example=None):
    """Binary F1 with class 1 as the positive class, as GLUE scores MRPC and QQP.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      2 TP / (2 TP + FP + FN); 0.0 when there is no positive prediction or
      label at all, where F1 is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    true_positives = np.sum((predictions == 1) & (labels == 1))
    false_positives = np.sum((predictions == 1) & (labels != 1))
    false_negatives = np.sum((predictions != 1) & (labels == 1))
    denominator = 2 * true_positives + false_positives + false_negatives
    return float(2 * true_positives / denominator) if denominator else 0.0


def matthews_corrcoef(predictions, labels, is_real_example=None):
    """Matthews correlation, as GLUE scores CoLA (and, over 3 classes, AX).

    The multi-class form (Gorodkin's R_K), which equals the binary
    (TP TN - FP FN) / sqrt(...) for two classes.

    Args:
      predictions: 1-D predicted class ids.
      labels: 1-D true class ids.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [-1, 1]; 0.0 when predictions or labels are constant, where
      the correlation is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    n = labels.size
    _, classes = np.unique(np.concatenate([predictions, labels]), return_inverse=True)
    num_classes = classes.max() + 1
    # Float64 throughout: the products below pass int64's range near n = 50k.
    predicted = np.bincount(classes[:n], minlength=num_classes).astype(np.float64)
    true = np.bincount(classes[n:], minlength=num_classes).astype(np.float64)
    correct = float(np.sum(predictions == labels))
    covariance = correct * n - predicted @ true
    variance_predicted = float(n) * n - predicted @ predicted
    variance_true = float(n) * n - true @ true
    denominator = math.sqrt(variance_predicted * variance_true)
    return float(covariance / denominator) if denominator else 0.0


def pearson_corrcoef(predictions, labels, is_real_example=None):
    """Pearson correlation, as GLUE scores STS-B.

    Args:
      predictions: 1-D predicted scores.
      labels: 1-D true scores.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      A float in [-1, 1]; NaN when either side is constant, where the
      correlation is undefined.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    x = predictions.astype(np.float64) - predictions.mean()
    y = labels.astype(np.float64) - labels.mean()
    denominator = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y / denominator) if denominator else float("nan")


def _average_ranks(values):
    """1-based ranks of values, ties sharing the mean of the ranks they span."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    first = last - counts + 1
    return ((first + last) / 2.0)[inverse]


def spearman_corrcoef(predictions, labels, is_real_example=None):
    """Spearman rank correlation with average ranks for ties, as GLUE scores STS-B.

    Args:
      predictions: 1-D predicted scores.
      labels: 1-D true scores.
      is_real_example: Optional 1-D 0/1 mask; 0 marks padding.

    Returns:
      The Pearson correlation of the ranks; NaN when either side is constant.
    """
    predictions, labels = _real(predictions, labels, is_real_example)
    return pearson_corrcoef(_average_ranks(predictions), _average_ranks(labels))


class DataProcessor:
    """A GLUE-style task: its labels, files, metrics and TFDS mapping.

    Subclasses set the class attributes; reading, checks and guids are shared.
    Processors take no constructor arguments, except XnliProcessor.

    Attributes:
      name: The task's name, as `get_processor` accepts it.
      labels: The label strings, in the order of the classifier's outputs.
      is_regression: True for STS-B, whose label is a float score.
      eval_splits: The labelled splits that evaluation runs on.
      predict_splits: The unlabelled splits that prediction runs on.
      submission_files: The GLUE submission file name of each predict split.
      metrics: (name, function) pairs that `compute_metrics` reports.
      skip_malformed_rows: Whether train and dev rows of the wrong width are
        skipped (QQP) instead of being an error.
      tfds_configs: The `glue/<config>` names of TFDS that hold this task.
      tfds_text_keys: The TFDS features that hold text_a and text_b.
      tfds_label_names: TFDS label name to this processor's label, where they
        differ.
    """

    name = ""
    labels = ()
    is_regression = False
    eval_splits = ("dev",)
    predict_splits = ("test",)
    submission_files = {}
    metrics = ()
    skip_malformed_rows = False
    tfds_configs = ()
    tfds_text_keys = ("sentence1", "sentence2")
    tfds_label_names = {}
    # The _File of each split.
    _files = {}

    def get_labels(self):
        """Gets the task's labels.

        Returns:
          A list of label strings, in the order of the classifier's outputs;
          empty for a regression task.
        """
        return list(self.labels)

    def get_train_examples(self, data_dir):
        """Reads the train split.

        Args:
          data_dir: The task's folder of the GLUE download.

        Returns:
          A list of labelled `InputExample`s.
        """
        return self.get_examples(data_dir, "train")

    def get_dev_examples(self, data_dir, split=None):
        """Reads a labelled evaluation split.

        Args:
          data_dir: The task's folder of the GLUE download.
          split: One of `eval_splits`; None for the first.

        Returns:
          A list of labelled `InputExample`s.
        """
        return self.get_examples(data_dir, self._choose(split, self.eval_splits, "eval"))

    def get_test_examples(self, data_dir, split=None):
        """Reads an unlabelled prediction split.

        Args:
          data_dir: The task's folder of the GLUE download.
          split: One of `predict_splits`; None for the first.

        Returns:
          A list of `InputExample`s whose label is None and whose guid ends in
          the file's index.
        """
        return self.get_examples(data_dir, self._choose(split, self.predict_splits, "predict"))

    def submission_file(self, split=None):
        """Gives the file name GLUE expects predictions of a split in.

        Args:
          split: One of `predict_splits`; None for the first.

        Returns:
          A file name such as "MRPC.tsv" or "MNLI-mm.tsv".
        """
        return self.submission_files[self._choose(split, self.predict_splits, "predict")]

    def get_examples(self, data_dir, split):
        """Reads any split of the task.

        Args:
          data_dir: The task's folder of the GLUE download.
          split: "train", one of `eval_splits` or one of `predict_splits`.

        Returns:
          A list of `InputExample`s, in file order.

        Raises:
          FileNotFoundError: The split's file is missing.
          GlueDataError: A row has the wrong width or an unknown label.
          ValueError: The task has no such split.
        """
        if split not in self._files:
            raise ValueError(f"{self.name} has no {split!r} split; its splits are: "
                             f"{', '.join(self._files)}")
        file = self._files[split]
        path = self._path(data_dir, file)
        examples, skipped = [], []
        width = None
        for line, row in _read_tsv(path, self.name):
            # A blank line, such as a second newline at the end of a file,
            # holds no example and no columns to check.
            if not row:
                continue
            if width is None:
                width = self._first_row_width(path, line, row, file)
                if row[file.key].strip().lower() in _HEADER_WORDS:
                    continue
            if len(row) != width:
                # Only labelled rows may go: a test row skipped would be a
                # prediction missing from the submission.
                if self.skip_malformed_rows and file.label is not None:
                    skipped.append(line)
                    continue
                raise GlueDataError(f"{path}:{line}: {len(row)} columns, but the rows of this "
                                    f"{self.name} file have {width}")
            if file.language is not None and row[file.language] != self.language:
                continue
            examples.append(self._example(path, line, row, file, split))
        if skipped:
            shown = ", ".join(str(n) for n in skipped[:_MAX_LINES_LOGGED])
            logging.warning("%s: skipped %d malformed row(s) of %s, at lines %s%s", self.name,
                            len(skipped), path, shown,
                            " ..." if len(skipped) > _MAX_LINES_LOGGED else "")
        return examples

    def tfds_label(self, name):
        """Maps a TFDS class name to this processor's label.

        Args:
          name: A name of the TFDS ClassLabel, such as "equivalent".

        Returns:
          The label string, such as "1".
        """
        return self._parse_label(self.tfds_label_names.get(name, name))

    def _choose(self, split, splits, kind):
        """Returns `split`, or the first of `splits` for None, checking it is one."""
        if split is None:
            if not splits:
                raise ValueError(f"{self.name} has no {kind} split")
            return splits[0]
        if split not in splits:
            raise ValueError(f"{self.name} has no {kind} split {split!r}; its {kind} splits "
                             f"are: {', '.join(splits) or 'none'}")
        return split

    def _path(self, data_dir, file):
        """The path of a split's file."""
        return os.path.join(data_dir, file.name)

    def _first_row_width(self, path, line, row, file):
        """Checks the first row (header or data) and returns the file's row width."""
        if file.width is not None and len(row) != file.width:
            raise GlueDataError(f"{path}:{line}: {len(row)} columns, but {self.name} files of "
                                f"this split have {file.width}")
        if len(row) < file.min_width:
            raise GlueDataError(f"{path}:{line}: {len(row)} columns, but {self.name} needs at "
                                f"least {file.min_width}")
        return len(row)

    def _example(self, path, line, row, file, split):
        """Builds the InputExample of one checked row."""
        label = None
        if file.label is not None:
            try:
                label = self._parse_label(row[file.label])
            except ValueError as error:
                raise GlueDataError(f"{path}:{line}: {error}") from error
        # Without an id column the original numbers rows by their 0-based line,
        # header included.
        row_id = row[file.index] if file.index is not None else str(line - 1)
        return InputExample(
            guid=f"{split}-{row_id}",
            text_a=row[file.text_a],
            text_b=row[file.text_b] if file.text_b is not None else None,
            label=label)

    def _parse_label(self, value):
        """Checks a label cell against the task's labels.

        Returns:
          The label string.

        Raises:
          ValueError: The label is not one of the task's.
        """
        if value not in self.labels:
            raise ValueError(f"unknown label {value!r}; {self.name} labels are "
                             f"{', '.join(self.labels)}")
        return value


_NLI_LABELS = ("contradiction", "entailment", "neutral")
_BINARY_LABELS = ("0", "1")
_ACCURACY = (("accuracy", accuracy),)
_F1_ACCURACY = (("f1", f1_score), ("accuracy", accuracy))


class ColaProcessor(DataProcessor):
    """CoLA: single-sentence acceptability; train and dev files have no header."""

    name = "cola"
    labels = _BINARY_LABELS
    submission_files = {"test": "CoLA.tsv"}
    metrics = (("mcc", matthews_corrcoef),)
    tfds_configs = ("cola",)
    tfds_text_keys = ("sentence", None)
    tfds_label_names = {"unacceptable": "0", "acceptable": "1"}
    # Train and dev: source, label, original annotation, sentence.
    _files = {
        "train": _File("train.tsv", label=1, text_a=3, width=4),
        "dev": _File("dev.tsv", label=1, text_a=3, width=4),
        "test": _File("test.tsv", index=0, text_a=1, width=2),
    }


class Sst2Processor(DataProcessor):
    """SST-2: single-sentence sentiment; train and dev rows have no id column."""

    name = "sst-2"
    labels = _BINARY_LABELS
    submission_files = {"test": "SST-2.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("sst2",)
    tfds_text_keys = ("sentence", None)
    tfds_label_names = {"negative": "0", "positive": "1"}
    _files = {
        "train": _File("train.tsv", text_a=0, label=1, width=2),
        "dev": _File("dev.tsv", text_a=0, label=1, width=2),
        "test": _File("test.tsv", index=0, text_a=1, width=2),
    }


class MrpcProcessor(DataProcessor):
    """MRPC: paraphrase pairs; the label ("Quality") comes first."""

    name = "mrpc"
    labels = _BINARY_LABELS
    submission_files = {"test": "MRPC.tsv"}
    metrics = _F1_ACCURACY
    tfds_configs = ("mrpc",)
    tfds_label_names = {"not_equivalent": "0", "equivalent": "1"}
    _files = {
        "train": _File("train.tsv", label=0, text_a=3, text_b=4, width=5),
        "dev": _File("dev.tsv", label=0, text_a=3, text_b=4, width=5),
        "test": _File("test.tsv", index=0, text_a=3, text_b=4, width=5),
    }


class QqpProcessor(DataProcessor):
    """QQP: duplicate question pairs; rows with missing fields are skipped."""

    name = "qqp"
    labels = _BINARY_LABELS
    submission_files = {"test": "QQP.tsv"}
    metrics = _F1_ACCURACY
    # The released train set has rows with missing fields (a question cut at
    # a line break); nothing in them says where the cut fields belong.
    skip_malformed_rows = True
    tfds_configs = ("qqp",)
    tfds_text_keys = ("question1", "question2")
    tfds_label_names = {"not_duplicate": "0", "duplicate": "1"}
    # Train and dev: id, qid1, qid2, question1, question2, is_duplicate.
    _files = {
        "train": _File("train.tsv", index=0, text_a=3, text_b=4, label=5, width=6),
        "dev": _File("dev.tsv", index=0, text_a=3, text_b=4, label=5, width=6),
        "test": _File("test.tsv", index=0, text_a=1, text_b=2, width=3),
    }


def _indexed_pair_files():
    """The files of tasks laid out as: index, text_a, text_b[, label]."""
    return {
        "train": _File("train.tsv", index=0, text_a=1, text_b=2, label=3, width=4),
        "dev": _File("dev.tsv", index=0, text_a=1, text_b=2, label=3, width=4),
        "test": _File("test.tsv", index=0, text_a=1, text_b=2, width=3),
    }


class QnliProcessor(DataProcessor):
    """QNLI: does the sentence answer the question."""

    name = "qnli"
    labels = ("entailment", "not_entailment")
    submission_files = {"test": "QNLI.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("qnli",)
    tfds_text_keys = ("question", "sentence")
    _files = _indexed_pair_files()


class RteProcessor(DataProcessor):
    """RTE: two-way textual entailment."""

    name = "rte"
    labels = ("entailment", "not_entailment")
    submission_files = {"test": "RTE.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("rte",)
    _files = _indexed_pair_files()


class WnliProcessor(DataProcessor):
    """WNLI: Winograd schemas as entailment, labelled 0/1 (1 = entailment)."""

    name = "wnli"
    labels = _BINARY_LABELS
    submission_files = {"test": "WNLI.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("wnli",)
    tfds_label_names = {"not_entailment": "0", "entailment": "1"}
    _files = _indexed_pair_files()


class StsbProcessor(DataProcessor):
    """STS-B: sentence-pair similarity, a float score in [0, 5] (regression)."""

    name = "sts-b"
    is_regression = True
    submission_files = {"test": "STS-B.tsv"}
    metrics = (("pearson", pearson_corrcoef), ("spearman", spearman_corrcoef))
    tfds_configs = ("stsb",)
    # index, genre, filename, year, old_index, source1, source2, sentence1,
    # sentence2[, score].
    _files = {
        "train": _File("train.tsv", index=0, text_a=7, text_b=8, label=9, width=10),
        "dev": _File("dev.tsv", index=0, text_a=7, text_b=8, label=9, width=10),
        "test": _File("test.tsv", index=0, text_a=7, text_b=8, width=9),
    }

    def _parse_label(self, value):
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        # The comparison is False for NaN, so unparsable values land here too.
        if not 0.0 <= score <= 5.0:
            raise ValueError(f"unknown label {value!r}; {self.name} labels are scores in [0, 5]")
        return score


class MnliProcessor(DataProcessor):
    """MultiNLI (GLUE version), with matched and mismatched dev and test sets.

    Guids are "<split>-<index>" with the split's full name ("test_matched-0"),
    so that the two test sets, whose indices both start at 0, never share one.
    """

    name = "mnli"
    labels = _NLI_LABELS
    eval_splits = ("dev_matched", "dev_mismatched")
    predict_splits = ("test_matched", "test_mismatched")
    submission_files = {"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("mnli", "mnli_matched", "mnli_mismatched")
    tfds_text_keys = ("premise", "hypothesis")
    # index, promptID, pairID, genre, 4 parses, sentence1, sentence2, then in
    # train: label1, gold_label; in dev: label1..label5, gold_label. Widths come
    # from each file's header, since subsets of MNLI keep fewer label columns.
    _files = {
        "train": _File("train.tsv", index=0, text_a=8, text_b=9, label=-1),
        "dev_matched": _File("dev_matched.tsv", index=0, text_a=8, text_b=9, label=-1),
        "dev_mismatched": _File("dev_mismatched.tsv", index=0, text_a=8, text_b=9, label=-1),
        "test_matched": _File("test_matched.tsv", index=0, text_a=8, text_b=9),
        "test_mismatched": _File("test_mismatched.tsv", index=0, text_a=8, text_b=9),
    }


class AxProcessor(DataProcessor):
    """AX, the GLUE diagnostic set: predict only, scored as MNLI.

    It has no train or dev split: GLUE scores predictions of an MNLI model on
    it, so its labels are MNLI's, in MNLI's order.
    """

    name = "ax"
    labels = _NLI_LABELS
    eval_splits = ()
    submission_files = {"test": "AX.tsv"}
    metrics = (("mcc", matthews_corrcoef),)
    tfds_configs = ("ax",)
    tfds_text_keys = ("premise", "hypothesis")
    _files = {"test": _File("diagnostic.tsv", index=0, text_a=1, text_b=2, width=3)}


class XnliProcessor(DataProcessor):
    """XNLI, laid out as the original reads it: one language at a time.

    Train is XNLI-MT 1.0's machine-translated MultiNLI,
    `multinli/multinli.train.<language>.tsv`; dev is XNLI 1.0's
    `xnli.dev.tsv`, whose rows of all languages are filtered on its language
    column. As in the original, there is no test split to predict.

    Args:
      language: The XNLI language code; by default "zh", the original's.
    """

    name = "xnli"
    labels = _NLI_LABELS
    predict_splits = ()
    metrics = _ACCURACY
    # Dev: language, gold_label, 4 parses, sentence1, sentence2, promptID, ...
    _files = {
        "train": _File("multinli/multinli.train.{language}.tsv", text_a=0, text_b=1, label=2,
                       width=3),
        "dev": _File("xnli.dev.tsv", language=0, label=1, text_a=6, text_b=7),
    }

    def __init__(self, language="zh"):
        self.language = language

    def _path(self, data_dir, file):
        return os.path.join(data_dir, file.name.format(language=self.language))

    def _parse_label(self, value):
        # The machine-translated train files call one class "contradictory".
        return super()._parse_label("contradiction" if value == "contradictory" else value)


PROCESSORS = {
    processor.name: processor
    for processor in (ColaProcessor, Sst2Processor, MrpcProcessor, QqpProcessor,
                      StsbProcessor, MnliProcessor, QnliProcessor, RteProcessor,
                      WnliProcessor, XnliProcessor, AxProcessor)
}


def _normalize(name):
    """Folds case, "-" and "_", so that "SST-2", "sst2" and "STS_B" all match."""
    return name.lower().replace("-", "").replace("_", "")


def get_processor(task_name, language=None):
    """Makes the processor of a task.

    Args:
      task_name: A key of PROCESSORS, in any case and with or without "-"
        ("MRPC", "sst2", "STS-B"), or a TFDS name "glue/<config>[:version]"
        ("glue/mnli_matched").
      language: The XNLI language; only for xnli.

    Returns:
      A new DataProcessor.

    Raises:
      ValueError: The task is unknown (the message lists the known ones), or
        a language is given for another task than xnli.
    """
    if task_name.lower().startswith("glue/"):
        config = task_name.split("/", 1)[1].split(":")[0].lower()
        matches = [p for p in PROCESSORS.values() if config in p.tfds_configs]
        if not matches:
            known = sorted(c for p in PROCESSORS.values() for c in p.tfds_configs)
            raise ValueError(f"Unknown TFDS GLUE config {task_name!r}; known: "
                             f"{', '.join('glue/' + c for c in known)}")
        processor_class = matches[0]
    else:
        matches = [p for name, p in PROCESSORS.items()
                   if _normalize(name) == _normalize(task_name)]
        if not matches:
            raise ValueError(f"Unknown task {task_name!r}; known tasks: "
                             f"{', '.join(PROCESSORS)}")
        processor_class = matches[0]
    if language is None:
        return processor_class()
    if processor_class is not XnliProcessor:
        raise ValueError(f"language is an xnli option, not one of {processor_class.name}")
    return processor_class(language)


def examples_from_tfds(tfds_name, split, data_dir=None):
    """Reads a GLUE task from TensorFlow Datasets as InputExamples.

    TFDS's label ids are mapped through its class names onto the processor's
    labels, since the orders differ (TFDS MNLI: entailment, neutral,
    contradiction). Test splits have label -1 in TFDS and None here.

    Args:
      tfds_name: "glue/<config>", such as "glue/mrpc" or "glue/mnli".
      split: A TFDS split such as "train", "validation", "test",
        "validation_matched", or a slice of one ("train[:1%]").
      data_dir: TFDS's data directory, or None for its default.

    Returns:
      A list of InputExamples with guids "<split>-<idx>", idx being TFDS's
      row index, which for test splits is the index GLUE submissions use.
    """
    processor = get_processor(tfds_name)
    dataset, info = tfds.load(tfds_name, split=split, data_dir=data_dir, with_info=True)
    # ClassLabel features have names; STS-B's float label has none.
    names = getattr(info.features["label"], "names", None)
    key_a, key_b = processor.tfds_text_keys
    prefix = split.split("[")[0]
    examples = []
    for record in tfds.as_numpy(dataset):
        raw_label = record["label"]
        if raw_label == -1:
            label = None
        elif processor.is_regression:
            label = float(raw_label)
        else:
            label = processor.tfds_label(names[int(raw_label)])
        examples.append(InputExample(
            guid=f"{prefix}-{int(record['idx'])}",
            text_a=record[key_a].decode("utf-8"),
            text_b=record[key_b].decode("utf-8") if key_b else None,
            label=label))
    return examples


def compute_metrics(task_name, predictions, labels, is_real_example=None):
    """The metrics GLUE reports for a task.

    CoLA: mcc; STS-B: pearson, spearman; MRPC and QQP: f1, accuracy; AX: mcc;
    every other task: accuracy.

    Args:
      task_name: A name get_processor accepts.
      predictions: Class ids [n], or class scores [n, num_labels] whose
        argmax is taken; for STS-B, scores [n] or [n, 1].
      labels: True class ids [n]; for STS-B, true scores [n].
      is_real_example: Optional [n] 0/1 mask; examples with 0 (the padding
        that fills the last batch) count in no metric.

    Returns:
      A dict from metric name to float.
    """
    processor = get_processor(task_name)
    predictions = np.asarray(predictions)
    if processor.is_regression:
        predictions = predictions.reshape(predictions.shape[0])
    elif predictions.ndim == 2:
        predictions = predictions.argmax(axis=-1)
    return {name: function(predictions, labels, is_real_example)
            for name, function in processor.metrics}


@contextlib.contextmanager
def _atomic_output(path):
    """Opens a temporary file beside `path` for writing; renames it to `path` at the end.

    If the body raises, the temporary file is removed and `path` is left as it
    was, so a crash never leaves a truncated file under the final name.

    Args:
      path: The final file path, local or any tf.io.gfile filesystem.

    Returns:
      A context manager yielding the writable text file.
    """
    directory, base = os.path.split(path)
    temporary = os.path.join(directory, f".{base}.{uuid.uuid4().hex}.tmp")
    try:
        with tf.io.gfile.GFile(temporary, "w") as f:
            yield f
        tf.io.gfile.rename(temporary, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.remove(temporary)
        raise


def _real_rows(rows, is_real_example):
    """The rows that are not padding, after checking the mask's length."""
    if is_real_example is None:
        return list(rows)
    mask = np.asarray(is_real_example)
    if mask.shape != (len(rows),) or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"is_real_example must be {len(rows)} values of 0 and 1, "
                         f"got shape {mask.shape}")
    return [row for row, real in zip(rows, mask, strict=True) if real]


def write_test_results(path, probabilities, is_real_example=None):
    """Writes test_results.tsv as the original does: one line of class probabilities per example.

    Args:
      path: The output file.
      probabilities: [n, num_labels] class probabilities, or [n] / [n, 1]
        scores for a regression task; a sized sequence of rows.
      is_real_example: Optional [n] 0/1 mask; padding rows (0) are not written.

    Returns:
      The number of lines written.

    Raises:
      ValueError: Rows differ in width; `path` is left as it was.
    """
    rows = _real_rows(probabilities, is_real_example)
    width = None
    with _atomic_output(path) as f:
        for number, row in enumerate(rows, start=1):
            values = np.atleast_1d(np.asarray(row))
            width = width or values.size
            if values.ndim != 1 or values.size != width:
                raise ValueError(f"row {number} has shape {values.shape}; rows before it have "
                                 f"{width} values")
            # str() of a numpy float is its shortest round-tripping form.
            f.write("\t".join(str(value) for value in values) + "\n")
    return len(rows)


def _submission_index(example):
    """The GLUE test index at the end of a test example's guid."""
    index = example.guid.rpartition("-")[2]
    if not index.isdigit():
        raise ValueError(f"guid {example.guid!r} does not end in a test index")
    return int(index)


def _submission_value(processor, prediction):
    """A prediction as GLUE's submission file spells it."""
    values = np.asarray(prediction)
    if processor.is_regression:
        if values.size != 1:
            raise ValueError(f"{processor.name} predictions are single scores, got "
                             f"shape {values.shape}")
        # GLUE scores similarity on [0, 5]; a regression head may overshoot it.
        return f"{min(max(float(values.reshape(())), 0.0), 5.0):.3f}"
    labels = processor.get_labels()
    if values.ndim == 1 and values.size == len(labels):
        class_id = int(values.argmax())
    elif values.ndim == 0 and np.issubdtype(values.dtype, np.integer):
        class_id = int(values)
    else:
        raise ValueError(f"a {processor.name} prediction is a class id or {len(labels)} "
                         f"class scores, got {values!r}")
    if not 0 <= class_id < len(labels):
        raise ValueError(f"class id {class_id} is out of range for {processor.name}")
    return labels[class_id]


def write_submission(path, task_name, examples, predictions, is_real_example=None):
    """Writes a GLUE submission file: "index<TAB>prediction" lines under a header.

    Args:
      path: The output file; its name should be the processor's
        `submission_file(split)`, such as "MNLI-m.tsv".
      task_name: A name get_processor accepts.
      examples: The split's test InputExamples, in prediction order; their
        guids end in the test index.
      predictions: One per example (plus padding, see is_real_example): a
        class id or a row of class scores (argmax is taken); for STS-B, a
        score, clipped to [0, 5].
      is_real_example: Optional 0/1 mask over predictions; padding (0) is
        dropped before predictions are matched with examples.

    Returns:
      The number of predictions written.

    Raises:
      ValueError: Counts differ, a guid has no index or a prediction does not
        fit the task; `path` is left as it was.
    """
    processor = get_processor(task_name)
    rows = _real_rows(predictions, is_real_example)
    if len(rows) != len(examples):
        raise ValueError(f"{len(rows)} real predictions for {len(examples)} examples")
    with _atomic_output(path) as f:
        f.write("index\tprediction\n")
        for example, prediction in zip(examples, rows, strict=True):
            index = _submission_index(example)
            f.write(f"{index}\t{_submission_value(processor, prediction)}\n")
    return len(rows)
