"""Labelled rows of one's own -> classification records; LabelledData for finetune.run.

Each row becomes one record: its text (or pair of texts) packed as the
original run_classifier.py packs GLUE's (tokenization.pack_ids), and its
label: the label's index (single_label, record_specs.classification_features),
a 0/1 per label (multi_label, record_specs.multi_label_features) or the value
(regression). A text (or pair) longer than max_seq_length word pieces is cut
to it, as GLUE's are (a pair loses the end of its longer text first); each
split's count of cut examples is logged, and scoring gives it as
truncated_examples.

LabelledData is the data of run_classifier.py on --train_file, --eval_file
and --predict_file, and LabelledReferences what it gives the task to score
or write a split (scoring.score, outputs.write_outputs).
"""

import dataclasses
import os

import numpy as np
from absl import logging

from bert_tf import messages
from bert_tf.data import protocol
from bert_tf.data.csv import labels as label_lists
from bert_tf.data.csv.outputs import write_outputs
from bert_tf.data.csv.reading import LabelledDataError, delimiter_for, read_table
from bert_tf.data.csv.scoring import MAIN_METRICS, score
from bert_tf.data.csv.settings import (
    ID_COLUMNS,
    LABEL_COLUMNS,
    MULTI_LABEL,
    REGRESSION,
    TEXT_B_COLUMNS,
    TEXT_COLUMNS,
)
from bert_tf.data.fingerprints import fingerprints
from bert_tf.text import tokenization

# The lines a warning about rows names, at most.
_LINES_SHOWN = 5
# The flag that names each split's file, and the action that reads it.
_FILE_FLAGS = {"train": ("--train_file", "--do_train"),
               "dev": ("--eval_file", "--do_eval (or --eval_every_steps)"),
               "test": ("--predict_file", "--do_predict")}


@dataclasses.dataclass(frozen=True)
class Example:
    """One row of a file.

    Attributes:
      guid: Its id: the id column's value, else the line it starts on.
      line: The 1-based line it starts on.
      text_a: The first text.
      text_b: The second text, or None.
      label: A label string (single_label), a tuple of them (multi_label), a
        float (regression), or None (a predict file's row).
    """

    guid: str
    line: int
    text_a: str
    text_b: str | None = None
    label: object = None


@dataclasses.dataclass
class LabelledReferences:
    """What scoring.score() and outputs.write_outputs() need besides the predictions.

    Attributes:
      problem_type: One of settings.PROBLEM_TYPES.
      labels: The label names in the model's order; empty for regression.
      examples: The split's Examples, in prediction order.
      targets: The true labels: int [n] indices, 0/1 [n, num_labels] or
        float [n] values; None for an unlabelled split.
      columns: {"text", "text_b", "label", "id"}: the file's column names,
        None where it has none.
      delimiter: The file's delimiter, which the predictions file keeps.
      threshold: multi_label's threshold.
      separator: multi_label's label separator.
      truncated: How many of the examples were cut to max_seq_length.
    """

    problem_type: str
    labels: list
    examples: list
    targets: object
    columns: dict
    delimiter: str
    threshold: float = 0.5
    separator: str = "|"
    truncated: int = 0


def _warn_empty_texts(path, examples):
    """Warns, in one line, of rows whose text (or second text) is empty: the model reads
    nothing of them, which a user means rarely and sees nowhere else."""
    lines = [example.line for example in examples
             if not example.text_a.strip()
             or (example.text_b is not None and not example.text_b.strip())]
    if lines:
        count = "1 row has" if len(lines) == 1 else f"{len(lines)} rows have"
        shown = ", ".join(str(line) for line in lines[:_LINES_SHOWN])
        more = " ..." if len(lines) > _LINES_SHOWN else ""
        messages.warn(f"{path}:{lines[0]}: {count} an empty text (line{'s' * (len(lines) > 1)} "
                      f"{shown}{more}); the model reads no text there")


