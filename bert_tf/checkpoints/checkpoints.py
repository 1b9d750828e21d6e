"""Checkpoint loading, saving and conversion in three formats, and two more ways in and out.

The formats and the encoder's names are in checkpoint_names.py; each head
declares its own (heads.Head.weight_names). Loading reads a checkpoint into a
{name: array} view, looks each weight of the encoder and of the heads it is
given up by its name in that format, checks shapes, and reports what it
loaded, what it left at its initial value (a new head) and what it skipped
(optimizer slots, heads the model does not have). A missing encoder weight,
an encoder tensor that maps to nothing, a head stored only in part, or a
shape mismatch is an error that names the variable.

A TF Hub encoder SavedModel and a keras-hub preset folder (tf_hub.py, keras_hub.py)
load like checkpoints: their weights are read under the names of a format
(google), and convert() writes them (OUTPUT_FORMATS).

This module also reads what goes with a checkpoint: its config, its vocab
and its casing (find_config, find_vocab, find_do_lower_case), each on its
own; model_files.py finds them together and checks that they fit.
"""

import dataclasses
import fnmatch
import json
import os
import re
import shutil

import numpy as np
import safetensors
import tensorflow as tf
from absl import logging
from safetensors import safe_open
from safetensors.numpy import save_file

from bert_tf import io_utils, output_folders
from bert_tf.checkpoints import keras_hub, model_names, tf_hub
from bert_tf.checkpoints.checkpoint_names import (
    ENCODER,
    ENCODER_PREFIXES,
    FORMATS,
    encoder_weight_names,
    weight_variable,
)
from bert_tf.model.config import BertConfig, ConfigError
from bert_tf.model.modeling import BertModel
from bert_tf.text import tokenization

# Tensors a checkpoint may hold that are not model weights: optimizer slots,
# step counters, and Hugging Face's buffers.
# What a training run saves besides the model: optimizer slots and step, and
# in bert_tf's checkpoints also dropout's random state and the input position.
_TRAINING_STATE = {
    "google": ["*/adam_m", "*/adam_v", "*/lamb_m", "*/lamb_v", "global_step"],
    "hf": [],
    "tf2": ["optimizer/*", "step/*", "save_counter/*", "_CHECKPOINTABLE_OBJECT_GRAPH",
            "*/.OPTIMIZER_SLOT/*", "dropout_seeds/*", "train_input/*"],
}
# Tensors that are no weight: Hugging Face's position-id buffer.
_IGNORED = {"google": [], "hf": ["embeddings.position_ids"], "tf2": []}
# Written by the fine-tuning scripts into their output_dir: {"config": the
# task's config.json keys (Task.hf_task_config), "do_lower_case": the casing}, for
# a conversion to Hugging Face's format.
HF_SETTINGS_FILE = "hf_settings.json"


# What convert() writes: the checkpoint formats, a TF Hub encoder and
# preprocessor, and a keras-hub preset.
OUTPUT_FORMATS = (*FORMATS, "tf_hub", "keras_hub")
# The formats whose weights are read under another format's names:
# tf_hub.py and keras_hub.py give an encoder's weights their google names.
_NAMES_OF = {"tf_hub": "google", "keras_hub": "google"}


class CheckpointError(ValueError):
    """A checkpoint that does not fit the model, or cannot be read."""


def _names_of(fmt):
    """The format whose names a checkpoint of format fmt is read under."""
    return _NAMES_OF.get(fmt, fmt)


