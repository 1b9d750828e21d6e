"""A fine-tuning run's splits: their records, written once, and their predictions, made once.

SplitCache writes a split's records to the run's records folder
(records_dir(): output_dir on the chief) and keeps its predictions, in
input order (predict()); evaluate() scores a dev split with its data's
official metrics.
"""

import contextlib
import os
import shutil
import tempfile

import numpy as np
from absl import logging

from bert_tf import configs
from bert_tf.data import protocol
from bert_tf.records import input_pipeline


def reader_args(config):
    """The reader arguments that dynamic_padding and group_by_length ask for.

    Args:
      config: A FinetuneConfig, check_config()'ed.

    Returns:
      {"trim_to_multiple_of": ..., "length_group_batches": ...}, each None
      when off.
    """
    padding = config.padding
    multiple = input_pipeline.LENGTH_MULTIPLE if padding.dynamic_padding else None
    group = configs.jobs.LENGTH_GROUP_BATCHES if padding.group_by_length else None
    return {"trim_to_multiple_of": multiple, "length_group_batches": group}


@contextlib.contextmanager
def records_dir(trainer):
    """Where this process writes TFRecords: output_dir on the chief.

    Under multi-worker training only the chief writes to output_dir; every
    other worker keeps its copy of the records in a folder of its own,
    deleted at the end.

    Args:
      trainer: The Trainer.

    Yields:
      A folder path.
    """
    if trainer.is_chief:
        yield trainer.output_dir
        return
    folder = tempfile.mkdtemp(prefix="bert_tf_records_")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def dataset_fn(reader, path, global_batch_size, is_training, **reader_args):
    """The input function for Trainer.train / evaluate / predict.

    Training shards the records across workers. Evaluation and prediction do
    not: every worker reads the whole set in order, so that the chief's own
    predictions are complete and in input order (the others' are discarded).

    Args:
      reader: An input_pipeline reader, called as reader(path, batch_size,
        is_training=..., input_context=..., **reader_args).
      path: The TFRecord file(s).
      global_batch_size: The batch over all replicas.
      is_training: Whether to repeat, shuffle and shard.
      **reader_args: The reader's other arguments (max_seq_length, ...).

    Returns:
      A function of a tf.distribute.InputContext that returns the dataset.
    """
    def fn(input_context):
        return reader(path, input_context.get_per_replica_batch_size(global_batch_size),
                      is_training=is_training,
                      input_context=input_context if is_training else None, **reader_args)
    return fn


def predict(trainer, predict_fn, order=None):
    """The task's predictions over a dev or test set, in input order, padding dropped.

    Args:
      trainer: The Trainer.
      predict_fn: The input function of the records (is_training=False),
        as Trainer.inference.predict takes it.
      order: For records written in another order than the input's, the
        input index of each (protocol.length_order()); None when the
        records are in input order.

    Returns:
      {name: np.ndarray} over the real examples; is_real_example removed.
    """
    predictions = trainer.inference.predict(predict_fn)
    real = predictions.pop("is_real_example", None)
    if real is not None:
        keep = np.asarray(real) == 1
        predictions = {name: value[keep] for name, value in predictions.items()}
    if order is None:
        return predictions
    # The written position of each input: row i of the result is input i's.
    positions = np.argsort(order)
    return {name: value[positions] for name, value in predictions.items()}


def evaluate(trainer, data, split, predict_fn, order=None):
    """The data's official metrics of the model's predictions on one dev set.

    Args:
      trainer: The Trainer.
      data: The protocol.FinetuneData the split is read from (it scores).
      split: The dev split, read().
      predict_fn: The input function of the split's records (is_training=False).
      order: The records' order, as predict() takes it.

    Returns:
      (metrics, predictions): data.score()'s dict, and predict()'s.
    """
    predictions = predict(trainer, predict_fn, order)
    return data.score(predictions, data.references(split)), predictions


class SplitCache:
    """What a run has made of its splits, each made once: records, predictions, output files.

    A split's records are written to the run's records folder once per
    batch size (dev and test sets are padded to a multiple of it); a
    data.source() is predicted once, and its output files written once,
    whichever of its splits asks first.
    """

    def __init__(self, config, task, data, trainer, folder):
        """Starts empty.

        Args:
          config: The FinetuneConfig (its padding settings).
          task: The tasks.Task (its record layouts).
          data: Its protocol.FinetuneData.
          trainer: The Trainer that predicts.
          folder: Where the records are written (records_dir()).
        """
        self.task = task
        self.data = data
        self.trainer = trainer
        self.folder = folder
        self.reader_args = reader_args(config)
        # {(split, batch_size): (input function, order)}
        self._inputs = {}
        # {data.source(split): predict()'s dict}
        self._predictions = {}
        # The data.source() of every split whose output files are written.
        self._written = set()

    def input_fn(self, split, batch_size, is_training):
        """Writes one split's records, once; their input function for the trainer.

        With dynamic padding a dev or test split is written from its
        shortest record to its longest, so that each batch is cut to
        lengths its records share; predict() restores the input order.

        Returns:
          (input function, order): order as predict() takes it, None when
          the records are in input order.
        """
        if (split, batch_size) not in self._inputs:
            path = os.path.join(self.folder, f"{split}.tf_record")
            specs = (self.task.feature_specs() if is_training
                     else self.task.prediction_feature_specs())
            records = list(self.data.records(split))
            order = None
            if not is_training and self.reader_args["trim_to_multiple_of"]:
                order = protocol.length_order(records, specs)
                records = [records[i] for i in order]
            protocol.write_records(path, records, specs, None if is_training else batch_size)
            self._inputs[split, batch_size] = (dataset_fn(
                input_pipeline.finetuning_dataset, path, batch_size, is_training,
                features=specs, **self.reader_args), order)
        return self._inputs[split, batch_size]

    def predictions(self, split, batch_size):
        """predict() of a split, once per data.source()."""
        source = self.data.source(split)
        if source not in self._predictions:
            logging.info("Predicting %s (%s).", self.data.describe(split), split)
            predict_fn, order = self.input_fn(split, batch_size, False)
            self._predictions[source] = predict(self.trainer, predict_fn, order)
        return self._predictions[source]

    def score_now(self, split, batch_size, keep):
        """The split's metrics of the model as it is now, predicted afresh.

        Args:
          split: An eval split.
          batch_size: Its batch size.
          keep: Keep these predictions as the split's (the final model's,
            which the evaluation after training then reuses).

        Returns:
          data.score()'s dict.
        """
        predict_fn, order = self.input_fn(split, batch_size, False)
        metrics, predictions = evaluate(self.trainer, self.data, split, predict_fn, order)
        if keep:
            self._predictions[self.data.source(split)] = predictions
        return metrics

    def forget_predictions(self):
        """Drops every prediction kept: they are not the model's that is now loaded."""
        self._predictions.clear()

    def write_outputs(self, split):
        """The data's output files of a split's predictions: once per data.source(), by
        the chief."""
        source = self.data.source(split)
        if source not in self._written:
            self._written.add(source)
            if self.trainer.is_chief:
                self.data.write_outputs(self._predictions[source], self.data.references(split),
                                        self.trainer.output_dir)

    def predicted(self, splits):
        """{split: predict()'s dict} of those of the splits that were predicted."""
        return {split: self._predictions[self.data.source(split)] for split in splits
                if self.data.source(split) in self._predictions}
