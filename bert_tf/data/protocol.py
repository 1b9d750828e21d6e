"""The data side of a training job, next to the Task protocol: TrainingData, FinetuneData.

TrainingData is what every job asks of its data: the splits each action
reads (train_split, eval_splits), read() to read and check them before any
work, describe() for the log, and training_settings(), what a later run of
the same output_dir must train on alike. Pretraining's data
(data/pretraining: record files that create_pretraining_data.py wrote) is a
TrainingData that gives its input pipelines itself; fine-tuning's is a
FinetuneData, whose records are made from the dataset's examples.

finetune.run gives a task its data through FinetuneData. A family's data
class says which splits each action reads, reads and checks them, turns a
split into records of the task's record_specs.py layout, and scores the
task's predictions of a split and writes its output files, from the split's
references:

  train_split, eval_splits, predict_splits   the splits of --do_train,
                    --do_eval and --do_predict;
  eval_writes_outputs   whether scoring a split writes its output files too;
  read()            reads and checks the splits a run needs, before training;
  check_scorable()  checks that an eval split has what scoring needs (SQuAD's
                    answers), before any work;
  num_train_examples()  what an epoch counts;
  describe()        a split's size, for the log;
  source()          which splits are the same input, predicted once;
  records()         a split's feature dicts;
  references()      what a split's predictions are scored against, or its
                    output files written from;
  score()           the dataset's official metrics of a split's
                    predictions, without side effects (finetune.evaluate);
  main_metric       the key of score()'s dict that says which model is best
                    (higher is better), for evaluation during training;
  write_outputs()   the output files of a split's predictions (optional:
                    none by default);
  max_seq_length    the records' length, which finetune.run checks against
                    the task's and the config's;
  write_run_files() what a later run of the same output_dir reads back;
  task_settings()   what a model trained on the data is for (the task, its
                    labels), and
  training_settings()  what its training records depend on (the training
                    files, how they are cut): finetune.run records both in
                    output_dir and refuses a later run that would mix
                    another run's model or training into its own.

Each dataset package has its data class: glue.GlueData, conll.ConllData,
squad.SquadData, swag.SwagData. Where a task and its data share more than
max_seq_length, one frozen settings object is given to both
(squad.SquadSettings, conll.ConllSettings, swag.SwagSettings), so that they
cannot disagree.

write_records writes any family's records, padded to full batches with the
one padding row that a record_specs.py layout defines; length_order gives the
order that --dynamic_padding predicts a split in.

It imports neither finetune.py nor tasks/, so that a dataset's data class
can subclass FinetuneData without an import circle.
"""

import abc

import numpy as np
from absl import logging

from bert_tf import io_utils
from bert_tf.records import tfrecord


def padding_record(specs):
    """The record that fills the last batch of a dev or test set: it counts in nothing.

    Args:
      specs: The records' features (record_specs.FeatureSpec objects).

    Returns:
      A feature dict of zeros, is_real_example = 0 included.
    """
    return {spec.name: 0 if spec.shape == (1,) else np.zeros(spec.shape, np.int64).tolist()
            for spec in specs}


def write_records(path, records, specs, pad_to_multiple_of=None):
    """Writes records to one TFRecord file, atomically, padded to full batches.

    A TPU needs every batch full: padding records (is_real_example = 0) fill
    the last batch of a dev or test set, and finetune.predict drops their
    predictions.

    Args:
      path: The output file (local or gs://).
      records: Feature dicts of the specs' layout.
      specs: The features (record_specs.FeatureSpec objects), in writing order.
      pad_to_multiple_of: Add padding records up to a multiple of this.

    Returns:
      The number of records written, padding included.
    """
    records = list(records)
    num_real = len(records)
    if pad_to_multiple_of:
        records += [padding_record(specs)] * (-num_real % pad_to_multiple_of)
    # Through a temporary file, so that a crash never leaves a truncated file
    # under a record file's name.
    with io_utils.atomic_write(path, "wb") as f:
        tfrecord.write_examples(f, records, specs)
    logging.info("Wrote %d records (%d real) to %s", len(records), num_real, path)
    return len(records)


def length_order(records, specs):
    """The records' indices from the shortest to the longest, ties in input order.

    With --dynamic_padding each batch is cut to its longest record, so a dev
    or test set written in this order pads each batch only to lengths its
    neighbours share; finetune.predict puts the predictions back in input
    order.

    Args:
      records: Feature dicts of the specs' layout, with input_mask.
      specs: Their features, record_specs.FeatureSpec objects (input_mask's
        shape: a record of several sequences counts its longest).

    Returns:
      int np.ndarray [len(records)]: the input index of each record, in
      writing order.
    """
    shape = next(spec.shape for spec in specs if spec.name == "input_mask")
    lengths = [np.reshape(record["input_mask"], shape).sum(axis=-1).max() for record in records]
    return np.argsort(np.asarray(lengths, np.int64), kind="stable")


