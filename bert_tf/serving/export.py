"""Exports a trained task as a SavedModel that takes raw text.

The task's family builds the module (task_serving.for_task(task).serving_module):
it tokenizes in the graph (text_ops.BertTextTokenizer, which gives the same
ids as the Python FullTokenizer), runs the encoder and the heads, and
returns the task's answer. A user needs nothing but TensorFlow and tensorflow_text to serve it:

  import tensorflow as tf, tensorflow_text  # registers the text ops
  model = tf.saved_model.load(export_dir)
  model.signatures["serving_default"](text_a=tf.constant(["Nice movie!"]))

Each task's signatures are listed in its serving module's docstring (for
classification: serving/classification.py's ClassificationServingModule).
export_runner.py reads an export back and runs it, for the tools that serve
one (predict_text.py, ...).
"""

import contextlib
import json
import os

import tensorflow as tf
from absl import logging

from bert_tf import io_utils, output_folders
from bert_tf.model import recompute
from bert_tf.runtime import precision
from bert_tf.serving import task_serving
from bert_tf.serving.export_runner import INFO_FILE

keras = tf.keras

# What tf.saved_model.save logs of each signature whose traced graph takes
# inputs named with characters a SignatureDef does not allow.
_RENAMED_INPUTS = "Function `%s` contains input name(s)"


def _not_renamed_inputs_line(record):
    """Whether a log record is any line but tf.saved_model.save's on renamed inputs."""
    return not (isinstance(record.msg, str) and record.msg.startswith(_RENAMED_INPUTS))


@contextlib.contextmanager
def _without_renamed_inputs_lines():
    """Drops tf.saved_model.save's lines on renamed inputs while a SavedModel is written.

    The inputs it names are not the signatures' (text_a, question, ...,
    which keep their names) but the model's weights, which each traced
    signature captures as inputs named by number: the line is 1,000
    characters of numbers on every export, saying nothing true of what a
    user calls, and nothing is wrong.
    """
    absl_logger = logging.get_absl_logger()
    absl_logger.addFilter(_not_renamed_inputs_line)
    try:
        yield
    finally:
        absl_logger.removeFilter(_not_renamed_inputs_line)


def save_model(export_dir, module, signatures, info=None):
    """Writes a SavedModel, so that a failed export leaves no folder that looks like one.

    It is written to a temporary folder beside export_dir and renamed: on
    failure the temporary folder is removed, and an earlier export_dir is
    left as it was.

    Args:
      export_dir: Destination folder: missing, empty or an earlier SavedModel,
        which is replaced (output_folders.py).
      module: The tf.Module to save (a family's serving_module()).
      signatures: {name: tf.function} to serve.
      info: Optional JSON-able dict, written to assets.extra/bert_tf_export.json
        (the SavedModel folder's place for files that serving does not load).

    Returns:
      export_dir.

    Raises:
      output_folders.OutputFolderError: export_dir holds files that are no
        part of a SavedModel; nothing is written.
    """
    # The signatures serve inference alone: traced without the custom gradients'
    # marks, which a SavedModel cannot keep whole (recompute.py).
    with (recompute.forward_only(), _without_renamed_inputs_lines(),
          io_utils.atomic_directory(export_dir, output_folders.SAVED_MODEL) as tmp):
        tf.saved_model.save(module, tmp, signatures=signatures)
        if info is not None:
            os.makedirs(os.path.join(tmp, "assets.extra"))
            with open(os.path.join(tmp, INFO_FILE), "w", encoding="utf-8") as f:
                json.dump(info, f, indent=2, sort_keys=True)
    logging.info("Exported a raw-text SavedModel to %s", export_dir)
    return export_dir


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
                policy="float32", shapes="dynamic", jit_compile=False):
    """Exports a trained task's raw-text SavedModel.

    Args:
      export_dir: Destination folder: missing, empty or an earlier SavedModel,
        which is replaced (save_model).
      task: A tasks.Task with a raw-text export (task_serving.SERVING_MODULES).
      encoder: The trained BertModel.
      heads: Its heads.
      vocab_file: The vocab it was trained with.
      do_lower_case: As in training.
      max_seq_length: As in training.
      policy: The Keras dtype policy the SavedModel computes under
        (precision.inference_policy): "mixed_bfloat16" serves in bfloat16
        (faster on CPUs with bfloat16 units, and on TPUs), with the same
        string inputs and float32 outputs.
      shapes: One of served_model.SHAPES: "dynamic" runs each batch at its own
        length; "static" pads every input to max_seq_length.
      jit_compile: Run the encoder and heads XLA-compiled, once per input
        shape (served_model.py says when that pays).

    Returns:
      export_dir.

    Raises:
      NotImplementedError: for a task without a raw-text export.
      output_folders.OutputFolderError: export_dir holds files that are no
        part of a SavedModel; nothing is written.
    """
    family = task_serving.for_task(task)
    encoder, heads = precision.with_policy(task, encoder, heads, policy)
    module, signatures = family.serving_module(task, encoder, heads, vocab_file, do_lower_case,
                                               max_seq_length, shapes, jit_compile)
    shapes_line = module.model.describe(max_seq_length)
    logging.info("The export computes in %s, with %s", policy, shapes_line)
    with recompute.forward_only():
        # The first trace of each signature, which save_model reuses.
        described = _signature_info(signatures)
    info = {"task": type(task).__name__, "serving_tool": family.TOOL,
            "shapes": shapes, "shapes_description": shapes_line, "jit_compile": jit_compile,
            "max_seq_length": max_seq_length, "precision": policy,
            "do_lower_case": do_lower_case, "signatures": described,
            # Classification's and multi-label's: the names of the
            # probabilities' columns, in order (None for regression and tasks
            # without them).
            "labels": getattr(task, "label_list", None)}
    return save_model(export_dir, module, signatures, info)
