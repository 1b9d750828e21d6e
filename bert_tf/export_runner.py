"""Reads back and runs the raw-text SavedModels that export.py writes.

The tools that serve an export (predict_text.py, predict_entities.py,
predict_choices.py) check that a folder holds an export of their task
(check_task, from the info file an export carries: read_info), then run one
of its signatures batch by batch (run_batches). They import no TensorFlow
themselves, so that bert_tf sets up the TPU runtime first (tpu_runtime.py).
"""

import json
import os

import tensorflow as tf

# What an export says about itself: its task, shapes, precision and signatures.
INFO_FILE = os.path.join("assets.extra", "bert_tf_export.json")


class ExportError(ValueError):
    """A folder that is not the export a tool needs; the message says what to use."""


def read_info(export_dir):
    """The bert_tf_export.json of an export: its shapes, precision and signatures.

    Args:
      export_dir: A SavedModel folder that export_task wrote.

    Returns:
      The dict, or None for a SavedModel without one (bert_tf before it, or
      another exporter).
    """
    path = os.path.join(export_dir, INFO_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_task(export_dir, task):
    """Refuses a folder that is not a SavedModel of the task, before it is loaded.

    Args:
      export_dir: The folder a tool was given.
      task: The task class's name the tool serves, e.g. "TaggingTask".

    Raises:
      ExportError: no SavedModel there, or one of another task (its info
        file says which), naming the tool that serves it.
    """
    if not tf.io.gfile.exists(os.path.join(export_dir, "saved_model.pb")):
        raise ExportError(f"{export_dir} is not a SavedModel folder (no saved_model.pb): give "
                          "the folder that a training script's --export_dir wrote")
    info = read_info(export_dir) or {}
    exported = info.get("task")
    if exported is not None and exported != task:
        # The export names the tool that serves it (Task.serving_tool).
        tool = info.get("serving_tool")
        advice = (f"use {tool}" if tool else
                  "call its signatures from Python (see its serving module's docstring)")
        raise ExportError(f"{export_dir} holds a {exported} model, not a {task} one: {advice}")


def _check_signature(export_dir, model, signature, inputs):
    """Refuses a SavedModel without the signature, or whose signature takes other inputs.

    For exports without a task in their info file (bert_tf's earlier ones,
    other exporters): check_task cannot tell their kind, their signatures can.
    """
    if signature not in model.signatures:
        raise ExportError(f"{export_dir} has no {signature!r} signature (it has "
                          f"{', '.join(sorted(model.signatures)) or 'none'}): it is not the "
                          "export this tool serves")
    expected = sorted(model.signatures[signature].structured_input_signature[1])
    if sorted(inputs) != expected:
        raise ExportError(f"{export_dir}: its {signature!r} signature takes "
                          f"{', '.join(expected)}, not {', '.join(sorted(inputs))}: it is not "
                          "the export this tool serves")


def run_batches(export_dir, signature, batches, task, input_names):
    """Loads a raw-text SavedModel once and runs one of its signatures on each batch.

    What predict_text.py, predict_entities.py and predict_choices.py do. The
    model is loaded before the first batch is taken, and each batch only once
    the previous one's outputs have been used, so that batches may be read
    lazily (from stdin, as they come).

    Args:
      export_dir: The SavedModel folder.
      signature: The signature's name ("single", "pair", "serving_default").
      batches: An iterable of the signature's inputs: {input name: list of
        str}, the lists of one batch the same length (an input of more
        dimensions, such as multiple choice's endings, a list of lists).
      task: The task class's name the caller serves (check_task).
      input_names: The signature's inputs that the batches give.

    Yields:
      (inputs, outputs) for each batch in order: the batch as given, and
      {output name: numpy array}.

    Raises:
      ExportError: export_dir is not an export of the task, or lacks the
        signature (before any batch is read).
    """
    check_task(export_dir, task)
    # Registers the text ops the SavedModel tokenizes with. Imported here:
    # training imports this module too (export.py takes INFO_FILE from it),
    # and needs none of tensorflow_text's memory (about 116 MB resident).
    import tensorflow_text  # noqa: F401

    model = tf.saved_model.load(export_dir)
    _check_signature(export_dir, model, signature, input_names)
    function = model.signatures[signature]
    for texts in batches:
        outputs = function(**{name: tf.constant(values, tf.string)
                              for name, values in texts.items()})
        yield texts, {name: value.numpy() for name, value in outputs.items()}
