"""Checkpoint loading and saving in three formats, through one name table.

Formats:
  google: the original repository's TF1 checkpoints (bert_model.ckpt.*),
    variables named like bert/encoder/layer_0/attention/self/query/kernel.
  hf: a Hugging Face folder with config.json and model.safetensors; Linear
    weights are stored [out, in], names with or without the "bert." prefix.
  tf2: bert_tf's own tf.train.Checkpoint files, as training writes them.

Every weight of BertModel and of the heads appears once in WEIGHT_NAMES, with
its name in each format. Loading reads a checkpoint into a {name: array} view,
looks each model weight up by its name in that format, checks shapes, and
reports what it loaded, what it left at its initial value (a new head) and
what it skipped (optimizer slots). A missing encoder weight, a tensor that
maps to nothing, or a shape mismatch is an error that names the variable.
"""

import dataclasses
import fnmatch
import json
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.config import BertConfig, ConfigError

# Names of the top-level objects in a tf2 checkpoint. training.py saves the
# encoder and the heads under these keys, next to "optimizer" and "step".
ENCODER, MLM, NSP, CLASSIFIER = "encoder", "mlm", "nsp", "classifier"

FORMATS = ("google", "hf", "tf2")


@dataclasses.dataclass(frozen=True)
class WeightName:
    """One weight's names across formats.

    Attributes:
      module: Which object holds it: ENCODER, MLM, NSP or CLASSIFIER.
      attr: Attribute path on that object, e.g. "layer_0.attention.query.kernel".
      google: The original TF1 variable name.
      hf: The Hugging Face tensor name, without the "bert." prefix.
      hf_transposed: True where Hugging Face stores the matrix as [out, in].
    """

    module: str
    attr: str
    google: str
    hf: str
    hf_transposed: bool = False

    @property
    def tf2(self):
        """The key tf.train.Checkpoint gives this weight in bert_tf's own files."""
        # Keras 3's Dense keeps its kernel in the attribute `_kernel`.
        path = re.sub(r"\bkernel$", "_kernel", self.attr).replace(".", "/")
        return f"{self.module}/{path}/.ATTRIBUTES/VARIABLE_VALUE"


def _dense(module, attr, google, hf):
    """The kernel and bias of one dense layer."""
    return [
        WeightName(module, f"{attr}.kernel", f"{google}/kernel", f"{hf}.weight", True),
        WeightName(module, f"{attr}.bias", f"{google}/bias", f"{hf}.bias"),
    ]


def _layer_norm(module, attr, google, hf):
    """The scale and offset of one LayerNorm."""
    return [
        WeightName(module, f"{attr}.gamma", f"{google}/gamma", f"{hf}.weight"),
        WeightName(module, f"{attr}.beta", f"{google}/beta", f"{hf}.bias"),
    ]


def _encoder_layer(i):
    """The weights of transformer block i."""
    g, h, a = f"bert/encoder/layer_{i}", f"encoder.layer.{i}", f"layer_{i}"
    return [
        *_dense(ENCODER, f"{a}.attention.query", f"{g}/attention/self/query",
                f"{h}.attention.self.query"),
        *_dense(ENCODER, f"{a}.attention.key", f"{g}/attention/self/key",
                f"{h}.attention.self.key"),
        *_dense(ENCODER, f"{a}.attention.value", f"{g}/attention/self/value",
                f"{h}.attention.self.value"),
        *_dense(ENCODER, f"{a}.attention_output", f"{g}/attention/output/dense",
                f"{h}.attention.output.dense"),
        *_layer_norm(ENCODER, f"{a}.attention_layer_norm", f"{g}/attention/output/LayerNorm",
                     f"{h}.attention.output.LayerNorm"),
        *_dense(ENCODER, f"{a}.intermediate", f"{g}/intermediate/dense",
                f"{h}.intermediate.dense"),
        *_dense(ENCODER, f"{a}.output_dense", f"{g}/output/dense", f"{h}.output.dense"),
        *_layer_norm(ENCODER, f"{a}.output_layer_norm", f"{g}/output/LayerNorm",
                     f"{h}.output.LayerNorm"),
    ]


