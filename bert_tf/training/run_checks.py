"""Checks of a run's settings that run_pretraining.py and the fine-tuning scripts share.

Each rule is written here once:

- check_weights_source(): evaluation, prediction and export need weights: a
  checkpoint in output_dir, an init_checkpoint, or training in the same
  run. Scores of random weights are refused unless allow_random_weights
  (--allow_random_weights) asks for them by name.
- check_loaded_heads(): the same rule once the weights are loaded: an
  init_checkpoint that lacked the task's heads (a pretrained encoder) leaves
  them random, which scores nothing either.
- check_learning_rate(): a training run at --learning_rate=0 changes no
  weight, so it is refused.
- warn_warmup(): a warmup longer than the training never reaches the peak
  rate; it is said, with the peak that is reached.
- remove_stale_eval_results(): an eval_results.txt that no longer describes
  the folder's model or predictions is removed, so that it is never read
  beside results it did not score.
"""

import os

import tensorflow as tf
from absl import logging

from bert_tf import messages

EVAL_RESULTS_FILE = "eval_results.txt"
ALLOW_FLAG = "--allow_random_weights"


class RunCheckError(ValueError):
    """Settings that would make a run meaningless; the message names the flags."""


def _actions(do_eval, do_predict, export_dir):
    """The flags that ask for the model's outputs, as a user wrote them."""
    return " and ".join(name for name, given in (("--do_eval", do_eval),
                                                 ("--do_predict", do_predict),
                                                 ("--export_dir", export_dir)) if given)


def has_checkpoint(output_dir):
    """Whether output_dir holds a training checkpoint to resume or score.

    Args:
      output_dir: The run's folder, or None.

    Returns:
      A bool.
    """
    return bool(output_dir and tf.io.gfile.isdir(output_dir)
                and tf.train.latest_checkpoint(output_dir))


def check_weights_source(output_dir, init_checkpoint, do_train, do_eval, do_predict=False,
                         export_dir=None, allow_random_weights=False):
    """Refuses to score, predict or export random weights unless asked to by name.

    Called before any work: the run's weights come from output_dir's
    checkpoint, init_checkpoint, or this run's training.

    Args:
      output_dir: The run's folder.
      init_checkpoint: The initial weights, or None.
      do_train, do_eval, do_predict: The run's actions.
      export_dir: Where a SavedModel is written, or None.
      allow_random_weights: Run on random weights anyway.

    Raises:
      RunCheckError: naming the actions and the flags that would give weights.
    """
    actions = _actions(do_eval, do_predict, export_dir)
    if not actions or do_train or allow_random_weights or init_checkpoint:
        return
    if has_checkpoint(output_dir):
        return
    raise RunCheckError(
        f"{actions} would use random weights: --output_dir={output_dir} holds no checkpoint, "
        f"and there is no --init_checkpoint or --do_train; give one of them, or "
        f"{ALLOW_FLAG} to run on random weights anyway")


def check_loaded_heads(initialized, init_checkpoint, do_train, do_eval, do_predict=False,
                       export_dir=None, allow_random_weights=False):
    """Refuses to use heads that init_checkpoint left at random, without training them.

    Args:
      initialized: The weights the checkpoint lacked (LoadReport.initialized);
        empty when the run resumed from output_dir.
      init_checkpoint: The checkpoint that was loaded.
      do_train, do_eval, do_predict, export_dir, allow_random_weights: As
        check_weights_source().

    Raises:
      RunCheckError: naming the actions, the checkpoint and a missing weight.
    """
    actions = _actions(do_eval, do_predict, export_dir)
    if not actions or not initialized or do_train or allow_random_weights:
        return
    raise RunCheckError(
        f"{actions} would use a random head: --init_checkpoint={init_checkpoint} has no "
        f"{initialized[0]} ({len(initialized)} weights of the task's head are missing: a "
        "pretrained model, not one trained for this task), and --output_dir holds no "
        f"checkpoint; add --do_train, or {ALLOW_FLAG} to run on the random head anyway")


def check_learning_rate(do_train, learning_rate):
    """Refuses training at a learning rate of 0, which changes no weight.

    Args:
      do_train: Whether the run trains.
      learning_rate: --learning_rate.

    Raises:
      RunCheckError: do_train at 0.
    """
    if do_train and learning_rate == 0:
        raise RunCheckError("--learning_rate=0 trains nothing: every update is zero and the "
                            "weights would be saved as they were loaded; give a positive rate")


def warn_warmup(num_train_steps, num_warmup_steps, learning_rate):
    """Warns when the warmup outlasts the training: the rate never reaches its peak.

    Args:
      num_train_steps: --num_train_steps.
      num_warmup_steps: --num_warmup_steps.
      learning_rate: --learning_rate, the peak that warmup climbs to.
    """
    if num_warmup_steps > num_train_steps:
        peak = learning_rate * num_train_steps / num_warmup_steps
        messages.warn(f"--num_warmup_steps={num_warmup_steps} is more than --num_train_steps="
                 f"{num_train_steps}: the learning rate only warms up, and peaks at {peak:.3g} "
                 f"of --learning_rate={learning_rate:g}")


def remove_stale_eval_results(output_dir, model_changes, outputs_change):
    """Removes output_dir's eval_results.txt when this run makes it stale.

    Args:
      output_dir: The run's folder.
      model_changes: Whether this run trains and does not evaluate: the
        results scored an earlier model.
      outputs_change: Whether this run rewrites the predictions the results
        scored, without scoring them (SQuAD's predictions.json).
    """
    path = os.path.join(output_dir, EVAL_RESULTS_FILE)
    if (model_changes or outputs_change) and tf.io.gfile.exists(path):
        logging.warning("Removing %s: it scored %s, which this run replaces without "
                        "evaluating", path,
                        "an earlier model" if model_changes else "earlier predictions")
        tf.io.gfile.remove(path)