def resolve_checkpoint_path(path):
    """Finds the checkpoint behind a path that users may give in several forms.

    Args:
      path: A Hugging Face folder, a checkpoint prefix (bert_model.ckpt), a
        folder holding a TF `checkpoint` state file (training output), a
        folder of Google's release layout (bert_model.ckpt.* without a state
        file, as the downloaded zip files hold it), a TF Hub encoder
        SavedModel folder or the folder of a TF Hub output that holds it
        (tf_hub.encoder_folder), or a keras-hub preset folder.

    Returns:
      (format, path): format in FORMATS, "tf_hub" or "keras_hub"; path the
      folder or prefix to read.

    Raises:
      CheckpointError: if nothing readable is there, saying what to give.
    """
    if os.path.isdir(path):
        if any(os.path.exists(os.path.join(path, name))
               for name in (model_names.HF_WEIGHTS, model_names.HF_WEIGHTS_INDEX)):
            return "hf", path
        if tf_hub.encoder_folder(path):
            return "tf_hub", tf_hub.encoder_folder(path)
        if keras_hub.is_preset(path):
            return "keras_hub", path
        missing = keras_hub.missing_preset_files(path)
        if missing:
            raise CheckpointError(f"{path}: a keras-hub preset without {', '.join(missing)}: "
                                  "copy the whole preset folder")
        latest = tf.train.latest_checkpoint(path)
        released = os.path.join(path, "bert_model.ckpt")
        if latest is None and tf.io.gfile.exists(released + ".index"):
            latest = released
        if latest is None:
            raise CheckpointError(
                f"{path}: folder holds neither model.safetensors nor a TF checkpoint")
        path = latest
    if not tf.io.gfile.exists(path + ".index"):
        raise _not_a_checkpoint(path)
    names = {name for name, _ in tf.train.list_variables(path)}
    return ("tf2" if "_CHECKPOINTABLE_OBJECT_GRAPH" in names else "google"), path


def _not_a_checkpoint(path):
    """The CheckpointError for a path that is neither a model folder nor a checkpoint prefix.

    A file of a checkpoint (its .index or .data) names its prefix; another
    file (a vocab.txt, a bert_config.json) is said to be no checkpoint.
    """
    prefix = re.sub(r"\.(index|data-\d{5}-of-\d{5})$", "", path)
    if prefix != path and tf.io.gfile.exists(prefix + ".index"):
        return CheckpointError(f"{path} is one file of the checkpoint {prefix}: give {prefix}")
    if tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path):
        return CheckpointError(
            f"{path} is a file, not a checkpoint: give the model's folder (Google's, Hugging "
            "Face's, a TF Hub encoder or a keras-hub preset) or its checkpoint prefix "
            "(bert_model.ckpt, the name before .index)")
    return CheckpointError(f"checkpoint not found: {path} (no {path}.index)")


# What reading a damaged file raises: a truncated .data file gives an
# IndexError or a DataLossError, a truncated model.safetensors a
# SafetensorError (not a ValueError).
_READ_ERRORS = (IndexError, OSError, tf.errors.OpError, safetensors.SafetensorError)
# What writing a checkpoint raises: a full disk, a folder that cannot be written.
_WRITE_ERRORS = (OSError, tf.errors.OpError, safetensors.SafetensorError)


def _unreadable(path, error):
    """A CheckpointError for a file that cannot be read, naming it."""
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return CheckpointError(f"{path}: cannot be read ({type(error).__name__}: {reason}); "
                           "is it complete? Copy or convert it again")


def _read_tensors(fmt, path):
    """Returns {name: callable returning np.ndarray} and {name: shape}.

    Tensors are read lazily so that a large checkpoint is read once, tensor
    by tensor, and unused optimizer slots are never read.

    Raises:
      CheckpointError: naming the file, if it (or a tensor) cannot be read.
    """
    try:
        tensors, shapes = _open_tensors(fmt, path)
    except _READ_ERRORS as e:
        raise _unreadable(path, e) from None
    except (tf_hub.TFHubError, keras_hub.KerasHubError) as e:
        raise CheckpointError(str(e)) from None

    def checked(read):
        def read_or_fail():
            try:
                return read()
            except _READ_ERRORS as e:
                raise _unreadable(path, e) from None
        return read_or_fail

    return {name: checked(read) for name, read in tensors.items()}, shapes