def weight_names(num_layers):
    """Every weight of BertModel and the heads, with its name in each format.

    Args:
      num_layers: The encoder's num_hidden_layers.

    Returns:
      A list of WeightName.
    """
    names = [
        WeightName(ENCODER, "embeddings.word_embeddings", "bert/embeddings/word_embeddings",
                   "embeddings.word_embeddings.weight"),
        WeightName(ENCODER, "embeddings.token_type_embeddings",
                   "bert/embeddings/token_type_embeddings",
                   "embeddings.token_type_embeddings.weight"),
        WeightName(ENCODER, "embeddings.position_embeddings",
                   "bert/embeddings/position_embeddings",
                   "embeddings.position_embeddings.weight"),
        *_layer_norm(ENCODER, "embeddings.layer_norm", "bert/embeddings/LayerNorm",
                     "embeddings.LayerNorm"),
    ]
    for i in range(num_layers):
        names += _encoder_layer(i)
    names += _dense(ENCODER, "pooler", "bert/pooler/dense", "pooler.dense")
    names += [
        *_dense(MLM, "transform", "cls/predictions/transform/dense",
                "cls.predictions.transform.dense"),
        *_layer_norm(MLM, "layer_norm", "cls/predictions/transform/LayerNorm",
                     "cls.predictions.transform.LayerNorm"),
        WeightName(MLM, "output_bias", "cls/predictions/output_bias", "cls.predictions.bias"),
        # Our output_weights are [2, hidden] like the original's, which is
        # also Hugging Face's [out, in]: no transpose.
        WeightName(NSP, "output_weights", "cls/seq_relationship/output_weights",
                   "cls.seq_relationship.weight"),
        WeightName(NSP, "output_bias", "cls/seq_relationship/output_bias",
                   "cls.seq_relationship.bias"),
        WeightName(CLASSIFIER, "output_weights", "output_weights", "classifier.weight"),
        WeightName(CLASSIFIER, "output_bias", "output_bias", "classifier.bias"),
    ]
    return names


# Tensors a checkpoint may hold that are not model weights: optimizer slots,
# step counters, and Hugging Face's buffers and tied copies.
_IGNORED = {
    "google": ["*/adam_m", "*/adam_v", "*/lamb_m", "*/lamb_v", "global_step"],
    "hf": ["embeddings.position_ids", "cls.predictions.decoder.*"],
    "tf2": ["optimizer/*", "step/*", "save_counter/*", "_CHECKPOINTABLE_OBJECT_GRAPH",
            "*/.OPTIMIZER_SLOT/*"],
}


class CheckpointError(ValueError):
    """A checkpoint that does not fit the model, or cannot be read."""


def resolve_checkpoint_path(path):
    """Finds the checkpoint behind a path that users may give in several forms.

    Args:
      path: A Hugging Face folder, a checkpoint prefix (bert_model.ckpt), or a
        folder holding a TF `checkpoint` state file (training output).

    Returns:
      (format, path): format in FORMATS, path the folder or prefix to read.

    Raises:
      CheckpointError: if nothing readable is there.
    """
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "model.safetensors")):
            return "hf", path
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(
                f"{path}: folder holds neither model.safetensors nor a TF checkpoint")
        path = latest
    if not tf.io.gfile.exists(path + ".index"):
        raise CheckpointError(f"checkpoint not found: {path} (no {path}.index)")
    names = {name for name, _ in tf.train.list_variables(path)}
    return ("tf2" if "_CHECKPOINTABLE_OBJECT_GRAPH" in names else "google"), path


