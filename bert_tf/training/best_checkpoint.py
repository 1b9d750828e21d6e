"""Evaluation during training: the dev metric's history, the best model, early stopping.

A fine-tuning run that evaluates during training (finetune.run with
eval_every_steps) scores its dev set every so many steps, and keeps beside
its training checkpoints:
  eval_history.tsv  one row per evaluation: the step, then every metric of
                    the data's score(), by name; rewritten whole after each
                    evaluation, so that a kill leaves the previous complete
                    file, and easy to plot (pandas.read_csv(sep="\\t"));
  best/             the weights (encoder and heads, no optimizer) of the
                    model that scored highest on the data's main metric
                    (FinetuneData.main_metric), and best.json with its step, the
                    metric, its value and every other metric. The folder is
                    replaced whole (io_utils.atomic_directory): a kill leaves
                    the previous best or the new one, never a mixture.
A resumed run reads both back (BestKeeper): the best so far, and the
evaluations since, which early stopping counts, so that a run stopped early
stays stopped when its command runs again.

The best stands for the run's model once every step trained was evaluated:
when the history's last row is at the step of the newest checkpoint
(kept_best()). finetune.run then evaluates, predicts and exports with it. A
run trained on afterwards without evaluating has no best that stands for it,
and the log says so. A best that the history says was kept (an evaluation
has a value of the main metric) but that is missing or damaged is refused
(BestModelError), rather than another model used in its place.
"""

import csv
import dataclasses
import io
import json
import math
import os
import shutil
import tempfile

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.checkpoints.checkpoint_names import ENCODER

BEST_DIR = "best"
BEST_FILE = "best.json"
HISTORY_FILE = "eval_history.tsv"
# The weights' checkpoint prefix in BEST_DIR: model.index, model.data-*.
WEIGHTS = "model"


@dataclasses.dataclass(frozen=True)
class Best:
    """The best model kept so far.

    Attributes:
      step: The training step it was evaluated at.
      metric: The main metric's name.
      value: Its value there.
      path: The weights' checkpoint prefix (output_dir/best/model).
      metrics: Every metric of that evaluation.
    """

    step: int
    metric: str
    value: float
    path: str
    metrics: dict

    def describe(self):
        """E.g. "step 40 (eval_f1 = 0.8123)"."""
        return f"step {self.step} ({self.metric} = {self.value:.4g})"


def read_history(output_dir):
    """The rows of output_dir's eval_history.tsv, oldest first.

    Args:
      output_dir: The run's folder.

    Returns:
      A list of {"step": int, metric: float, ...}; empty without a history.
    """
    path = os.path.join(output_dir, HISTORY_FILE)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [{"step": int(row.pop("step")), **{k: float(v) for k, v in row.items() if v}}
            for row in rows]


def write_history(output_dir, rows):
    """Writes eval_history.tsv whole: a header, then one row per evaluation.

    Args:
      output_dir: The run's folder.
      rows: read_history()'s rows.
    """
    names = sorted({name for row in rows for name in row} - {"step"})
    text = io.StringIO()
    writer = csv.writer(text, delimiter="\t", lineterminator="\n")
    writer.writerow(["step", *names])
    for row in rows:
        writer.writerow([row["step"], *(row.get(name, "") for name in names)])
    with io_utils.atomic_write(os.path.join(output_dir, HISTORY_FILE)) as f:
        f.write(text.getvalue())


class BestModelError(ValueError):
    """A best model that a run's records say it kept, missing or damaged; the message says
    what to do."""


def _damaged(folder, what, output_dir):
    """The BestModelError of a best model that cannot be read."""
    return BestModelError(
        f"{folder} {what}, though {os.path.join(output_dir, HISTORY_FILE)} records the "
        "evaluations it was chosen by: restore it, or delete that history to use the newest "
        "checkpoint instead, or give a new --output_dir")


def _check_none_chosen(output_dir, history, metric):
    """Refuses a folder without a best model whose history says one was chosen.

    Args:
      output_dir: The run's folder, which has no best model.
      history: Its evaluations (read_history()), those that stand.
      metric: The main metric; None: the folder has no history.

    Raises:
      BestModelError: some evaluation has a value of the main metric: a best
        was kept, and is gone.
    """
    # A NaN never wins (BestKeeper.record): a history of NaNs keeps no best.
    if metric is not None and any(not math.isnan(row.get(metric, math.nan)) for row in history):
        raise _damaged(os.path.join(output_dir, BEST_DIR), "is missing", output_dir)


def read_best(output_dir):
    """The best model kept in output_dir/best, or None.

    Args:
      output_dir: The run's folder.

    Returns:
      A Best, or None when no best was kept.

    Raises:
      BestModelError: best.json cannot be read, or the weights it stands
        beside are not there.
    """
    folder = os.path.join(output_dir, BEST_DIR)
    path = os.path.join(folder, BEST_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path) as f:
            record = json.load(f)
        best = Best(record["step"], record["metric"], record["value"],
                    os.path.join(folder, WEIGHTS), record["metrics"])
    except (ValueError, KeyError, TypeError) as error:
        raise _damaged(folder, f"is damaged ({BEST_FILE}: {type(error).__name__}: {error})",
                       output_dir) from None
    if not tf.io.gfile.exists(best.path + ".index"):
        raise _damaged(folder, f"is damaged (no {WEIGHTS}.index)", output_dir)
    return best