class TrainingData(abc.ABC):
    """A training job's data: what pretraining and fine-tuning ask alike.

    Attributes:
      train_split: The split --do_train reads.
      eval_splits: The splits --do_eval scores, in order.
      max_seq_length: The records' length; None where the data does not say
        (the job then checks nothing of it).
    """

    train_split = "train"
    eval_splits = ("dev",)
    max_seq_length = None

    @abc.abstractmethod
    def read(self, splits):
        """Reads and checks the splits not read yet, so that a bad file fails before training.

        A split already read is not read again: a script may read before
        the job does (run_ner.py's tags come from its training file).

        Args:
          splits: The names of the splits this run needs.
        """

    @abc.abstractmethod
    def describe(self, split):
        """A split's size, for the log ("3668 examples").

        Args:
          split: A split read().

        Returns:
          A string.
        """

    @abc.abstractmethod
    def training_settings(self):
        """What the training records depend on: the files (by
        fingerprints.file_fingerprint) and how they are cut into records.

        A run that goes on training output_dir's model must give the same.
        Only read after read() of the training split.

        Returns:
          A JSON-serializable dict.
        """


class FinetuneData(TrainingData):
    """One fine-tuning run's data; see the module docstring for the protocol.

    Attributes:
      predict_splits: The splits --do_predict writes output files of.
      eval_writes_outputs: Whether --do_eval writes a split's output files
        too, before scoring it (SQuAD's official script scores
        predictions.json).
      flagged_settings: The keys of task_settings() and eval_settings() that
        the script's flag of the same name sets: a run that differs from its
        folder in one is told the flag's value to give.
      (and TrainingData's.)
    """

    predict_splits = ("test",)
    eval_writes_outputs = False
    flagged_settings = ()

    def check_scorable(self, split):
        """Checks, before any work, that an eval split read() can be scored.

        Args:
          split: An eval split read().

        Raises:
          ValueError: naming the file, when it holds nothing to score
            against (by default every read split can be scored).
        """
        del split

    @abc.abstractmethod
    def num_train_examples(self):
        """What one epoch of training counts (examples, windows, ...).

        Returns:
          An int.
        """

    def source(self, split):
        """What a split reads: two splits of one source are predicted once.

        Args:
          split: A split read().

        Returns:
          A hashable; by default the split's name.
        """
        return split

    @abc.abstractmethod
    def records(self, split):
        """A split's records.

        The training split's are the task's training records
        (task.feature_specs()); every other split's are its prediction
        records (task.prediction_feature_specs()), the same ones for most
        tasks.

        Args:
          split: A split read().

        Returns:
          A list of feature dicts.
        """

    @abc.abstractmethod
    def references(self, split):
        """What score() and write_outputs() take for a split, besides its predictions.

        Args:
          split: An eval or predict split read().

        Returns:
          The data's references (e.g. glue.GlueReferences).
        """

    @abc.abstractmethod
    def score(self, predictions, references):
        """The dataset's official metrics of a split's predictions; it writes nothing.

        Args:
          predictions: {name: np.ndarray} of the task's predictions() over
            every real example, in input order (finetune.predict's result).
          references: references()' of the split.

        Returns:
          {metric name: float}.
        """

    @property
    def main_metric(self):
        """The key of score()'s dict by which one model is better than another.

        Higher is better. Evaluation during training keeps the model that
        scores highest on it (best_checkpoint.py).

        Raises:
          NotImplementedError: for data that has none.
        """
        raise NotImplementedError(f"{type(self).__name__} has no main metric")

    def write_outputs(self, predictions, references, output_dir):
        """Writes the output files of a split's predictions; by default none.

        Args:
          predictions: As for score().
          references: references()' of the split that was predicted (its
            labels may be absent: a test set).
          output_dir: The folder to write them in.
        """
        del predictions, references, output_dir  # No output files by default.

    @abc.abstractmethod
    def task_settings(self):
        """What a model trained on this data is for: the task and its labels.

        A later run that resumes, scores or exports output_dir's model must
        give the same: a CoLA model must not be scored as SST-2's.

        Returns:
          A JSON-serializable dict.
        """

    def eval_settings(self):
        """What evaluation during training scores: the first eval split's data (files by
        fingerprints.file_fingerprint).

        The best model and eval_history.tsv hold its scores: a run that goes
        on evaluating output_dir's model during training must give the same,
        or its scores would be compared with another set's best. Only read
        after read() of the eval splits.

        Returns:
          A JSON-serializable dict; by default empty: nothing is checked.
        """
        return {}

    def write_run_files(self, output_dir):
        """Writes what a later run of the same output_dir reads back; by default nothing.

        finetune.run calls it on the chief of a training run.

        Args:
          output_dir: The run's folder.
        """
        del output_dir  # Most data keeps nothing between runs.
