"""What a training checkpoint holds, where it is written, and how a run resumes.

A checkpoint of a training run holds everything the run needs to go on as
if it had never stopped:
- the encoder and each head, under the keys checkpoints.py reads them by
  (checkpoint_names.WeightName.tf2), and the optimizer with its slots and
  step;
- dropout's random state, which Keras leaves out of the layers' own
  checkpoints: a resumed run must draw the masks an uninterrupted one would;
- the training input's position, shuffle buffer included, so that a resumed
  run reads the batches an uninterrupted one reads. TPUStrategy and
  multi-worker training cannot save an input position: there a resumed run
  reads its input from the start again.

Checkpoints saved before the dropout state or the input position existed
still resume: what they lack starts afresh, and the log says so.

Under MultiWorkerMirroredStrategy every worker must take part in a save,
but two writers of one directory corrupt each other's files: only the chief
writes to output_dir; the others save to a throwaway directory of their own
(created by open(), deleted by close()) and resume from the chief's.
"""

import os
import shutil
import tempfile

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.checkpoint_names import ENCODER
from bert_tf.runtime import distribution

# The checkpoint keys of the two parts that are not weights.
DROPOUT_SEEDS = "dropout_seeds"
TRAIN_INPUT = "train_input"


def holds(checkpoint_path, key):
    """Whether a checkpoint saved an object under key (older ones lack some).

    Args:
      checkpoint_path: A checkpoint prefix, e.g. output_dir/ckpt-100.
      key: A top-level checkpoint key, e.g. DROPOUT_SEEDS.

    Returns:
      A bool.
    """
    prefix = key + "/"
    return any(name.startswith(prefix) for name, _ in tf.train.list_variables(checkpoint_path))


def dropout_seeds(models):
    """The variables that hold dropout's random state in these Keras models."""
    return [variable for model in models for variable in model.variables
            if variable.path.endswith("seed_generator_state")]


class TrainingCheckpoints:
    """Saves and restores one training run's state in its output_dir.

    Typical use (training_loop.Trainer):
      checkpoints = TrainingCheckpoints(strategy, output_dir, 5, encoder, heads, optimizer)
      checkpoints.restore_latest()          # None on a new run
      checkpoints.open()
      iterator = checkpoints.track_input(iter(distributed_dataset))
      ...
      checkpoints.save(step)
      checkpoints.close()
    """

    def __init__(self, strategy, output_dir, keep_checkpoint_max, encoder, heads, optimizer):
        """Builds the checkpoint of the model and optimizer, and where it is saved.

        Args:
          strategy: The run's strategy; decides who writes to output_dir.
          output_dir: The run's folder.
          keep_checkpoint_max: How many checkpoints to keep.
          encoder: The BertModel.
          heads: {checkpoint key: head model}.
          optimizer: The Keras optimizer, built.
        """
        self.output_dir = output_dir
        self.is_chief = distribution.is_chief(strategy)
        self._saves_input = not isinstance(
            strategy, (tf.distribute.TPUStrategy, tf.distribute.MultiWorkerMirroredStrategy))
        self._checkpoint = tf.train.Checkpoint(**{ENCODER: encoder}, optimizer=optimizer,
                                               **heads)
        self._dropout_seeds = dropout_seeds([encoder, *heads.values()])
        if self.is_chief:
            self._scratch_dir = None
            self.manager = tf.train.CheckpointManager(
                self._checkpoint, output_dir, max_to_keep=keep_checkpoint_max)
        else:
            self._scratch_dir = os.path.join(
                tempfile.gettempdir(),
                f"bert_tf_{distribution.task_name(strategy)}_{os.getpid()}")
            self.manager = tf.train.CheckpointManager(
                self._checkpoint, self._scratch_dir, max_to_keep=1)

    def latest(self):
        """The newest checkpoint in output_dir (the chief's), or None."""
        return tf.train.latest_checkpoint(self.output_dir)

    def restore_latest(self):
        """Restores the model, the optimizer and dropout's state from the newest checkpoint.

        Every worker restores the chief's, so that all start from the same
        state. The input position is restored by track_input(), once the
        input exists.

        Returns:
          The checkpoint path restored, or None when output_dir has none.
        """
        latest = self.latest()
        if latest is None:
            return None
        # The input position is restored apart: expect_partial() keeps
        # TensorFlow quiet about it here.
        status = self._checkpoint.restore(latest)
        status.assert_existing_objects_matched().expect_partial()
        if holds(latest, DROPOUT_SEEDS):
            tf.train.Checkpoint(**{DROPOUT_SEEDS: self._dropout_seeds}).restore(
                latest).expect_partial()
        return latest

    def open(self):
        """Adds dropout's state to what is saved, and makes a worker's scratch folder.

        Called when training starts, after restore_latest(): a checkpoint
        written before training (there is none) needs no dropout state.
        """
        if not hasattr(self._checkpoint, DROPOUT_SEEDS):
            setattr(self._checkpoint, DROPOUT_SEEDS, self._dropout_seeds)
        if self._scratch_dir is not None:
            os.makedirs(self._scratch_dir, exist_ok=True)

    def track_input(self, iterator):
        """Saves the training input's position from now on, and restores it when saved.

        TPUStrategy and multi-worker iterators cannot be saved: there the
        input is not tracked.

        Args:
          iterator: The distributed iterator over the training input.

        Returns:
          The iterator, at the saved position where there is one.
        """
        if not self._saves_input:
            return iterator
        setattr(self._checkpoint, TRAIN_INPUT, iterator)
        latest = self.latest()
        if latest and holds(latest, TRAIN_INPUT):
            tf.train.Checkpoint(**{TRAIN_INPUT: iterator}).restore(latest).expect_partial()
            logging.info("The training input goes on where %s left it.", latest)
        elif latest:
            logging.info("%s holds no input position: the training input restarts.", latest)
        return iterator

    def save(self, step):
        """Saves a checkpoint numbered step (on the chief, in output_dir)."""
        self.manager.save(checkpoint_number=step)

    def close(self):
        """Deletes a worker's scratch folder; the chief's checkpoints stay."""
        if self._scratch_dir is not None:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)

    def resume_note(self, step):
        """Where a training interrupted at step stopped, and where the same command goes on."""
        latest = self.latest()
        if latest is None:
            return (f"at step {step}, before the first checkpoint: the same command starts "
                    "again")
        return (f"at step {step}; the last checkpoint, {latest}, is at step "
                f"{latest.rsplit('-', 1)[1]}: the same command resumes from there")
