"""An output_dir belongs to one run: a lock, a record of the run's settings, no debris.

- lock(): while a run works in output_dir it holds an advisory lock on
  output_dir/.lock (fcntl.flock). A second run on the same folder refuses
  at once, naming the first one's process, instead of both overwriting
  each other's records and checkpoints. The operating system releases the
  lock when the process ends, however it ends (kill -9 included), so there
  is no stale lock to remove. Folders on remote filesystems (gs://) have no
  lock.
- check_settings(): a run records what defines it in
  output_dir/run_settings.json, in groups: the model's shapes ("model"), the
  training's settings ("training"), what the model is for ("task": the task,
  its labels, the vocab, the casing), what it trained on ("training
  data": the files, by data/fingerprints.py, and how they were cut) and
  what its evaluations during training scored ("eval data"). A later run
  in the same folder that resumes, or scores or exports the folder's model,
  must have the same settings in every group it depends on, and otherwise is
  refused, saying what differs (led by the flags to give, where flags
  differ), rather than resume another run's model or report its numbers as
  its own. What may change: the data of a final evaluation (not that of
  evaluations during training) and of prediction, their batch sizes and
  lengths, and a longer training
  (num_train_steps, with the warmup that comes with it, may grow).
- remove_debris(): checkpoint writes that a kill -9 cut short leave
  ckpt-N_temp folders behind, and writes of the best model (best_checkpoint.py)
  hidden .best.*.tmp folders; a run removes them before it starts.
"""

import fcntl
import json
import os
import shutil

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.training.best_checkpoint import BEST_DIR

SETTINGS_FILE = "run_settings.json"
LOCK_FILE = ".lock"

# The locks this process holds, by folder: a process that builds a second
# Trainer on the same folder (the notebook, a test) already owns it.
_held = {}


class RunDirError(ValueError):
    """An output_dir that this run must not use; the message says why and what to do."""


def _is_local(path):
    return "://" not in path


def lock(output_dir):
    """Takes the lock on output_dir for the rest of this process, creating the folder.

    Args:
      output_dir: The run's folder.

    Raises:
      RunDirError: another process holds it.
    """
    tf.io.gfile.makedirs(output_dir)
    if not _is_local(output_dir):
        return
    key = os.path.realpath(output_dir)
    if key in _held:
        return
    path = os.path.join(output_dir, LOCK_FILE)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115  (held until exit)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise RunDirError(
            f"{output_dir} is in use by another run (process {holder}); wait for it to "
            "finish, or give another --output_dir") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    _held[key] = handle