def _open_tensors(fmt, path):
    """_read_tensors' work, without the error translation."""
    if fmt in ("tf_hub", "keras_hub"):
        values = (tf_hub if fmt == "tf_hub" else keras_hub).read_weights(path)
        return ({name: (lambda value=value: value) for name, value in values.items()},
                {name: value.shape for name, value in values.items()})
    if fmt == "hf":
        try:
            file_names = model_names.hf_weight_files(path)
        except ValueError as e:
            raise CheckpointError(str(e)) from None
        tensors, shapes = {}, {}
        # One file, or the shards of a sharded save, each holding some tensors.
        for file_name in file_names:
            handle = safe_open(os.path.join(path, file_name), framework="np")
            for raw in handle.keys():
                # Normalize: drop the "bert." prefix of BertFor* models, and the
                # gamma/beta names of older conversions.
                name = raw[len("bert."):] if raw.startswith("bert.") else raw
                name = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", name)
                name = re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name)
                tensors[name] = lambda handle=handle, raw=raw: handle.get_tensor(raw)
                shapes[name] = tuple(handle.get_slice(raw).get_shape())
        return tensors, shapes
    reader = tf.train.load_checkpoint(path)
    shapes = {name: tuple(shape) for name, shape in reader.get_variable_to_shape_map().items()}
    keys = {name: name for name in shapes}
    if fmt == "tf2":
        # Only variables: a training checkpoint also holds its input
        # iterator's state, which is no tensor of the model.
        keys.update({name: key for name, key in _object_graph_aliases(reader).items()
                     if key in shapes})
    tensors = {name: (lambda key=key: reader.get_tensor(key)) for name, key in keys.items()}
    return tensors, {name: shapes[key] for name, key in keys.items()}


def _object_graph_aliases(reader):
    """{every object path of a tf2 checkpoint's variable: its stored key}.

    tf.train.Checkpoint stores each variable once, under its shortest path:
    a variable that the optimizer also tracks may be stored under
    "optimizer/_trainable_variables/7/..." rather than "encoder/layer_0/...".
    Walking the object graph recovers every path, so WeightName.tf2 finds it.
    """
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    aliases = {}
    stack = [(0, "", frozenset())]
    while stack:
        node_id, path, ancestors = stack.pop()
        node = graph.nodes[node_id]
        for attribute in node.attributes:
            aliases[f"{path}.ATTRIBUTES/{attribute.name}"] = attribute.checkpoint_key
        for child in node.children:
            if child.node_id not in ancestors:
                stack.append((child.node_id, f"{path}{child.local_name}/",
                              ancestors | {node_id}))
    return aliases


@dataclasses.dataclass
class LoadReport:
    """What a load did, for the log and for tests.

    Attributes:
      format: The checkpoint format, one of FORMATS.
      path: What was read.
      loaded: Model weights set from the checkpoint, by their name there.
      initialized: Model weights the checkpoint lacked, left at their initial
        value (by google name), e.g. a new classifier head.
      skipped: Checkpoint tensors not used: heads that this model does not
        have, and buffers that are no weight.
      training_state: Checkpoint tensors of the training run rather than the
        model (optimizer slots and step, dropout's random state, the input
        position), which a model never loads.
    """

    format: str
    path: str
    loaded: list
    initialized: list
    skipped: list
    training_state: list = dataclasses.field(default_factory=list)

    def summary(self):
        """One paragraph for the log."""
        lines = [f"Loaded {len(self.loaded)} tensors from {self.format} checkpoint {self.path}."]
        if self.initialized:
            lines.append(f"Left at initial values ({len(self.initialized)}): "
                         + ", ".join(self.initialized))
        if self.skipped:
            shown = ", ".join(self.skipped[:10])
            more = f" and {len(self.skipped) - 10} more" if len(self.skipped) > 10 else ""
            lines.append(f"Not used ({len(self.skipped)}): {shown}{more}")
        if self.training_state:
            lines.append(f"Training state, not part of the model ({len(self.training_state)} "
                         "tensors: optimizer, step, dropout and input state): not loaded.")
        return "\n".join(lines)


def _weight_table(encoder, heads):
    """[(WeightName, the object that holds it)] for the encoder and the given heads.

    Args:
      encoder: A BertModel.
      heads: {checkpoint_key: heads.Head}, or None.

    Returns:
      The encoder's weights first, then each head's.

    Raises:
      ValueError: if a head is filed under a key other than its checkpoint_key.
    """
    table = [(name, encoder) for name in encoder_weight_names(encoder.config.num_hidden_layers)]
    for key, head in (heads or {}).items():
        if key != head.checkpoint_key:
            raise ValueError(f"head {type(head).__name__} must be filed under "
                             f"{head.checkpoint_key!r}, not {key!r}")
        table += [(name, head) for name in head.weight_names()]
    return table