def _read_tensors(fmt, path):
    """Returns {name: callable returning np.ndarray} and {name: shape}.

    Tensors are read lazily so that a large checkpoint is read once, tensor
    by tensor, and unused optimizer slots are never read.
    """
    if fmt == "hf":
        from safetensors import safe_open

        file = os.path.join(path, "model.safetensors")
        handle = safe_open(file, framework="np")
        tensors, shapes = {}, {}
        for raw in handle.keys():
            # Normalize: drop the "bert." prefix of BertFor* models, and the
            # gamma/beta names of older conversions.
            name = raw[len("bert."):] if raw.startswith("bert.") else raw
            name = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", name)
            name = re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name)
            tensors[name] = lambda raw=raw: handle.get_tensor(raw)
            shapes[name] = tuple(handle.get_slice(raw).get_shape())
        return tensors, shapes
    reader = tf.train.load_checkpoint(path)
    shapes = {name: tuple(shape) for name, shape in reader.get_variable_to_shape_map().items()}
    keys = {name: name for name in shapes}
    if fmt == "tf2":
        keys.update(_object_graph_aliases(reader))
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
      skipped: Checkpoint tensors not used: optimizer state, and heads that
        this model does not have.
    """

    format: str
    path: str
    loaded: list
    initialized: list
    skipped: list

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
        return "\n".join(lines)


def _get_attr(obj, attr):
    """Follows a dotted attribute path, e.g. "layer_0.attention.query.kernel"."""
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_weights(path, encoder, heads=None):
    """Loads a checkpoint in any supported format into a model and its heads.

    The encoder must be complete in the checkpoint. Heads are loaded when the
    checkpoint has them and left at their initial values otherwise (reported).
    Checkpoint heads that the caller did not pass are skipped (reported).

    Args:
      path: See resolve_checkpoint_path.
      encoder: A BertModel.
      heads: Optional {MLM: MaskedLMHead, NSP: NextSentenceHead,
        CLASSIFIER: ClassifierHead}, any subset.

    Returns:
      A LoadReport, also written to the log.

    Raises:
      CheckpointError: naming the variable, for a missing encoder weight, an
        unexpected tensor, or a shape mismatch.
    """
    fmt, path = resolve_checkpoint_path(path)
    tensors, shapes = _read_tensors(fmt, path)
    targets = _targets(encoder, heads)
    all_names = weight_names(encoder.config.num_hidden_layers)
    known = {getattr(n, fmt) for n in all_names}

    loaded, initialized, skipped = [], [], []
    for name in all_names:
        key = getattr(name, fmt)
        target = targets[name.module]
        if target is None:
            if key in shapes:
                skipped.append(key)
            continue
        if key not in shapes:
            if name.module == ENCODER:
                raise CheckpointError(
                    f"{path}: missing encoder weight {key!r} ({fmt} format); is "
                    f"num_hidden_layers={encoder.config.num_hidden_layers} right?")
            initialized.append(name.google)
            continue
        variable = _get_attr(target, name.attr)
        value = tensors[key]()
        if fmt == "hf" and name.hf_transposed:
            value = value.T
        if tuple(value.shape) != tuple(variable.shape):
            raise CheckpointError(
                f"{path}: shape mismatch for {key!r}: checkpoint has {tuple(value.shape)}, "
                f"model variable {name.google!r} has {tuple(variable.shape)}")
        variable.assign(value.astype(variable.dtype))
        loaded.append(key)

    for key in sorted(shapes):
        if key in known:
            continue
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in _IGNORED[fmt]):
            skipped.append(key)
            continue
        raise CheckpointError(
            f"{path}: unexpected tensor {key!r} {shapes[key]} maps to no weight of a BERT "
            f"with {encoder.config.num_hidden_layers} layers")

    report = LoadReport(fmt, path, loaded, initialized, skipped)
    logging.info(report.summary())
    return report


def _targets(encoder, heads):
    """{module name: object or None} for every module of the name table."""
    heads = heads or {}
    unknown = set(heads) - {MLM, NSP, CLASSIFIER}
    if unknown:
        raise ValueError(f"unknown head names {sorted(unknown)}; use {MLM}, {NSP}, {CLASSIFIER}")
    return {ENCODER: encoder, MLM: heads.get(MLM), NSP: heads.get(NSP),
            CLASSIFIER: heads.get(CLASSIFIER)}


def _named_values(fmt, encoder, heads):
    """{name in fmt: np.ndarray} for the given model parts, in fmt's layout."""
    targets = _targets(encoder, heads)
    values = {}
    for name in weight_names(encoder.config.num_hidden_layers):
        target = targets[name.module]
        if target is None:
            continue
        value = np.asarray(_get_attr(target, name.attr).numpy())
        if fmt == "hf" and name.hf_transposed:
            value = np.ascontiguousarray(value.T)
        values[getattr(name, fmt)] = value
    return values


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
    # The state file lets tf.train.latest_checkpoint(folder) find it.
    with open(os.path.join(folder, "checkpoint"), "w", encoding="utf-8") as f:
        f.write(f'model_checkpoint_path: "{os.path.basename(prefix)}"\n')
    encoder.config.to_json_file(os.path.join(folder, "bert_config.json"))
    return prefix


