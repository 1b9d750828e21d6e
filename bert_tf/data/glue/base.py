"""The GLUE processor protocol: examples, split files, and reading them.

A task's processor (`bert_tf.data.glue.processors`) is a DataProcessor subclass
that only declares: its labels, its splits' files and where each keeps its
fields (a `SplitFile` per split), its metrics and its TFDS mapping. This
module does the rest for every task: it reads a split's TSV file into
`InputExample`s with the original repository's guid formats, and checks it.

Checks. A row whose column count differs from the file's is an error that
gives `path:line`, except in QQP, whose full train set has rows with missing
fields: those rows are skipped, counted and logged, as common GLUE readers
skip them (google-research/bert itself has no QQP processor). A label the
task does not know is an error with `path:line`; a missing file is an
error that names the task and the path. Headers are recognised, not assumed:
CoLA's train and dev files have none, every other file has one.

Splits. `get_train_examples`, `get_dev_examples` and `get_test_examples` read
one split each; a processor's `eval_splits` and `predict_splits` list the
splits a runner loops over (MNLI: matched and mismatched), and
`submission_file(split)` names the file GLUE expects for a predict split.
Test examples carry the file's own index column in their guid ("test-17",
where the original numbered CoLA and MRPC test rows by line, from 1), which
is the index a submission file needs, and no label: None, where the original
put a dummy first label.
"""

import dataclasses
import os

from absl import logging

from bert_tf.data.glue.reading import GlueDataError, read_tsv

# Values that the key column (label, else index) of a GLUE header holds. A
# first row whose key cell is one of these is a header; any other first row is
# data, which is how CoLA's header-less train and dev files are told apart.
_HEADER_WORDS = frozenset(
    {"index", "id", "label", "gold_label", "quality", "is_duplicate", "score"})

# How many skipped line numbers a QQP warning lists before it stops.
_MAX_LINES_LOGGED = 10


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
class SplitFile:
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
      split_files: The SplitFile of each split, by split name.
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
    split_files = {}

    def get_labels(self):
        """Gets the task's labels.

        Returns:
          A list of label strings, in the order of the classifier's outputs;
          empty for a regression task.
        """
        return list(self.labels)

    def label_ids(self, examples):
        """The labels of examples as the classifier's targets.

        Args:
          examples: Labelled InputExamples of this task.

        Returns:
          A list: each label's index in get_labels(), or the float score of a
          regression task.
        """
        if self.is_regression:
            return [example.label for example in examples]
        index = {label: i for i, label in enumerate(self.labels)}
        return [index[example.label] for example in examples]

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
        if split not in self.split_files:
            raise ValueError(f"{self.name} has no {split!r} split; its splits are: "
                             f"{', '.join(self.split_files)}")
        file = self.split_files[split]
        path = self.split_path(data_dir, file)
        examples, skipped = [], []
        width = None
        for line, row in read_tsv(path, self.name):
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
        return self.parse_label(self.tfds_label_names.get(name, name))

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

    def split_path(self, data_dir, file):
        """Gives the path of a split's file; XNLI overrides it to fill in the language.

        Args:
          data_dir: The task's folder of the GLUE download.
          file: The split's SplitFile.

        Returns:
          The file's path.
        """
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
                label = self.parse_label(row[file.label])
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

    def parse_label(self, value):
        """Checks a label cell against the task's labels.

        Tasks whose labels are not plain strings (STS-B's scores) or have
        other spellings (XNLI's "contradictory") override it.

        Args:
          value: The cell's text.

        Returns:
          The label string.

        Raises:
          ValueError: The label is not one of the task's.
        """
        if value not in self.labels:
            raise ValueError(f"unknown label {value!r}; {self.name} labels are "
                             f"{', '.join(self.labels)}")
        return value