class LabelledData(protocol.FinetuneData):
    """The CSV or TSV files of one run on data of one's own, for finetune.run.

    The splits are "train" (--train_file), "dev" (--eval_file) and "test"
    (--predict_file, whose label column is not read: it may have none).
    Every file is read with the columns the first one read resolved, so
    that a default name (text, sentence2, ...) means one column for all.
    """

    eval_splits = ("dev",)
    predict_splits = ("test",)
    flagged_settings = ("problem_type", "labels", "eval_file")

    def __init__(self, config, tokenizer, max_seq_length, output_dir=None, model_dir=None):
        """Describes the data; nothing is read before read().

        Args:
          config: A settings.LabelledDataConfig.
          tokenizer: The model's tokenization.FullTokenizer.
          max_seq_length: Tokens per record.
          output_dir: The run's folder, where a training run's label_list.txt is.
          model_dir: The folder of the fine-tuned run whose model the run starts
            from (--init_checkpoint's), or None: its label_list.txt gives the
            labels when nothing before it does.
        """
        self.config = config
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.output_dir = output_dir
        self.model_dir = model_dir
        self.examples = {}
        self.id_columns = {}
        self._records = {}
        self.truncated = {}
        self._labels = None
        self._label_source = None
        # The column names, once the first file has resolved them.
        self.columns = None

    def _given_file(self, split):
        """The file its flag gives a split, or None."""
        return {"train": self.config.train_file, "dev": self.config.eval_file,
                "test": self.config.predict_file}[split]

    def path(self, split):
        """The file of a split, as its flag gives it.

        Raises:
          LabelledDataError: the flag is not given.
        """
        path = self._given_file(split)
        if not path:
            flag, action = _FILE_FLAGS[split]
            raise LabelledDataError(f"{action} needs {flag}")
        return path

    @property
    def problem_type(self):
        """config.problem_type."""
        return self.config.problem_type

    @property
    def sentence_pairs(self):
        """Whether the examples are pairs: the files have a second text column."""
        if self.columns is not None:
            return self.columns["text_b"] is not None
        return self.config.text_b_column is not None

    def labels(self):
        """The label names in the model's order: --labels, --labels_file, the training
        file's (sorted), output_dir's label_list.txt, or model_dir's; empty for regression.

        Raises:
          LabelledDataError: none of these is at hand, or a list is not usable.
        """
        if self._labels is not None:
            return self._labels
        config = self.config
        saved = os.path.join(self.output_dir or "", label_lists.LABEL_FILE)
        if self.problem_type == REGRESSION:
            self._labels, self._label_source = [], None
        elif config.labels:
            self._labels = label_lists.check_label_list(config.labels, "--labels",
                                                        self._separator)
            self._label_source = "--labels"
        elif config.labels_file:
            self._labels = label_lists.read_label_file(config.labels_file, "--labels_file",
                                                       self._separator)
            self._label_source = config.labels_file
        elif "train" in self.examples:
            found = [label for example in self.examples["train"]
                     for label in self._as_tuple(example.label)]
            self._labels = label_lists.sorted_labels(found)
            self._label_source = f"{self.path('train')}'s labels"
        elif self.output_dir and os.path.exists(saved):
            self._labels = label_lists.read_label_file(saved, "--output_dir")
            self._label_source = saved
        elif self.model_dir and os.path.exists(os.path.join(self.model_dir,
                                                            label_lists.LABEL_FILE)):
            self._label_source = os.path.join(self.model_dir, label_lists.LABEL_FILE)
            self._labels = label_lists.read_label_file(self._label_source, "--init_checkpoint")
        else:
            raise LabelledDataError(
                f"no labels: give --labels, --labels_file or --do_train with --train_file "
                f"(a training run writes them to {saved})")
        return self._labels

    @property
    def _separator(self):
        """The label separator no label may hold: multi_label's; None otherwise."""
        return self.config.label_separator if self.problem_type == MULTI_LABEL else None

    def _as_tuple(self, label):
        """A label cell's labels, as a tuple."""
        return label if isinstance(label, tuple) else (label,)

    def _resolve_columns(self, table, labelled):
        """The text and label columns' names of the run, from the first file read."""
        config = self.config
        text = table.column(config.text_column, "--text_column", TEXT_COLUMNS)
        text_b = table.column(config.text_b_column, "--text_b_column", TEXT_B_COLUMNS,
                              required=False)
        label = table.column(config.label_column, "--label_column", LABEL_COLUMNS,
                             required=labelled)
        flags = {"--text_column": text, "--text_b_column": text_b, "--label_column": label}
        named = [(flag, index) for flag, index in flags.items() if index is not None]
        for position, (flag, index) in enumerate(named):
            for other, other_index in named[position + 1:]:
                if index == other_index:
                    raise LabelledDataError(
                        f"{table.path}:1: {flag} and {other} both name the column "
                        f"{table.columns[index]!r}: give each its own column")
        return {"text": table.columns[text],
                "text_b": None if text_b is None else table.columns[text_b],
                "label": None if label is None else table.columns[label]}

    def _read_examples(self, split):
        """The Examples of a split's file, labels parsed but not yet checked."""
        labelled = split != "test"
        table = read_table(self.path(split), _FILE_FLAGS[split][0], self.config.delimiter)
        if self.columns is None:
            self.columns = self._resolve_columns(table, labelled)
        elif labelled and self.columns["label"] is None:
            self.columns["label"] = self._resolve_columns(table, labelled)["label"]
        text = table.column(self.columns["text"], "--text_column")
        text_b = (None if self.columns["text_b"] is None
                  else table.column(self.columns["text_b"], "--text_b_column"))
        label = table.column(self.columns["label"], "--label_column") if labelled else None
        # The id column only names the examples in the outputs: each file its own.
        id_index = table.column(self.config.id_column, "--id_column", ID_COLUMNS,
                                required=False)
        self.id_columns[split] = None if id_index is None else table.columns[id_index]
        if labelled:
            self._check_label_column(table, label)
        examples = []
        for line, cells in table.rows:
            value = None
            if labelled:
                try:
                    value = label_lists.parse_cell(cells[label], self.problem_type,
                                                   self.config.label_separator)
                except ValueError as error:
                    raise LabelledDataError(f"{table.path}:{line}: column "
                                            f"{self.columns['label']!r}: {error}") from None
            examples.append(Example(
                guid=cells[id_index] if id_index is not None else str(line), line=line,
                text_a=cells[text], text_b=cells[text_b] if text_b is not None else None,
                label=value))
        if not examples:
            raise LabelledDataError(f"{table.path}: no rows after the header")
        if split == "train" and self.problem_type != REGRESSION and not (
                label_lists.check_label_variety([self._as_tuple(e.label) for e in examples])):
            raise LabelledDataError(
                f"{table.path}: column {self.columns['label']!r} holds a different label in "
                f"each of its {len(examples)} rows, which would train one class per row: "
                "give the labels' column as --label_column (or, for a number per row, "
                "--problem_type=regression)")
        _warn_empty_texts(table.path, examples)
        return examples

    def _check_label_column(self, table, label):
        """Refuses label cells of another problem type or separator
        (label_lists.check_separators), naming path:line and the flag to give."""
        known = set(self.labels()) if self.config.labels or self.config.labels_file else ()
        found = label_lists.check_separators(
            [(line, cells[label]) for line, cells in table.rows], self.problem_type,
            self.config.label_separator, known)
        if found is not None:
            line, message = found
            raise LabelledDataError(f"{table.path}:{line}: column {self.columns['label']!r}: "
                                    f"{message}")

    def _targets(self, split):
        """The split's labels as the model's targets; None for the test split.

        Raises:
          LabelledDataError: a label that is not in the label list, naming
            path:line and the list.
        """
        if split == "test":
            return None
        examples = self.examples[split]
        if self.problem_type == REGRESSION:
            return np.array([example.label for example in examples], np.float64)
        labels = self.labels()
        index = {label: i for i, label in enumerate(labels)}
        for example in examples:
            for label in self._as_tuple(example.label):
                if label not in index:
                    shown = ", ".join(labels[:20]) + (" ..." if len(labels) > 20 else "")
                    raise LabelledDataError(
                        f"{self.path(split)}:{example.line}: label {label!r} is not one of "
                        f"the {len(labels)} labels of {self._label_source} ({shown})")
        if self.problem_type == MULTI_LABEL:
            targets = np.zeros((len(examples), len(labels)), np.float32)
            for row, example in enumerate(examples):
                targets[row, [index[label] for label in example.label]] = 1.0
            return targets
        return np.array([index[example.label] for example in examples], np.int64)

    def read(self, splits):
        """Reads the splits not read yet, checks their labels and makes their records.

        Every file is read before any label is checked, so that the training
        file's labels are known when the dev file's are checked.

        Raises:
          FileNotFoundError, LabelledDataError: naming the file (and line,
            column or flag).
        """
        new = [split for split in splits if split not in self.examples]
        # The training file first: it fixes the columns and, maybe, the labels.
        for split in sorted(new, key=lambda s: s != "train"):
            self.examples[split] = self._read_examples(split)
        for split in new:
            self._records[split] = self._convert(split)

    def _convert(self, split):
        """The records of a split read(), with its count of cut examples logged."""
        targets = self._targets(split)
        num_labels = len(self.labels())
        cls_id, sep_id = self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"]
        records, truncated = [], 0
        for row, example in enumerate(self.examples[split]):
            ids_a = self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(example.text_a))
            ids_b = None
            if example.text_b is not None:
                ids_b = self.tokenizer.convert_tokens_to_ids(
                    self.tokenizer.tokenize(example.text_b))
            specials = 2 if ids_b is None else 3
            if len(ids_a) + len(ids_b or ()) + specials > self.max_seq_length:
                truncated += 1
            record = tokenization.pack_ids(ids_a, ids_b, max_seq_length=self.max_seq_length,
                                           cls_id=cls_id, sep_id=sep_id)
            if self.problem_type == MULTI_LABEL:
                values = targets[row] if targets is not None else np.zeros(num_labels)
                record["label_ids"] = [[float(value)] for value in values]
            elif self.problem_type == REGRESSION:
                record["label_ids"] = float(targets[row]) if targets is not None else 0.0
            else:
                record["label_ids"] = int(targets[row]) if targets is not None else 0
            record["is_real_example"] = 1
            records.append(record)
        self.truncated[split] = truncated
        if truncated:
            logging.warning(
                "%s: %d of %d examples are longer than max_seq_length=%d word pieces and were "
                "cut to it (a pair loses the end of its longer text first)",
                self.path(split), truncated, len(records), self.max_seq_length)
        return records

    def check_scorable(self, split):
        """Refuses a regression dev set whose values are all equal: pearson and spearman,
        by which it is scored and its best model chosen, are undefined on it.

        Raises:
          LabelledDataError: naming the file and the column.
        """
        if self.problem_type != REGRESSION:
            return
        values = {example.label for example in self.examples[split]}
        if len(values) < 2:
            raise LabelledDataError(
                f"{self.path(split)}: every value of column {self.columns['label']!r} is "
                f"{values.pop():g}: pearson and spearman, which score a regression, are "
                "undefined without variation; give a dev file whose values vary")

    def check_files_read(self, splits):
        """Refuses a file given for a split the run does not read: its flag would do nothing.

        Args:
          splits: The splits the run reads (finetune.splits_to_read()).

        Raises:
          LabelledDataError: naming the file's flag and the action that reads it.
        """
        for split, (flag, action) in _FILE_FLAGS.items():
            path = self._given_file(split)
            if path and split not in splits:
                raise LabelledDataError(f"{flag}={path} is read by {action} alone: add it, "
                                        f"or leave {flag} out")

    def num_train_examples(self):
        """The training examples."""
        return len(self.examples["train"])

    def describe(self, split):
        """"120 examples of train.csv"."""
        return f"{len(self.examples[split])} examples of {self.path(split)}"

    def source(self, split):
        """The split's file: a predict file that is the eval file is predicted once."""
        return os.path.abspath(self.path(split))

    def records(self, split):
        """The split's records (see the module docstring); a test split's labels are 0."""
        return self._records[split]

    def references(self, split):
        """A LabelledReferences of the split."""
        return LabelledReferences(
            problem_type=self.problem_type, labels=self.labels(),
            examples=self.examples[split], targets=self._targets(split),
            columns={**self.columns, "id": self.id_columns[split]},
            delimiter=delimiter_for(self.path(split), self.config.delimiter),
            threshold=self.config.threshold, separator=self.config.label_separator,
            truncated=self.truncated.get(split, 0))

    def score(self, predictions, references):
        """scoring.score's metrics of a split: accuracy and each label's F1, micro and
        macro F1 (multi-label), or pearson and spearman (regression).

        Args:
          predictions: {"predictions": ...} over the real examples, in order.
          references: references()' of the split.

        Returns:
          {metric name: float}.
        """
        return score(predictions["predictions"], references)

    @property
    def main_metric(self):
        """eval_accuracy, eval_micro_f1 or pearson, by the problem type (MAIN_METRICS)."""
        return MAIN_METRICS[self.problem_type]

    def write_outputs(self, predictions, references, output_dir):
        """test_results.tsv and the predictions file with the labels' names (outputs.py)."""
        write_outputs(predictions["predictions"], references, output_dir)

    def task_settings(self):
        """The problem type and the labels, in the model's order."""
        return {"problem_type": self.problem_type, "labels": self.labels()}

    def training_settings(self):
        """The training file, its columns and the records' length."""
        settings = {"train_data": fingerprints([self.path("train")]),
                    "columns": [self.columns["text"], self.columns["text_b"],
                                self.columns["label"]],
                    "max_seq_length": self.max_seq_length}
        if self.problem_type == MULTI_LABEL:
            settings["label_separator"] = self.config.label_separator
        return settings

    def eval_settings(self):
        """The eval file, by its fingerprint."""
        return {"eval_file": fingerprints([self.path("dev")])}

    def write_run_files(self, output_dir):
        """Writes label_list.txt, which a later run without --do_train reads back."""
        if self.problem_type != REGRESSION:
            label_lists.write_label_file(output_dir, self.labels())