def remove_debris(output_dir):
    """Removes the folders of checkpoint writes that were cut short.

    Call it holding the lock: a running writer's folder must not go.

    Args:
      output_dir: The run's folder.
    """
    patterns = ("ckpt-*_temp*", f".{BEST_DIR}.*.tmp")
    debris = [path for pattern in patterns
              for path in tf.io.gfile.glob(os.path.join(output_dir, pattern))]
    for path in debris:
        if tf.io.gfile.isdir(path):
            logging.info("Removing %s, left by an interrupted checkpoint write", path)
            if _is_local(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                tf.io.gfile.rmtree(path)


def read_settings(output_dir):
    """The settings recorded in output_dir/run_settings.json, by group.

    Args:
      output_dir: A run's folder.

    Returns:
      {group: {key: value}}; empty when the folder records none.
    """
    path = os.path.join(output_dir, SETTINGS_FILE)
    if not tf.io.gfile.exists(path):
        return {}
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def run_folder(checkpoint):
    """The run's folder of a training checkpoint, where its run_settings.json is.

    Args:
      checkpoint: A checkpoint prefix a run wrote: output_dir/ckpt-N, or its
        best model's output_dir/best/model (best_checkpoint.py).

    Returns:
      The output_dir.
    """
    folder = os.path.dirname(checkpoint)
    return os.path.dirname(folder) if os.path.basename(folder) == BEST_DIR else folder


def as_flag(key, value):
    """A setting as the flag of the same name gives it: "--labels=a,b", "--do_lower_case=false".

    Args:
      key: The setting's name, which is its flag's.
      value: Its value, as run_settings.json holds it.

    Returns:
      The flag and its value, as a command line writes them; a dict (files
      by their fingerprints) as "path (fingerprint)" each.
    """
    if isinstance(value, bool):
        shown = str(value).lower()
    elif isinstance(value, list | tuple):
        shown = ",".join(str(item) for item in value)
    elif isinstance(value, dict):
        shown = ", ".join(f"{name} ({detail})" for name, detail in value.items())
    else:
        shown = str(value)
    return f"--{key}={shown}"


def _differences(recorded, settings, may_grow):
    """The keys whose setting differs from the record, sorted."""
    differences = []
    for key in sorted(set(recorded) | set(settings)):
        old, new = recorded.get(key), settings.get(key)
        grown = key in may_grow and old is not None and new is not None and new > old
        if old != new and not grown:
            differences.append(key)
    return differences


# How many differences a refusal spells out; the rest are counted.
_SHOWN_DIFFERENCES = 4


def _leaf_differences(old, new, name):
    """[(name, old, new)] of the values that differ, nested dicts followed down to them.

    A model's record holds its whole bert_config and every head weight's
    shape: the line names hidden_size, not both configs whole.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found += _leaf_differences(old.get(key), new.get(key), f"{name}.{key}")
        return found
    return [(name, old, new)]


def _described(recorded, settings, keys):
    """Each key's difference as "key.inner: old there, new now", the first few spelled out."""
    found = []
    for key in keys:
        found += _leaf_differences(recorded.get(key), settings.get(key), key)
    shown = "; ".join(f"{name}: {old!r} there, {new!r} now"
                      for name, old, new in found[:_SHOWN_DIFFERENCES])
    hidden = len(found) - _SHOWN_DIFFERENCES
    return shown + (f"; {hidden} more" if hidden > 0 else "")


def _refusal(output_dir, group, recorded, settings, differences, flags):
    """The one line of a folder whose record differs: led by the flags, where flags differ.

    A setting that follows from a flag (the task's class from
    --problem_type) is named after the flags, in parentheses.
    """
    flagged = [key for key in differences if key in flags and key in recorded
               and key in settings]
    if not flagged:
        return (f"{output_dir} holds a run with other {group} settings ("
                f"{_described(recorded, settings, differences)}): give another --output_dir "
                "to start fresh, or delete that one")
    # The fix is a flag's value: say which, and the folder's.
    now = ", ".join(as_flag(key, settings[key]) for key in flagged)
    there = ", ".join(as_flag(key, recorded[key]) for key in flagged)
    others = [key for key in differences if key not in flagged]
    also = f" (and {_described(recorded, settings, others)})" if others else ""
    return (f"{now}: {output_dir} holds a run with {there}{also}; give "
            f"{'that' if len(flagged) == 1 else 'those'}, or another --output_dir")


def check_settings(output_dir, group, settings, resuming, may_grow=(), flags=()):
    """Checks a group of settings against the record when resuming; records them otherwise.

    Args:
      output_dir: The run's folder.
      group: "model" (what the checkpoints' shapes depend on: checked by
        any run that resumes), "task" (what the model is for: checked by any
        run that uses the folder's model), "training" and "training data"
        (what the training's result depends on: checked by a run that goes
        on training), "eval data" (what a run that evaluates during
        training scores its best model on).
      settings: A JSON-serializable dict.
      resuming: Whether this run continues from the folder's checkpoint; a
        run that starts afresh replaces the group's record.
      may_grow: Keys whose value may be larger now than recorded (a longer
        training); the record then takes the new value.
      flags: Keys that are the name of the flag that sets them: when such
        keys differ, the message leads with the flags' values, now and in
        the folder (as_flag()), since the fix is a flag.

    Raises:
      RunDirError: the folder records other settings for the group, naming
        each difference.
    """
    recorded = read_settings(output_dir)
    # A JSON round trip, so that tuples and lists compare alike.
    settings = json.loads(json.dumps(settings))
    if resuming and group in recorded:
        differences = _differences(recorded[group], settings, may_grow)
        if differences:
            raise RunDirError(_refusal(output_dir, group, recorded[group], settings,
                                       differences, flags))
        if recorded[group] == settings:
            return
    recorded[group] = settings
    with io_utils.atomic_write(os.path.join(output_dir, SETTINGS_FILE), "w") as f:
        json.dump(recorded, f, indent=2, sort_keys=True)
