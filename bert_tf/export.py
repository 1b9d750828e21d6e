"""Exports a trained task as a SavedModel that takes raw text.

The task builds the module (Task.serving_module): it tokenizes in the graph
(text_ops.BertTextTokenizer, which gives the same ids as the Python
FullTokenizer), runs the encoder and the heads, and returns the task's
answer. A user needs nothing but TensorFlow and tensorflow_text to serve it:

  import tensorflow as tf, tensorflow_text  # registers the text ops
  model = tf.saved_model.load(export_dir)
  model.signatures["serving_default"](text_a=tf.constant(["Nice movie!"]))

Each task's signatures are listed in its serving module's docstring (for
classification: tasks/classification.py's ClassificationServingModule).
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf import io_utils, precision

keras = tf.keras

# What an export says about itself: its task, shapes, precision and signatures.
INFO_FILE = os.path.join("assets.extra", "bert_tf_export.json")


class ExportError(ValueError):
    """A folder that is not the export a tool needs; the message says what to use."""


def save_model(export_dir, module, signatures, info=None):
    """Writes a SavedModel, so that a failed export leaves no folder that looks like one.

    It is written to a temporary folder beside export_dir and renamed: on
    failure the temporary folder is removed, and an earlier export_dir is
    left as it was.

    Args:
      export_dir: Destination folder; replaced if it exists.
      module: The tf.Module to save (a task's serving_module()).
      signatures: {name: tf.function} to serve.
      info: Optional JSON-able dict, written to assets.extra/bert_tf_export.json
        (the SavedModel folder's place for files that serving does not load).

    Returns:
      export_dir.
    """
    with io_utils.atomic_directory(export_dir) as tmp:
        tf.saved_model.save(module, tmp, signatures=signatures)
        if info is not None:
            os.makedirs(os.path.join(tmp, "assets.extra"))
            with open(os.path.join(tmp, INFO_FILE), "w", encoding="utf-8") as f:
                json.dump(info, f, indent=2, sort_keys=True)
    logging.info("Exported a raw-text SavedModel to %s", export_dir)
    return export_dir


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


def _signature_info(signatures):
    """{name: {"inputs": [...], "input_shapes": {...}, "outputs": {name: dtype}}} of the
    signatures to save; an input's unknown dimensions (the batch) are None."""
    described = {}
    for name, function in signatures.items():
        concrete = function.get_concrete_function()
        outputs = concrete.structured_outputs
        inputs = concrete.structured_input_signature[0]
        described[name] = {
            "inputs": [spec.name for spec in inputs],
            "input_shapes": {spec.name: spec.shape.as_list() for spec in inputs},
            "outputs": {key: value.dtype.name for key, value in sorted(outputs.items())},
        }
    return described


def export_task(export_dir, task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                policy="float32", shapes="dynamic"):
    """Exports a trained task's raw-text SavedModel.

    Args:
      export_dir: Destination folder; replaced if it exists.
      task: A tasks.Task with a serving_module.
      encoder: The trained BertModel.
      heads: Its heads.
      vocab_file: The vocab it was trained with.
      do_lower_case: As in training.
      max_seq_length: As in training.
      policy: The Keras dtype policy the SavedModel computes under
        (precision.inference_policy): "mixed_bfloat16" serves in bfloat16
        (faster on CPUs with bfloat16 units, and on TPUs), with the same
        string inputs and float32 outputs.
      shapes: One of serving.SHAPES: "dynamic" runs each batch at its own
        length, XLA-compiled; "static" pads every input to max_seq_length.

    Returns:
      export_dir.
    """
    if policy != encoder.dtype_policy.name:
        encoder, heads = precision.with_policy(task, encoder, heads, policy)
    module, signatures = task.serving_module(encoder, heads, vocab_file, do_lower_case,
                                             max_seq_length, shapes)
    shapes_line = module.model.describe(max_seq_length)
    logging.info("The export computes in %s, with %s", policy, shapes_line)
    info = {"task": type(task).__name__, "serving_tool": task.serving_tool,
            "shapes": shapes, "shapes_description": shapes_line,
            "max_seq_length": max_seq_length, "precision": policy,
            "do_lower_case": do_lower_case, "signatures": _signature_info(signatures)}
    return save_model(export_dir, module, signatures, info)


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

    What predict_text.py, predict_entities.py and predict_choices.py do; they import no
    TensorFlow themselves, so that bert_tf sets up the TPU runtime first
    (tpu_runtime.py). The model is loaded before the first batch is taken,
    and each batch only once the previous one's outputs have been used, so
    that batches may be read lazily (from stdin, as they come).

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
    # training imports this module too, and needs none of tensorflow_text's
    # memory (about 116 MB resident).
    import tensorflow_text  # noqa: F401

    model = tf.saved_model.load(export_dir)
    _check_signature(export_dir, model, signature, input_names)
    function = model.signatures[signature]
    for texts in batches:
        outputs = function(**{name: tf.constant(values, tf.string)
                              for name, values in texts.items()})
        yield texts, {name: value.numpy() for name, value in outputs.items()}
