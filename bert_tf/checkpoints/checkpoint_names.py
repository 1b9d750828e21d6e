"""The names of BERT's weights in the three checkpoint formats.

Formats:
  google: the original repository's TF1 checkpoints (bert_model.ckpt.*),
    variables named like bert/encoder/layer_0/attention/self/query/kernel.
  hf: a Hugging Face folder with config.json and model.safetensors; Linear
    weights are stored [out, in], names with or without the "bert." prefix.
  tf2: bert_tf's own tf.train.Checkpoint files, as training writes them.

This module names the encoder's weights; each head in heads.py names its own
with the same helpers. checkpoints.py builds its table from both, so a new
head needs no edit there.
"""

import dataclasses
import re

FORMATS = ("google", "hf", "tf2")

# The encoder's key in a tf2 checkpoint: training_checkpoints.py saves it under this
# name, next to the heads (under their checkpoint_key), "optimizer" and "step".
ENCODER = "encoder"

# Where each format keeps the encoder's weights. A tensor there that maps to
# no weight means the model does not fit (e.g. another num_hidden_layers);
# a tensor elsewhere belongs to a head. Hugging Face names are compared
# without their "bert." prefix.
ENCODER_PREFIXES = {"google": ("bert/",), "hf": ("embeddings.", "encoder.", "pooler."),
                    "tf2": (f"{ENCODER}/",)}


@dataclasses.dataclass(frozen=True)
class WeightName:
    """One weight's names across formats.

    Attributes:
      module: Which object holds it: ENCODER or a head's checkpoint_key.
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


def weight_variable(owner, attr):
    """The variable at a WeightName's attribute path on its owner.

    Args:
      owner: The encoder or a head.
      attr: A dotted path, e.g. "layer_0.attention.query.kernel".

    Returns:
      The variable.
    """
    for part in attr.split("."):
        owner = getattr(owner, part)
    return owner


def merge_heads(google_name, value, hidden_size):
    """A weight stored split by attention head, in BertModel's shape.

    keras-hub and TF Model Garden keep the attention's query, key and value
    kernels as [hidden, heads, head_size], their biases as [heads, head_size]
    and the output kernel as [heads, head_size, hidden]: reshapes of
    BertModel's [hidden, hidden] and [hidden].

    Args:
      google_name: The weight's original name (a bias ends in "bias").
      value: The stored np.ndarray.
      hidden_size: The model's hidden size.

    Returns:
      The value, reshaped if it was split by head.
    """
    if value.ndim == 3:
        return value.reshape(hidden_size, hidden_size)
    if value.ndim == 2 and google_name.endswith("bias"):
        return value.reshape(hidden_size)
    return value


def dense_names(module, attr, google, hf):
    """The kernel and bias of one dense layer.

    Args:
      module: The owner's key (ENCODER or a head's checkpoint_key).
      attr: The layer's attribute path on its owner.
      google: The layer's original TF1 scope.
      hf: The layer's Hugging Face module path.

    Returns:
      Two WeightNames; the kernel is transposed in Hugging Face's layout.
    """
    return [
        WeightName(module, f"{attr}.kernel", f"{google}/kernel", f"{hf}.weight", True),
        WeightName(module, f"{attr}.bias", f"{google}/bias", f"{hf}.bias"),
    ]


def layer_norm_names(module, attr, google, hf):
    """The scale and offset of one LayerNorm; arguments as for dense_names."""
    return [
        WeightName(module, f"{attr}.gamma", f"{google}/gamma", f"{hf}.weight"),
        WeightName(module, f"{attr}.beta", f"{google}/beta", f"{hf}.bias"),
    ]


def _encoder_layer(i):
    """The weights of transformer block i."""
    g, h, a = f"bert/encoder/layer_{i}", f"encoder.layer.{i}", f"layer_{i}"
    return [
        *dense_names(ENCODER, f"{a}.attention.query", f"{g}/attention/self/query",
                     f"{h}.attention.self.query"),
        *dense_names(ENCODER, f"{a}.attention.key", f"{g}/attention/self/key",
                     f"{h}.attention.self.key"),
        *dense_names(ENCODER, f"{a}.attention.value", f"{g}/attention/self/value",
                     f"{h}.attention.self.value"),
        *dense_names(ENCODER, f"{a}.attention_output", f"{g}/attention/output/dense",
                     f"{h}.attention.output.dense"),
        *layer_norm_names(ENCODER, f"{a}.attention_layer_norm",
                          f"{g}/attention/output/LayerNorm", f"{h}.attention.output.LayerNorm"),
        *dense_names(ENCODER, f"{a}.intermediate", f"{g}/intermediate/dense",
                     f"{h}.intermediate.dense"),
        *dense_names(ENCODER, f"{a}.output_dense", f"{g}/output/dense", f"{h}.output.dense"),
        *layer_norm_names(ENCODER, f"{a}.output_layer_norm", f"{g}/output/LayerNorm",
                          f"{h}.output.LayerNorm"),
    ]


def encoder_weight_names(num_layers):
    """Every weight of BertModel, with its name in each format.

    Args:
      num_layers: The encoder's num_hidden_layers.

    Returns:
      A list of WeightName, all with module ENCODER.
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
        *layer_norm_names(ENCODER, "embeddings.layer_norm", "bert/embeddings/LayerNorm",
                          "embeddings.LayerNorm"),
    ]
    for i in range(num_layers):
        names += _encoder_layer(i)
    names += dense_names(ENCODER, "pooler", "bert/pooler/dense", "pooler.dense")
    return names
