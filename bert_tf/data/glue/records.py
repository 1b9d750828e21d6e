"""GLUE examples -> classification records, as the original run_classifier.py wrote them.

Each example becomes one tf.train.Example with input_ids, input_mask,
segment_ids, label_ids and is_real_example (record_specs.classification_features,
which input_pipeline.finetuning_dataset reads), written by
protocol.write_records. Files are written to output_dir like the
original's train.tf_record, so that a TPU reads them from GCS.

Eval and predict sets are padded with dummy examples (is_real_example = 0) to
a multiple of the batch size: TPUs need every batch full, and the padding
counts in no metric and in no prediction file.

GlueData is the data of run_classifier.py and the notebook for finetune.run:
it scores a split's predictions with the GLUE task's metrics and writes the
original's test_results.tsv and a GLUE submission file from them, each from
the split's GlueReferences.
"""

import dataclasses
import os
import random

import numpy as np

from bert_tf.data import protocol
from bert_tf.data.fingerprints import fingerprints
from bert_tf.data.glue.outputs import write_submission
from bert_tf.data.glue.reading import GlueDataError
from bert_tf.data.glue.scoring import evaluation_metrics, main_metric
from bert_tf.data.glue.splits import read_split
from bert_tf.data.test_results import write_test_results
from bert_tf.text import tokenization


@dataclasses.dataclass
class GlueReferences:
    """What GlueData.score() and write_outputs() need besides the predictions.

    Attributes:
      label_ids: The examples' label ids (for regression: their scores), for
        score(); None for a test set.
      examples: The glue.InputExample objects, in prediction order, for
        write_outputs()' GLUE submission file.
      split: Their split ("test", "test_matched", ...), which names
        write_outputs()' files.
    """

    label_ids: object = None
    examples: list | None = None
    split: str = "test"