def save_hf_folder(folder, encoder, heads=None):
    """Writes a Hugging Face folder: model.safetensors and config.json.

    With any head, encoder names get the "bert." prefix, as BertForPreTraining
    and BertForSequenceClassification save them.

    Args:
      folder: Output folder (created).
      encoder: A BertModel.
      heads: Optional heads to include, as load_weights takes them.

    Returns:
      The folder.
    """
    from safetensors.numpy import save_file

    values = _named_values("hf", encoder, heads)
    if heads:
        head_prefixes = ("cls.", "classifier.")
        values = {(k if k.startswith(head_prefixes) else "bert." + k): v
                  for k, v in values.items()}
    if heads and MLM in heads:
        # HF's decoder is tied to the word embeddings but saved on its own too.
        values["cls.predictions.decoder.bias"] = values["cls.predictions.bias"]
    os.makedirs(folder, exist_ok=True)
    save_file(values, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(encoder.config.to_hf_dict(), f, indent=2, sort_keys=True)
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
    parts = _targets(encoder, heads)
    checkpoint = tf.train.Checkpoint(**{k: v for k, v in parts.items() if v is not None})
    path = checkpoint.write(prefix)
    with open(os.path.join(os.path.dirname(os.path.abspath(prefix)), "checkpoint"), "w",
              encoding="utf-8") as f:
        f.write(f'model_checkpoint_path: "{os.path.basename(path)}"\n')
    encoder.config.to_json_file(
        os.path.join(os.path.dirname(os.path.abspath(prefix)), "bert_config.json"))
    return path


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
    if fmt == "hf":
        return BertConfig.from_json_file(os.path.join(resolved, "config.json"))
    candidate = os.path.join(os.path.dirname(resolved), "bert_config.json")
    if not os.path.exists(candidate):
        raise ConfigError(
            f"no bert_config.json next to {resolved}; pass --bert_config_file")
    return BertConfig.from_json_file(candidate)


def checkpoint_heads(path):
    """Which heads a checkpoint holds, and the classifier's number of labels.

    Args:
      path: A checkpoint path as resolve_checkpoint_path takes it.

    Returns:
      A dict with bool MLM and NSP entries and CLASSIFIER: num_labels or None.
    """
    fmt, resolved = resolve_checkpoint_path(path)
    _, shapes = _read_tensors(fmt, resolved)
    # Each head's output bias tells whether it is there; the classifier's
    # length is its number of labels.
    biases = {n.module: getattr(n, fmt) for n in weight_names(0)
              if n.attr == "output_bias"}
    classifier_bias = shapes.get(biases[CLASSIFIER])
    return {
        MLM: biases[MLM] in shapes,
        NSP: biases[NSP] in shapes,
        CLASSIFIER: classifier_bias[0] if classifier_bias else None,
    }


def convert(input_path, output_path, output_format, bert_config_file=None):
    """Converts a checkpoint between formats, heads included.

    Args:
      input_path: A checkpoint in any format (see resolve_checkpoint_path).
      output_path: A prefix for "google" and "tf2", a folder for "hf".
      output_format: One of FORMATS.
      bert_config_file: The config, when it is not beside the input.

    Returns:
      The LoadReport of reading the input.

    Raises:
      ValueError: for an unknown output format.
    """
    from bert_tf.heads import ClassifierHead, MaskedLMHead, NextSentenceHead
    from bert_tf.modeling import BertModel

    savers = {"google": save_google_checkpoint, "hf": save_hf_folder,
              "tf2": save_tf2_checkpoint}
    if output_format not in savers:
        raise ValueError(f"unknown output format {output_format!r}; known: {', '.join(FORMATS)}")
    config = find_config(input_path, bert_config_file)
    present = checkpoint_heads(input_path)
    encoder = BertModel(config)
    heads = {}
    if present[MLM]:
        heads[MLM] = MaskedLMHead(config, encoder.get_embedding_table())
    if present[NSP]:
        heads[NSP] = NextSentenceHead(config)
    if present[CLASSIFIER]:
        heads[CLASSIFIER] = ClassifierHead(config, present[CLASSIFIER])
    report = load_weights(input_path, encoder, heads)
    savers[output_format](output_path, encoder, heads)
    logging.info("Wrote %s checkpoint %s", output_format, output_path)
    return report
