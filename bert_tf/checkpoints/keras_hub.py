"""keras-hub presets: a BertModel written as a BertBackbone preset folder, and read back.

A preset folder, as keras-hub's own save_to_preset writes it:
  config.json          the BertBackbone's config: vocabulary_size, num_layers,
                       num_heads, hidden_dim, intermediate_dim, dropout,
                       max_sequence_length, num_segments
  model.weights.h5     its weights
  tokenizer.json       the BertTokenizer's config (lowercase, ...)
  assets/tokenizer/vocabulary.txt
  metadata.json        keras and keras-hub versions

Weights cross by building the BertBackbone and copying its variables one by
one, so keras-hub itself writes and reads its file. BertBackbone is the
original's architecture with the tanh GELU (bert_config.json's "gelu"),
one dropout rate for all, and a truncated-normal initializer of stddev
0.02; the attention's query, key, value and output kernels are kept split
by head, [hidden, heads, head_size] and [heads, head_size, hidden], which
are reshapes of bert_tf's [hidden, hidden] (checkpoint_names.merge_heads). A model with another
activation (a Hugging Face model's exact GELU) is written with a warning:
keras-hub then computes slightly different outputs, as its own converter
of Hugging Face's BERT does.

The tokenizer's `lowercase` is do_lower_case; uncased models also strip
accents (`strip_accents`), as BERT's uncased tokenizer does.

keras-hub is needed to write a preset and to read its weights, not to read
its config, vocab and casing. It is imported on first use.
"""

import importlib
import json
import os

from absl import logging

from bert_tf.checkpoints.checkpoint_names import encoder_weight_names, merge_heads, weight_variable
from bert_tf.model.config import BertConfig

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "metadata.json"
VOCAB_FILE = os.path.join("assets", "tokenizer", "vocabulary.txt")
BACKBONE_CLASS = "BertBackbone"


class KerasHubError(ValueError):
    """A preset that bert_tf cannot read or write; names the folder or the reason."""


def _keras_hub():
    """The keras_hub package, or a KerasHubError that says how to install it."""
    try:
        return importlib.import_module("keras_hub")
    except ImportError:
        raise KerasHubError("keras-hub presets need keras-hub: pip install keras-hub") from None


def is_preset(path):
    """Whether a path is a keras-hub preset folder (config.json and model.weights.h5)."""
    return bool(path) and os.path.isdir(path) and all(
        os.path.exists(os.path.join(path, name)) for name in (CONFIG_FILE, WEIGHTS_FILE))


def missing_preset_files(path):
    """The files that make a preset which a folder of a preset in part lacks.

    Args:
      path: A folder.

    Returns:
      [] for a whole preset or a folder of no preset; else the missing
      names of CONFIG_FILE and WEIGHTS_FILE. A folder is taken for a preset
      by a file that no other format's folder holds: model.weights.h5,
      metadata.json or the tokenizer's vocabulary.
    """
    if not (path and os.path.isdir(path)):
        return []
    markers = (WEIGHTS_FILE, METADATA_FILE, VOCAB_FILE)
    if not any(os.path.exists(os.path.join(path, name)) for name in markers):
        return []
    return [name for name in (CONFIG_FILE, WEIGHTS_FILE)
            if not os.path.exists(os.path.join(path, name))]