def convert_example(example, label_map, max_seq_length, tokenizer, is_regression):
    """Tokenizes and packs one InputExample.

    Args:
      example: A glue.InputExample. A None label (test sets) becomes id 0.
      label_map: {label string: id}; unused for regression.
      max_seq_length: Length of every packed sequence.
      tokenizer: A tokenization.FullTokenizer.
      is_regression: Whether the label is a float.

    Returns:
      A dict of input_ids, input_mask, segment_ids (lists), label_ids (int or
      float) and is_real_example (1).

    Raises:
      GlueDataError: for a label that is not in label_map.
    """
    ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_a))
    ids_b = None
    if example.text_b is not None:
        ids_b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_b))
    features = tokenization.pack_ids(
        ids_a, ids_b, max_seq_length=max_seq_length,
        cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
    if is_regression:
        features["label_ids"] = float(example.label) if example.label is not None else 0.0
    elif example.label is None:
        features["label_ids"] = 0
    elif example.label in label_map:
        features["label_ids"] = label_map[example.label]
    else:
        raise GlueDataError(
            f"example {example.guid}: unknown label {example.label!r}; "
            f"known: {', '.join(label_map)}")
    features["is_real_example"] = 1
    return features


class GlueData(protocol.FinetuneData):
    """The splits of one GLUE (or XNLI) task, for run_classifier.py's finetune.run."""

    # The labels follow from --task_name.
    flagged_settings = ("task_name",)

    def __init__(self, processor, tokenizer, max_seq_length, data_dir=None, tfds_name=None,
                 max_examples=None):
        """Describes the data; nothing is read before read().

        Args:
          processor: The task's glue.DataProcessor.
          tokenizer: The model's tokenization.FullTokenizer.
          max_seq_length: The records' sequence length.
          data_dir: The task's folder of the GLUE download.
          tfds_name: Instead, a TFDS name such as "glue/mrpc".
          max_examples: {split: n}: a split with more than n examples is cut
            to a random sample of n, the same one every time (a quick run on
            a CPU); None or a missing split: every example.
        """
        self.processor = processor
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.data_dir = data_dir
        self.tfds_name = tfds_name
        self.max_examples = dict(max_examples or {})
        self.eval_splits = processor.eval_splits
        self.predict_splits = processor.predict_splits
        self.examples = {}

    def read(self, splits):
        """Reads the examples of the splits not read yet (see glue.read_split for the errors)."""
        for split in splits:
            if split not in self.examples:
                examples = read_split(self.processor, split, self.data_dir, self.tfds_name)
                limit = self.max_examples.get(split)
                if limit is not None and limit < len(examples):
                    examples = random.Random(0).sample(examples, limit)
                self.examples[split] = examples

    def num_train_examples(self):
        """The training examples."""
        return len(self.examples[self.train_split])

    def describe(self, split):
        """"3668 examples"."""
        return f"{len(self.examples[split])} examples"

    def records(self, split):
        """The examples' records (convert_example's); a test set's labels are 0.

        Raises:
          GlueDataError: for a label the task does not have.
        """
        label_map = {label: i for i, label in enumerate(self.processor.get_labels())}
        return [convert_example(example, label_map, self.max_seq_length, self.tokenizer,
                                self.processor.is_regression)
                for example in self.examples[split]]

    def task_settings(self):
        """The GLUE task's name and labels."""
        return {"task_name": self.processor.name, "labels": self.processor.get_labels()}

    def training_settings(self):
        """The training file (or TFDS name) and the records' length."""
        if self.tfds_name:
            source = f"TensorFlow Datasets {self.tfds_name}"
        else:
            source = fingerprints([self.processor.split_path(
                self.data_dir, self.processor.split_files[self.train_split])])
        settings = {"train_data": source, "max_seq_length": self.max_seq_length}
        if self.train_split in self.max_examples:
            settings["max_train_examples"] = self.max_examples[self.train_split]
        return settings

    def eval_settings(self):
        """The first dev file (or the TFDS name) that evaluation during training scores."""
        if self.tfds_name:
            return {"dev_data": f"TensorFlow Datasets {self.tfds_name}"}
        split = self.eval_splits[0]
        return {"dev_data": fingerprints([self.processor.split_path(
            self.data_dir, self.processor.split_files[split])])}

    def references(self, split):
        """A GlueReferences; without label ids for a test split."""
        examples = self.examples[split]
        labelled = split not in self.processor.predict_splits
        return GlueReferences(
            self.processor.label_ids(examples) if labelled else None, examples, split)

    def score(self, predictions, references):
        """eval_loss, eval_accuracy and the GLUE task's metrics.

        Args:
          predictions: ClassificationTask's {"predictions": ...} over the real
            examples, in order.
          references: A GlueReferences with their label_ids.

        Returns:
          glue.evaluation_metrics' dict.
        """
        return evaluation_metrics(self.processor.name, predictions["predictions"],
                                  np.asarray(references.label_ids),
                                  self.processor.is_regression)

    @property
    def main_metric(self):
        """The metric GLUE ranks the task by first: mcc for CoLA, f1 for MRPC and QQP,
        pearson for STS-B, eval_accuracy for the others."""
        return main_metric(self.processor.name)

    def write_outputs(self, predictions, references, output_dir):
        """The original's test_results.tsv and the GLUE submission file of a split.

        test_results.tsv holds one line of class probabilities (or the score)
        per example; a task with several test splits (MNLI) writes
        test_results_<split>.tsv for each. The submission file is named by
        the GLUE task's processor (e.g. MNLI-m.tsv).

        Args:
          predictions: ClassificationTask's {"predictions": ...} over the real
            examples, in order.
          references: A GlueReferences with their examples and split.
          output_dir: The folder to write them in.
        """
        processor = self.processor
        suffix = "" if len(processor.predict_splits) == 1 else f"_{references.split}"
        write_test_results(os.path.join(output_dir, f"test_results{suffix}.tsv"),
                           predictions["predictions"])
        write_submission(os.path.join(output_dir, processor.submission_file(references.split)),
                         processor.name, references.examples, predictions["predictions"])