def _stored_shapes(path, fmt, head_type, shapes):
    """{attr: shape} of the weights of a head type that a checkpoint holds.

    Args:
      path: The checkpoint, for the message.
      fmt: Its format.
      head_type: A heads.Head class (or instance).
      shapes: {name in fmt: shape} of the checkpoint's tensors.

    Returns:
      An empty dict when the checkpoint has none of the head's weights.

    Raises:
      CheckpointError: if it holds some, but not all, of them: such a head
        would otherwise load in part and start the rest from random values,
        or be dropped by a conversion, either without an error.
    """
    names = head_type.weight_names()
    stored = {n.attr: shapes[getattr(n, fmt)] for n in names if getattr(n, fmt) in shapes}
    if stored and len(stored) < len(names):
        missing = [getattr(n, fmt) for n in names if n.attr not in stored]
        raise CheckpointError(
            f"{path}: the {head_type.checkpoint_key} head is incomplete: it lacks "
            f"{', '.join(repr(k) for k in missing)} ({fmt} format)")
    return stored


def load_weights(path, encoder, heads=None):
    """Loads a checkpoint in any supported format into a model and its heads.

    The encoder must be complete in the checkpoint. A head is loaded when the
    checkpoint has it, and left at its initial values when it has none of it
    (reported). Tensors of heads that the caller did not pass are skipped
    (reported).

    Args:
      path: See resolve_checkpoint_path.
      encoder: A BertModel.
      heads: Optional {checkpoint_key: heads.Head}, e.g. a task's create_heads().

    Returns:
      A LoadReport, also written to the log.

    Raises:
      CheckpointError: naming the variable, for a missing encoder weight, an
        encoder tensor that maps to nothing, a head stored in part, or a shape
        mismatch.
    """
    fmt, path = resolve_checkpoint_path(path)
    tensors, shapes = _read_tensors(fmt, path)
    names = _names_of(fmt)
    table = _weight_table(encoder, heads)
    for head in (heads or {}).values():
        _stored_shapes(path, names, head, shapes)

    loaded, initialized, skipped, training_state = [], [], [], []
    for name, target in table:
        key = getattr(name, names)
        if key not in shapes:
            if name.module == ENCODER:
                raise CheckpointError(
                    f"{path}: missing encoder weight {key!r} ({fmt} format); is "
                    f"num_hidden_layers={encoder.config.num_hidden_layers} right?")
            initialized.append(name.google)
            continue
        variable = weight_variable(target, name.attr)
        value = tensors[key]()
        if fmt == "hf" and name.hf_transposed:
            value = value.T
        if tuple(value.shape) != tuple(variable.shape):
            raise CheckpointError(
                f"{path}: shape mismatch for {key!r}: checkpoint has {tuple(value.shape)}, "
                f"model variable {name.google!r} has {tuple(variable.shape)}")
        variable.assign(value.astype(variable.dtype))
        loaded.append(key)

    known = {getattr(name, names) for name, _ in table}
    for key in sorted(shapes):
        if key in known:
            continue
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in _TRAINING_STATE[names]):
            training_state.append(key)
            continue
        if (any(fnmatch.fnmatchcase(key, pattern) for pattern in _IGNORED[names])
                or not key.startswith(ENCODER_PREFIXES[names])):
            # A head this model does not have, or a buffer.
            skipped.append(key)
            continue
        raise CheckpointError(
            f"{path}: unexpected tensor {key!r} {shapes[key]} maps to no weight of a BERT "
            f"with {encoder.config.num_hidden_layers} layers")

    report = LoadReport(fmt, path, loaded, initialized, skipped, training_state)
    logging.info(report.summary())
    return report


def _named_values(fmt, encoder, heads):
    """{name in fmt: np.ndarray} for the given model parts, in fmt's layout."""
    values = {}
    for name, target in _weight_table(encoder, heads):
        value = np.asarray(weight_variable(target, name.attr).numpy())
        if fmt == "hf" and name.hf_transposed:
            value = np.ascontiguousarray(value.T)
        values[getattr(name, fmt)] = value
    return values


def _write_checkpoint_state(folder, prefix):
    """Writes the `checkpoint` state file, so that tf.train.latest_checkpoint(folder) finds it."""
    with open(os.path.join(folder, "checkpoint"), "w", encoding="utf-8") as f:
        f.write(f'model_checkpoint_path: "{os.path.basename(prefix)}"\n')