def kept_best(output_dir, global_step, metric):
    """The best model that stands for the run in output_dir at global_step, or None.

    It stands for the run when the run was evaluated through its last step:
    the history's last evaluation is at global_step. Otherwise (training went
    on without evaluating, or was cut between evaluations) a best that exists
    is left unused, and the log says so. A run evaluated through its last
    step whose history has a value of the main metric kept a best model: if
    it is gone, using the newest checkpoint instead would score, predict and
    export another model than the run's without a word, so it is refused.

    Args:
      output_dir: The run's folder.
      global_step: The step of the model restored from output_dir.
      metric: The main metric, by which the best was chosen; None for a
        folder without a history.

    Returns:
      A Best, or None.

    Raises:
      BestModelError: the best model the history says was kept is missing
        or damaged.
    """
    best = read_best(output_dir)
    history = read_history(output_dir)
    last = history[-1]["step"] if history else None
    if best is None:
        if last == global_step:
            _check_none_chosen(output_dir, history, metric)
        return None
    if last != global_step:
        logging.warning(
            "%s, the best at %s, is not used: the model was trained to step %d after its "
            "last evaluation (step %s); the newest checkpoint is used", os.path.dirname(best.path),
            best.describe(), global_step, last)
        return None
    return best


def weights_checkpoint(encoder, heads):
    """The tf.train.Checkpoint of a model's weights alone, under the training checkpoints' keys.

    Args:
      encoder: The BertModel.
      heads: {checkpoint key: head model}.

    Returns:
      A tf.train.Checkpoint.
    """
    return tf.train.Checkpoint(**{ENCODER: encoder}, **heads)


def restore(best, encoder, heads):
    """Loads a Best's weights into a model (its optimizer is left as it is).

    Args:
      best: A Best.
      encoder: The BertModel, built.
      heads: Its heads, built.
    """
    weights_checkpoint(encoder, heads).read(best.path).assert_existing_objects_matched()


class BestKeeper:
    """Records each evaluation during training, keeps the best model, and says when to stop.

    Typical use (finetune.run):
      keeper = BestKeeper(output_dir, data.main_metric, patience, trainer.global_step,
                          trainer.is_chief, trainer.encoder, trainer.heads)
      ... after each evaluation at step:
      keeper.record(step, metrics)
      if keeper.should_stop(): ...
    """

    def __init__(self, output_dir, metric, patience, global_step, is_chief, encoder, heads):
        """Reads back what an earlier run on output_dir recorded, up to global_step.

        Evaluations past global_step (after the checkpoint a run resumes
        from) are dropped: their model is gone, and is evaluated again.

        Args:
          output_dir: The run's folder.
          metric: The main metric's name, a key of the data's score().
          patience: Stop after this many evaluations without gain; 0: never.
          global_step: The step the run starts (or resumes) from.
          is_chief: Whether this process writes to output_dir.
          encoder: The BertModel being trained.
          heads: Its heads.

        Raises:
          BestModelError: output_dir's best model is damaged, or missing
            though its history says one was kept.
        """
        self.output_dir = output_dir
        self.metric = metric
        self.patience = patience
        self.is_chief = is_chief
        self._weights = weights_checkpoint(encoder, heads)
        self.history = [row for row in read_history(output_dir) if row["step"] <= global_step]
        best = read_best(output_dir)
        self.best = best if best is not None and best.step <= global_step else None
        if best is None:
            # Training on would choose among later evaluations only.
            _check_none_chosen(output_dir, self.history, metric)
        if self.best is not None:
            logging.info("The best model so far: %s, in %s.", self.best.describe(),
                         os.path.dirname(self.best.path))

    def evaluated(self, step):
        """Whether the model at step was evaluated already."""
        return any(row["step"] == step for row in self.history)

    @property
    def evaluations_without_gain(self):
        """Evaluations since the best's (all of them before a best)."""
        best_step = self.best.step if self.best is not None else -1
        return sum(row["step"] > best_step for row in self.history)

    def should_stop(self):
        """Whether early stopping's patience is spent."""
        return self.patience > 0 and self.evaluations_without_gain >= self.patience

    def record(self, step, metrics):
        """Adds an evaluation to the history; keeps the model when it beats the best.

        Logs one line: the step, the main metric, the best so far.

        Args:
          step: The training step evaluated.
          metrics: The data's score() at step.

        Returns:
          Whether the model at step is the new best.

        Raises:
          ValueError: when metrics lack the main metric.
        """
        if self.metric not in metrics:
            raise ValueError(f"the task's main metric {self.metric} is not among its scores "
                             f"({', '.join(sorted(metrics))})")
        value = float(metrics[self.metric])
        # A NaN never wins; the first real value does. Ties keep the earlier model.
        improved = not math.isnan(value) and (self.best is None or value > self.best.value)
        if improved:
            self._save(Best(step, self.metric, value,
                            os.path.join(self.output_dir, BEST_DIR, WEIGHTS),
                            {k: float(v) for k, v in metrics.items()}))
        self.history.append({"step": step, **{k: float(v) for k, v in metrics.items()}})
        if self.is_chief:
            write_history(self.output_dir, self.history)
        logging.info("eval at step %d: %s = %.4g  (best %s)", step, self.metric, value,
                     self.best.describe() if self.best else "none yet")
        return improved

    def _save(self, best):
        """Writes best/ whole (weights, then best.json); on other workers, to a scratch folder.

        Every worker writes, as every worker saves a training checkpoint
        (training_checkpoints.py); only the chief's copy is kept.
        """
        if not self.is_chief:
            scratch = tempfile.mkdtemp(prefix="bert_tf_best_")
            try:
                self._weights.write(os.path.join(scratch, WEIGHTS))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            self.best = best
            return
        with io_utils.atomic_directory(os.path.dirname(best.path)) as folder:
            self._weights.write(os.path.join(folder, WEIGHTS))
            record = {"step": best.step, "metric": best.metric, "value": best.value,
                      "metrics": best.metrics}
            with tf.io.gfile.GFile(os.path.join(folder, BEST_FILE), "w") as f:
                json.dump(record, f, indent=2, sort_keys=True)
        self.best = best
