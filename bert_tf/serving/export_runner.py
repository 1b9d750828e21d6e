"""Reads back and runs the raw-text SavedModels that export.py writes.

The tools that serve an export (predict_text.py, predict_entities.py,
predict_choices.py) check that a folder holds an export of their task
(check_task, from the info file an export carries: read_info) and that
they give no input its model was not trained on (check_trained_inputs,
from its serving_default signature), then run one
of its signatures batch by batch (run_batches: load_signature, then
run_loaded, which runs a window of batches in order of length). They import
no TensorFlow themselves, so that bert_tf sets up the TPU runtime first
(tpu_runtime.py).
"""

import itertools
import json
import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

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
        # The export names the tool that serves it (its serving module's TOOL).
        tool = info.get("serving_tool")
        advice = (f"use {tool}" if tool else
                  "call its signatures from Python (see its serving module's docstring)")
        raise ExportError(f"{export_dir} holds a {exported} model, not a {task} one: {advice}")


def trained_inputs(export_dir):
    """The inputs an export's model was trained on: its serving_default signature's.

    An export serves by default what its task was trained on (a sentence
    pair classifier's "pair", a single-sentence one's "single"). Read from
    saved_model.pb, without loading the model, so that it holds for every
    export, those from before the info file too.

    Args:
      export_dir: A SavedModel folder.

    Returns:
      The sorted input names, or None without saved_model.pb or a
      serving_default signature.
    """
    path = os.path.join(export_dir, "saved_model.pb")
    if not tf.io.gfile.exists(path):
        return None
    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as f:
        saved_model.ParseFromString(f.read())
    signatures = saved_model.meta_graphs[0].signature_def
    if "serving_default" not in signatures:
        return None
    return sorted(signatures["serving_default"].inputs)


def check_trained_inputs(export_dir, input_names, fix):
    """Refuses to give an export an input its model was not trained on, before it is loaded.

    A single-sentence classifier's export also has a "pair" signature,
    which joins the two texts as segments its model never saw: it would
    answer, and answer nonsense.

    Args:
      export_dir: The SavedModel folder.
      input_names: The inputs the tool gives.
      fix: What the user does instead, for the message ("drop --pair").

    Raises:
      ExportError: naming the folder, what it was trained on, and fix.
    """
    trained = trained_inputs(export_dir)
    extra = sorted(set(input_names) - set(trained)) if trained is not None else []
    if extra:
        raise ExportError(f"{export_dir} was trained on {', '.join(trained)} alone (its "
                          f"serving_default signature), not on {', '.join(extra)} too: {fix}")


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


def load_signature(export_dir, signature, task, input_names):
    """Loads a raw-text SavedModel and returns one of its signatures, checked.

    Args:
      export_dir: The SavedModel folder.
      signature: The signature's name ("single", "pair", "serving_default").
      task: The task class's name the caller serves (check_task).
      input_names: The signature's inputs the caller gives.

    Returns:
      The signature's concrete function, for run_loaded.

    Raises:
      ExportError: export_dir is not an export of the task, or lacks the
        signature.
    """
    check_task(export_dir, task)
    # Registers the text ops the SavedModel tokenizes with. Imported here:
    # training imports this module too (export.py takes INFO_FILE from it),
    # and needs none of tensorflow_text's memory (about 116 MB resident).
    import tensorflow_text  # noqa: F401

    model = tf.saved_model.load(export_dir)
    _check_signature(export_dir, model, signature, input_names)
    return model.signatures[signature]


def run_batches(export_dir, signature, batches, task, input_names, sort_window=1):
    """Loads a raw-text SavedModel once and runs one of its signatures on each batch.

    What predict_text.py, predict_entities.py and predict_choices.py do:
    load_signature, then run_loaded. The model is loaded before the first
    batch is taken.

    Args:
      export_dir, signature, task, input_names: As load_signature takes them.
      batches, sort_window: As run_loaded takes them.

    Yields:
      run_loaded's (inputs, outputs) for each batch, in input order.

    Raises:
      ExportError: As load_signature, before any batch is read.
    """
    function = load_signature(export_dir, signature, task, input_names)
    yield from run_loaded(function, batches, sort_window)


def run_loaded(function, batches, sort_window=1):
    """Runs a loaded signature on each batch, sort_window batches at a time.

    Batches are read only sort_window at a time, so that they may be read
    lazily (from stdin, as they come). With sort_window > 1, the inputs of
    sort_window batches are run in order of their length (in characters,
    which word pieces follow closely), in batches of the same size, and their
    outputs handed back in input order. A dynamic-shape export pads each
    batch to its longest input, so that inputs of like length in one batch
    cost what their own tokens cost, not the longest of a random batch's.

    Args:
      function: load_signature's concrete function.
      batches: An iterable of the signature's inputs: {input name: list of
        str}, the lists of one batch the same length (an input of more
        dimensions, such as multiple choice's endings, a list of lists).
      sort_window: How many batches to read ahead and run in order of length;
        1 runs each batch as it comes.

    Yields:
      (inputs, outputs) for each batch in input order: the batch as given,
      and {output name: a list with each input's value, a numpy array}.
    """
    batches = iter(batches)
    while window := list(itertools.islice(batches, sort_window)):
        yield from _run_in_length_order(function, window)


def _run_in_length_order(function, window):
    """Runs a window of batches, longest inputs together; yields them in input order.

    Args:
      function: The signature's concrete function.
      window: A list of batches, as run_batches takes them.

    Yields:
      (batch, {output name: list of each input's value}) for each batch of window.
    """
    names = list(window[0])
    sizes = [len(batch[names[0]]) for batch in window]
    # One entry per input: {input name: its str (or list of str)}.
    inputs = [{name: batch[name][i] for name in names}
              for batch, size in zip(window, sizes, strict=True) for i in range(size)]
    order = sorted(range(len(inputs)), key=lambda i: _length(inputs[i]))
    results = [None] * len(inputs)
    batch_size = max(sizes)
    for start in range(0, len(order), batch_size):
        chosen = order[start:start + batch_size]
        outputs = function(**{name: tf.constant([inputs[i][name] for i in chosen], tf.string)
                              for name in names})
        outputs = {name: value.numpy() for name, value in outputs.items()}
        for row, i in enumerate(chosen):
            results[i] = {name: value[row] for name, value in outputs.items()}
    start = 0
    for batch, size in zip(window, sizes, strict=True):
        rows = results[start:start + size]
        yield batch, {name: [row[name] for row in rows] for name in rows[0]}
        start += size


def _length(texts):
    """An input's length in characters: the sum over its texts (and lists of texts)."""
    return sum(len(text) if isinstance(text, str) else sum(map(len, text))
               for text in texts.values())