def save_google_checkpoint(prefix, encoder, heads=None):
    """Writes an original-style TF1 checkpoint, plus bert_config.json beside it.

    The variable names are exactly the original's, so the original
    repository (and any TF1 code) can read the file.

    Args:
      prefix: Checkpoint prefix, e.g. "out/bert_model.ckpt".
      encoder: A BertModel.
      heads: Optional heads to include, as load_weights takes them.

    Returns:
      The prefix.
    """
    values = _named_values("google", encoder, heads)
    folder = os.path.dirname(os.path.abspath(prefix))
    tf.io.gfile.makedirs(folder)
    names = sorted(values)
    tf.raw_ops.SaveV2(
        prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
        tensors=[tf.constant(values[n]) for n in names])
    _write_checkpoint_state(folder, prefix)
    encoder.config.to_json_file(os.path.join(folder, "bert_config.json"))
    return prefix


def hf_config_json(encoder, heads=None, task_config=None):
    """The config.json of a converted model, naming the transformers class to load.

    Args:
      encoder: The BertModel.
      heads: Its heads, as load_weights takes them.
      task_config: What the run's task said (Task.hf_task_config, from the run's
        HF_SETTINGS_FILE): architectures, labels. Without it the
        architecture follows from the heads (a classifier head is taken as
        sequence classification) and labels are named LABEL_0, LABEL_1, ...

    Returns:
      A dict for config.json.
    """
    heads = heads or {}
    values = encoder.config.to_hf_dict()
    if len(heads) == 1:
        (head,) = heads.values()
        values["architectures"] = [head.hf_architecture]
        num_labels = getattr(head, "num_labels", None)
        if num_labels:
            # transformers' own names for unnamed labels.
            values["id2label"] = {str(i): f"LABEL_{i}" for i in range(num_labels)}
            values["label2id"] = {f"LABEL_{i}": i for i in range(num_labels)}
    elif heads:
        values["architectures"] = ["BertForPreTraining"]
    values.update(task_config or {})
    return values


def save_hf_folder(folder, encoder, heads=None, task_config=None):
    """Writes a Hugging Face folder: model.safetensors and config.json.

    With any head, encoder names get the "bert." prefix, as BertForPreTraining
    and BertForSequenceClassification save them.

    Args:
      folder: Output folder (created).
      encoder: A BertModel.
      heads: Optional heads to include, as load_weights takes them.
      task_config: The task's config.json keys (see hf_config_json).

    Returns:
      The folder.
    """
    values = _named_values("hf", encoder, heads)
    if heads:
        encoder_names = {name.hf for name in
                         encoder_weight_names(encoder.config.num_hidden_layers)}
        values = {("bert." + k if k in encoder_names else k): v for k, v in values.items()}
    for head in (heads or {}).values():
        by_attr = {name.attr: name.hf for name in head.weight_names()}
        for copy, attr in head.hf_copies.items():
            values[copy] = values[by_attr[attr]]
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.safetensors")
    with io_utils.atomic_path(path) as temporary:
        save_file(values, temporary)
        # safetensors creates its file private (0600); give it the mode every
        # other output gets (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
    with io_utils.atomic_write(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config_json(encoder, heads, task_config), f, indent=2, sort_keys=True)
    return folder


def save_tf2_checkpoint(prefix, encoder, heads=None):
    """Writes bert_tf's own checkpoint of the model only (no optimizer).

    Args:
      prefix: Checkpoint prefix, e.g. "out/model".
      encoder: A BertModel.
      heads: Optional heads to include, as load_weights takes them.

    Returns:
      The path written.
    """
    _weight_table(encoder, heads)  # checks the heads' keys
    checkpoint = tf.train.Checkpoint(**{ENCODER: encoder}, **(heads or {}))
    path = checkpoint.write(prefix)
    folder = os.path.dirname(os.path.abspath(prefix))
    _write_checkpoint_state(folder, path)
    encoder.config.to_json_file(os.path.join(folder, "bert_config.json"))
    return path