def _read_json(path):
    """A JSON file's contents; a KerasHubError naming it when unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise KerasHubError(f"cannot read {path}: {e}") from None


def read_config(folder):
    """The BertConfig of a BertBackbone preset.

    Args:
      folder: A preset folder.

    Returns:
      A BertConfig: hidden_act "gelu" (BertBackbone's tanh GELU), both
      dropout rates the preset's dropout.

    Raises:
      KerasHubError: for a preset of another model, or one that cannot be read.
    """
    path = os.path.join(folder, CONFIG_FILE)
    saved = _read_json(path)
    if saved.get("class_name") != BACKBONE_CLASS:
        raise KerasHubError(f"{path}: a preset of {saved.get('class_name')!r}, not of "
                            f"{BACKBONE_CLASS}; bert_tf reads BERT presets only")
    values = saved.get("config", {})
    try:
        return BertConfig(
            vocab_size=values["vocabulary_size"], hidden_size=values["hidden_dim"],
            num_hidden_layers=values["num_layers"], num_attention_heads=values["num_heads"],
            intermediate_size=values["intermediate_dim"], hidden_act="gelu",
            hidden_dropout_prob=values.get("dropout", 0.1),
            attention_probs_dropout_prob=values.get("dropout", 0.1),
            max_position_embeddings=values.get("max_sequence_length", 512),
            type_vocab_size=values.get("num_segments", 2))
    except KeyError as e:
        raise KerasHubError(f"{path}: the BertBackbone config lacks {e}") from None


def vocab_file(folder):
    """The vocabulary.txt of a preset, or None."""
    path = os.path.join(folder, VOCAB_FILE)
    return path if os.path.exists(path) else None


def read_do_lower_case(folder):
    """The casing a preset's tokenizer.json records, or None without one.

    Raises:
      KerasHubError: if tokenizer.json cannot be read.
    """
    path = os.path.join(folder, TOKENIZER_FILE)
    if not os.path.exists(path):
        return None
    lowercase = _read_json(path).get("config", {}).get("lowercase")
    return lowercase if isinstance(lowercase, bool) else None


def _weight_paths(num_layers):
    """[(google name, BertBackbone variable path)] for every weight of the encoder."""
    pairs = [
        ("bert/embeddings/word_embeddings", "token_embedding/embeddings"),
        ("bert/embeddings/position_embeddings", "position_embedding/embeddings"),
        ("bert/embeddings/token_type_embeddings", "segment_embedding/embeddings"),
        ("bert/embeddings/LayerNorm/gamma", "embeddings_layer_norm/gamma"),
        ("bert/embeddings/LayerNorm/beta", "embeddings_layer_norm/beta"),
        ("bert/pooler/dense/kernel", "pooled_dense/kernel"),
        ("bert/pooler/dense/bias", "pooled_dense/bias"),
    ]
    # Each block's sublayers: the original's scope, keras-hub's.
    sublayers = [
        ("attention/self/query", "self_attention_layer/query"),
        ("attention/self/key", "self_attention_layer/key"),
        ("attention/self/value", "self_attention_layer/value"),
        ("attention/output/dense", "self_attention_layer/attention_output"),
        ("attention/output/LayerNorm", "self_attention_layer_norm"),
        ("intermediate/dense", "feedforward_intermediate_dense"),
        ("output/dense", "feedforward_output_dense"),
        ("output/LayerNorm", "feedforward_layer_norm"),
    ]
    for i in range(num_layers):
        for ours, theirs in sublayers:
            weights = ("gamma", "beta") if ours.endswith("LayerNorm") else ("kernel", "bias")
            pairs += [(f"bert/encoder/layer_{i}/{ours}/{weight}",
                       f"transformer_layer_{i}/{theirs}/{weight}") for weight in weights]
    return pairs


def _backbone_variables(backbone, num_layers):
    """{google name: BertBackbone variable}, checked to cover the backbone and the encoder."""
    by_path = {variable.path: variable for variable in backbone.weights}
    pairs = _weight_paths(num_layers)
    ours = {name.google for name in encoder_weight_names(num_layers)}
    if {google for google, _ in pairs} != ours or {path for _, path in pairs} != set(by_path):
        raise KerasHubError(
            "this keras-hub's BertBackbone does not have the weights bert_tf knows: "
            f"{sorted(set(by_path) - {path for _, path in pairs})[:5]}")
    return {google: by_path[path] for google, path in pairs}


def read_weights(folder):
    """A BertBackbone preset's weights, in the original's names and shapes.

    Args:
      folder: A preset folder.

    Returns:
      {google name: float32 np.ndarray}, shaped as BertModel's variables.

    Raises:
      KerasHubError: keras-hub is missing, or the preset is not a BertBackbone's.
    """
    config = read_config(folder)
    keras_hub = _keras_hub()
    backbone = keras_hub.models.BertBackbone.from_preset(folder)
    values = {}
    hidden = config.hidden_size
    for google, variable in _backbone_variables(backbone, config.num_hidden_layers).items():
        values[google] = merge_heads(google, variable.value.numpy().astype("float32"), hidden)
    return values


def write_preset(folder, encoder, vocab_file, do_lower_case):
    """Writes a BertModel and its vocab as a keras-hub BertBackbone + BertTokenizer preset.

    Args:
      folder: The preset folder to write (created).
      encoder: A BertModel.
      vocab_file: Its vocab.txt.
      do_lower_case: Whether it is uncased.

    Returns:
      The folder.

    Raises:
      KerasHubError: keras-hub is missing, or the model does not fit a
        BertBackbone (e.g. its two dropout rates differ).
    """
    config = encoder.config
    keras_hub = _keras_hub()
    if config.hidden_dropout_prob != config.attention_probs_dropout_prob:
        logging.warning("BertBackbone has one dropout rate; the preset keeps "
                        "hidden_dropout_prob=%s (attention_probs_dropout_prob=%s)",
                        config.hidden_dropout_prob, config.attention_probs_dropout_prob)
    if config.hidden_act != "gelu":
        logging.warning("keras-hub's BertBackbone computes the tanh GELU; this model's "
                        "hidden_act is %r, so keras-hub's outputs will differ slightly",
                        config.hidden_act)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size, dropout=config.hidden_dropout_prob,
        max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size, dtype="float32")
    ours = {name.google: name for name in encoder_weight_names(config.num_hidden_layers)}
    for google, variable in _backbone_variables(backbone, config.num_hidden_layers).items():
        value = weight_variable(encoder, ours[google].attr).numpy()
        variable.assign(value.reshape(variable.shape))
    tokenizer = keras_hub.models.BertTokenizer(
        vocabulary=vocab_file, lowercase=bool(do_lower_case),
        strip_accents=bool(do_lower_case))
    os.makedirs(folder, exist_ok=True)
    backbone.save_to_preset(folder)
    tokenizer.save_to_preset(folder)
    return folder