def _beside(path, file_name):
    """file_name in a checkpoint's folder (an HF or output folder, or a prefix's folder)."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    candidate = os.path.join(folder, file_name)
    return candidate if os.path.exists(candidate) else None


def find_config(path, bert_config_file=None):
    """Finds the BertConfig that goes with a checkpoint.

    Args:
      path: A checkpoint path as resolve_checkpoint_path takes it.
      bert_config_file: An explicit bert_config.json, which wins when given.

    Returns:
      A BertConfig.

    Raises:
      ConfigError: when no config can be found.
    """
    if bert_config_file:
        return BertConfig.from_json_file(bert_config_file)
    fmt, resolved = resolve_checkpoint_path(path)
    try:
        if fmt == "tf_hub":
            return tf_hub.read_config(resolved)
        if fmt == "keras_hub":
            return keras_hub.read_config(resolved)
    except (tf_hub.TFHubError, keras_hub.KerasHubError) as e:
        raise ConfigError(str(e)) from None
    if fmt == "hf":
        return BertConfig.from_json_file(os.path.join(resolved, "config.json"))
    candidate = os.path.join(os.path.dirname(resolved), "bert_config.json")
    if not os.path.exists(candidate):
        raise ConfigError(
            f"no bert_config.json next to {resolved}; pass --bert_config_file")
    return BertConfig.from_json_file(candidate)


def find_vocab(path, vocab_file=None):
    """Finds the vocab.txt that goes with a checkpoint.

    Google's released folders and Hugging Face folders keep vocab.txt beside
    the weights, so users rarely need to name it.

    Args:
      path: A checkpoint path (folder or prefix), or None.
      vocab_file: An explicit vocab file, which wins when given.

    Returns:
      The vocab file's path.

    Raises:
      ConfigError: when none is given and none is beside the checkpoint.
      CheckpointError: when none is given and path is no checkpoint, saying
        what to give.
    """
    if vocab_file:
        return vocab_file
    found = (_interop_vocab(path) or _beside(path, "vocab.txt")) if path else None
    if found is None:
        if path:
            # A path that is no checkpoint at all (a file, a preset in part)
            # is named as such, not as a checkpoint without a vocab.
            resolve_checkpoint_path(path)
        raise ConfigError("--vocab_file is required (no vocab.txt beside --init_checkpoint)")
    return found


def _interop_vocab(path):
    """The vocab inside a TF Hub encoder or a keras-hub preset folder, or None."""
    if tf_hub.encoder_folder(path):
        return tf_hub.vocab_file(tf_hub.encoder_folder(path))
    if keras_hub.is_preset(path):
        return keras_hub.vocab_file(path)
    return None


def find_do_lower_case(path, default):
    """Whether a checkpoint's model is uncased, when its folder records it.

    A Hugging Face folder records the casing in tokenizer_config.json, a TF
    Hub encoder in its do_lower_case variable, a keras-hub preset in
    tokenizer.json, so a cased model needs no extra flag. Callers let a
    flag given on the command line win over this.

    Args:
      path: A checkpoint path, or None.
      default: The answer when nothing is recorded.

    Returns:
      A bool.

    Raises:
      ConfigError: if tokenizer_config.json exists but cannot be read.
    """
    if tf_hub.encoder_folder(path):
        recorded = tf_hub.read_do_lower_case(tf_hub.encoder_folder(path))
        return default if recorded is None else recorded
    if keras_hub.is_preset(path):
        try:
            return keras_hub.read_do_lower_case(path)
        except keras_hub.KerasHubError as e:
            raise ConfigError(str(e)) from None
    found = _beside(path, "tokenizer_config.json") if path else None
    if found is None:
        return default
    try:
        with open(found, encoding="utf-8") as f:
            value = json.load(f).get("do_lower_case")
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {found}: {e}") from None
    if not isinstance(value, bool):
        return default
    logging.info("do_lower_case=%s, from %s", value, found)
    return value


def detect_heads(path, encoder, head_types):
    """Builds the heads that a checkpoint holds, shaped as it stores them.

    Args:
      path: A checkpoint path as resolve_checkpoint_path takes it.
      encoder: The BertModel the heads sit on.
      head_types: The heads.Head classes to look for (heads.head_types()).

    Returns:
      {checkpoint_key: head} for each head type the checkpoint has.

    Raises:
      CheckpointError: for a head stored in part.
    """
    fmt, resolved = resolve_checkpoint_path(path)
    _, shapes = _read_tensors(fmt, resolved)
    found = {}
    for head_type in head_types:
        stored = _stored_shapes(resolved, _names_of(fmt), head_type, shapes)
        if stored:
            found[head_type.checkpoint_key] = head_type.from_shapes(encoder, stored)
    return found


def _read_json(path):
    """A JSON file's contents, or None when path is None."""
    if path is None:
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write_hf_tokenizer_files(input_path, folder, do_lower_case):
    """Writes the tokenizer files transformers' AutoTokenizer reads beside vocab.txt.

    A Hugging Face input's own files are copied. Otherwise they are written
    for BertTokenizer with the run's casing (HF_SETTINGS_FILE), or uncased,
    the default of every script, when the input does not say.
    """
    sources = {name: _beside(input_path, name) for name in
               ("tokenizer_config.json", "special_tokens_map.json", "tokenizer.json")}
    copied = {name: source for name, source in sources.items() if source}
    for name, source in copied.items():
        target = os.path.join(folder, name)
        if os.path.abspath(source) != os.path.abspath(target):
            shutil.copyfile(source, target)
    if "tokenizer_config.json" in copied:
        return
    if do_lower_case is None:
        do_lower_case = True
        logging.info("%s does not say whether its model is cased; the converted tokenizer "
                     "lower-cases (uncased), as every script does by default", input_path)
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
               "cls_token": "[CLS]", "mask_token": "[MASK]"}
    with io_utils.atomic_write(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": do_lower_case,
                   **special}, f, indent=2, sort_keys=True)
    with io_utils.atomic_write(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump(special, f, indent=2, sort_keys=True)


def _export_interop(input_path, output_path, output_format, encoder, heads, vocab_file,
                    do_lower_case, seq_length):
    """convert()'s writing of a TF Hub folder or a keras-hub preset (see convert)."""
    if heads:
        logging.warning("%s holds heads (%s) that a %s output has no place for; only the "
                        "encoder is written", input_path, ", ".join(sorted(heads)),
                        output_format)
    # Each SavedModel, and a preset, replaces a previous one whole once it
    # is complete; a folder that holds anything else is refused, before
    # either SavedModel is written.
    encoder_folder = os.path.join(output_path, tf_hub.ENCODER_FOLDER)
    preprocessor_folder = os.path.join(output_path, tf_hub.PREPROCESSOR_FOLDER)
    folders = ([encoder_folder, preprocessor_folder] if output_format == "tf_hub"
               else [output_path])
    layout = (output_folders.SAVED_MODEL if output_format == "tf_hub"
              else output_folders.KERAS_HUB_PRESET)
    try:
        for folder in folders:
            output_folders.check_replaceable(folder, layout)
        if output_format == "tf_hub":
            with io_utils.atomic_directory(encoder_folder, layout) as staging:
                tf_hub.export_encoder(staging, encoder, vocab_file, do_lower_case)
            with io_utils.atomic_directory(preprocessor_folder, layout) as staging:
                tf_hub.export_preprocessor(staging, vocab_file, do_lower_case, seq_length)
        else:
            with io_utils.atomic_directory(output_path, layout) as staging:
                keras_hub.write_preset(staging, encoder, vocab_file, do_lower_case)
    except (keras_hub.KerasHubError, output_folders.OutputFolderError) as e:
        raise CheckpointError(str(e)) from None
    except _WRITE_ERRORS as e:
        raise CheckpointError(f"cannot write {output_path}: {e}") from None
    logging.info("Wrote %s %s (do_lower_case=%s)", output_format, output_path, do_lower_case)


def convert(input_path, output_path, output_format, head_types, bert_config_file=None,
            vocab_file=None, do_lower_case=None, seq_length=None):
    """Converts a checkpoint between formats, with every head it holds.

    The vocab.txt beside the input, when there is one, is copied beside the
    output, so that the converted folder is complete. To a Hugging Face
    folder go the tokenizer files too, and config.json names the class to
    load and the labels, from the run's HF_SETTINGS_FILE when there is one.
    A TF Hub output is a folder with encoder/ and preprocessor/ SavedModels,
    a keras-hub output a preset folder; both hold the encoder alone (a head
    is left out, with a warning) and its vocab and casing.

    Args:
      input_path: A checkpoint in any format (see resolve_checkpoint_path),
        or a model's name (model_names.local_path).
      output_path: A prefix for "google" and "tf2", a folder for the others.
      output_format: One of OUTPUT_FORMATS.
      head_types: The heads.Head classes to carry over (heads.head_types()).
      bert_config_file: The config, when it is not beside the input.
      vocab_file: The vocab, for tf_hub and keras_hub, when it is not
        beside (or inside) the input.
      do_lower_case: The casing, for tf_hub and keras_hub; None takes the
        input's record (HF_SETTINGS_FILE, tokenizer_config.json, ...), else
        True, the scripts' default.
      seq_length: The TF Hub preprocessor's default sequence length; None
        for TF Hub's 128, or max_position_embeddings when that is less.

    Every file is written to a temporary folder first and moved into place
    at the end, the files that make the output look complete last (a
    checkpoint's .index, config.json): a conversion that fails, on a full
    disk say, leaves nothing that looks like a result.

    Returns:
      The LoadReport of reading the input.

    Raises:
      ValueError: for an unknown output format.
      ConfigError: for a seq_length beyond max_position_embeddings, or a
        tf_hub or keras_hub output without a vocab.
      tokenization.CasingError: a tf_hub or keras_hub output's casing that
        does not fit its vocab (do_lower_case=False with an uncased vocab).
      CheckpointError: the input cannot be read, or the output cannot be
        written (naming it and why).
    """
    savers = {"google": save_google_checkpoint, "hf": save_hf_folder,
              "tf2": save_tf2_checkpoint}
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output format {output_format!r}; known: "
                         f"{', '.join(OUTPUT_FORMATS)}")
    input_path = model_names.local_path(input_path)
    config = find_config(input_path, bert_config_file)
    encoder = BertModel(config)
    heads = detect_heads(input_path, encoder, head_types)
    report = load_weights(input_path, encoder, heads)
    settings = _read_json(_beside(input_path, HF_SETTINGS_FILE)) or {}
    if output_format not in savers:
        if seq_length is None:
            seq_length = min(tf_hub.DEFAULT_SEQ_LENGTH, config.max_position_embeddings)
        config.check_max_seq_length(seq_length)
        if do_lower_case is None:
            do_lower_case = settings.get("do_lower_case")
        try:
            vocab_file = find_vocab(input_path, vocab_file)
        except ConfigError:
            raise ConfigError(f"a {output_format} output holds the vocab: pass --vocab_file "
                              f"(no vocab.txt beside {input_path})") from None
        if do_lower_case is None:
            do_lower_case = find_do_lower_case(input_path, True)
        # The output keeps the casing with the vocab: one that fits it.
        tokenization.check_case_fits_vocab(do_lower_case, tokenization.load_vocab(vocab_file),
                                           vocab_file)
        _export_interop(input_path, output_path, output_format, encoder, heads, vocab_file,
                        do_lower_case, seq_length)
        return report
    is_folder = output_format == "hf"
    folder = output_path if is_folder else os.path.dirname(os.path.abspath(output_path))
    prefix = None if is_folder else os.path.basename(output_path)
    # What makes the output look complete moves in last.
    last = ("config.json",) if is_folder else (f"{prefix}.index",)
    try:
        with io_utils.atomic_files(folder, last) as staging:
            if is_folder:
                save_hf_folder(staging, encoder, heads, settings.get("config"))
            else:
                savers[output_format](os.path.join(staging, prefix), encoder, heads)
            vocab = _interop_vocab(input_path) or _beside(input_path, "vocab.txt")
            if vocab:
                shutil.copyfile(vocab, os.path.join(staging, "vocab.txt"))
            if is_folder:
                casing = settings.get("do_lower_case")
                _write_hf_tokenizer_files(input_path, staging, find_do_lower_case(
                    input_path, None) if casing is None else casing)
    except _WRITE_ERRORS as e:
        raise CheckpointError(f"cannot write {output_path}: {e}") from None
    logging.info("Wrote %s checkpoint %s", output_format, output_path)
    return report
