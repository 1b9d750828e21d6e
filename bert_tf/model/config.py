"""BertConfig: the model's hyperparameters, as bert_config.json holds them.

bert_config.json is the original repository's format and bert_tf's own. A
Hugging Face config.json is read too; its names are mapped onto the original
keys on the way in.

The activation names (`hidden_act`) follow the original repository, where
"gelu" means the tanh approximation of GELU. Hugging Face uses "gelu" for the
exact erf form, so `from_hf_dict` renames it on the way in:

  | bert_tf hidden_act | function                     | HF hidden_act         |
  |--------------------|------------------------------|-----------------------|
  | "gelu"             | tanh approximation (original)| "gelu_new", "gelu_pytorch_tanh" |
  | "gelu_exact"       | exact, 0.5*x*(1+erf(x/√2))   | "gelu"                |
  | "relu", "tanh", "swish", "linear" | as named      | same ("silu" = swish) |

That way a Google checkpoint keeps the approximation it was trained with, and
a Hugging Face checkpoint keeps the exact form.
"""

import copy
import dataclasses
import difflib
import json
import os

ACTIVATIONS = ("gelu", "gelu_exact", "relu", "tanh", "swish", "linear")

# Hugging Face activation name -> bert_tf activation name.
_HF_ACTIVATIONS = {
    "gelu": "gelu_exact",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "gelu_fast": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "silu": "swish",
    "swish": "swish",
    "linear": "linear",
}


# Keys of some released bert_config.json files (the multilingual and Chinese
# models) that the model does not use; they are accepted and ignored.
_UNUSED_ORIGINAL_KEYS = frozenset({
    "directionality", "pooler_fc_size", "pooler_num_attention_heads", "pooler_num_fc_layers",
    "pooler_size_per_head", "pooler_type"})


class ConfigError(ValueError):
    """A configuration file or value that bert_tf cannot use."""


@dataclasses.dataclass
class BertConfig:
    """Hyperparameters of a BERT model, with the original's keys and defaults.

    Attributes:
      vocab_size: Size of the WordPiece vocabulary (rows of the embedding table).
      hidden_size: Width of every encoder layer and of the pooler.
      num_hidden_layers: Number of transformer blocks.
      num_attention_heads: Heads per attention layer; must divide hidden_size.
      intermediate_size: Width of the feed-forward layer in each block.
      hidden_act: Feed-forward activation; one of ACTIVATIONS (see the module
        docstring for what "gelu" means).
      hidden_dropout_prob: Dropout on embeddings, attention output and
        feed-forward output.
      attention_probs_dropout_prob: Dropout on the attention probabilities.
      max_position_embeddings: Longest sequence the position table covers.
      type_vocab_size: Number of segment ids (2 for sentence pairs).
      initializer_range: Stddev of the truncated-normal weight initializer.
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02

    def __post_init__(self):
        self.validate()

    def validate(self):
        """Checks every value, so that a bad config fails here, not mid-graph.

        Raises:
          ConfigError: naming the first offending key.
        """
        for key in ("vocab_size", "hidden_size", "num_hidden_layers",
                    "num_attention_heads", "intermediate_size",
                    "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{key} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) is not a multiple of "
                f"num_attention_heads ({self.num_attention_heads})")
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if not 0.0 <= value < 1.0:
                raise ConfigError(f"{key} must be in [0, 1), got {value!r}")
        if not self.initializer_range > 0:
            raise ConfigError(
                f"initializer_range must be positive, got {self.initializer_range!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ConfigError(
                f"unknown hidden_act {self.hidden_act!r}; known: {', '.join(ACTIVATIONS)}")

    def check_max_seq_length(self, max_seq_length):
        """Checks that sequences of max_seq_length tokens have a position embedding each.

        Args:
          max_seq_length: The run's --max_seq_length.

        Raises:
          ConfigError: naming the flag and the config key.
        """
        if max_seq_length > self.max_position_embeddings:
            raise ConfigError(
                f"--max_seq_length={max_seq_length} exceeds the model's "
                f"max_position_embeddings={self.max_position_embeddings}")

    def check_vocab_size(self, num_tokens, vocab_file):
        """Checks that the vocab has one token per row of the embedding table.

        Args:
          num_tokens: The vocab's length.
          vocab_file: Its path, for the message.

        Raises:
          ConfigError: naming the file and both sizes; the caller adds what
            to change.
        """
        if num_tokens != self.vocab_size:
            raise ConfigError(
                f"{vocab_file}: the vocab file has {num_tokens} tokens but the model's "
                f"vocab_size is {self.vocab_size}")

    @property
    def head_size(self):
        """Width of one attention head."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, values, source="config", allow_unknown_keys=False):
        """Builds a config from bert_config.json keys.

        An unknown key is an error: a misspelt "num_hiden_layers" would
        otherwise build a model of the default size without a word.

        Args:
          values: A dict with the original's keys; vocab_size is required.
          source: Where the dict came from, for error messages.
          allow_unknown_keys: Ignore keys that are not BertConfig's (a Hugging
            Face config.json has many).

        Returns:
          A validated BertConfig.

        Raises:
          ConfigError: on an unknown key (naming the closest known one), a
            missing vocab_size or an invalid value.
        """
        known = [f.name for f in dataclasses.fields(cls)]
        if not allow_unknown_keys:
            for key in values:
                if key not in known and key not in _UNUSED_ORIGINAL_KEYS:
                    close = difflib.get_close_matches(key, known, n=1)
                    hint = (f"did you mean {close[0]!r}?" if close
                            else f"known keys: {', '.join(known)}")
                    raise ConfigError(f"{source}: unknown key {key!r}; {hint}")
        kwargs = {k: v for k, v in values.items() if k in known}
        if "vocab_size" not in kwargs:
            raise ConfigError(f"{source}: missing required key 'vocab_size'")
        try:
            return cls(**kwargs)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_hf_dict(cls, values, source="config.json"):
        """Builds a config from a Hugging Face BERT config.json dict.

        Args:
          values: The parsed config.json.
          source: Where it came from, for error messages.

        Returns:
          A validated BertConfig whose hidden_act keeps HF's GELU form.

        Raises:
          ConfigError: on a non-BERT model type or an unknown activation.
        """
        model_type = values.get("model_type", "bert")
        if model_type != "bert":
            raise ConfigError(f"{source}: model_type {model_type!r} is not 'bert'")
        if values.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"{source}: only absolute position embeddings are supported")
        if abs(values.get("layer_norm_eps", 1e-12) - 1e-12) > 1e-15:
            raise ConfigError(
                f"{source}: layer_norm_eps {values['layer_norm_eps']} differs from BERT's 1e-12")
        values = dict(values)
        act = values.get("hidden_act", "gelu")
        if act not in _HF_ACTIVATIONS:
            raise ConfigError(
                f"{source}: unknown hidden_act {act!r}; known: {', '.join(_HF_ACTIVATIONS)}")
        values["hidden_act"] = _HF_ACTIVATIONS[act]
        return cls.from_dict(values, source, allow_unknown_keys=True)

    @classmethod
    def from_json_file(cls, path):
        """Reads a bert_config.json, or a Hugging Face config.json.

        A file with "model_type" or "architectures" is taken as Hugging Face's.

        Args:
          path: Path to the JSON file.

        Returns:
          A validated BertConfig.

        Raises:
          ConfigError: if the file is missing, not JSON, or invalid.
        """
        import tensorflow as tf

        if not tf.io.gfile.exists(path):
            raise ConfigError(f"config file not found: {path}")
        try:
            # tf.io.gfile, so that the config may live on GCS next to a checkpoint.
            with tf.io.gfile.GFile(path, "rb") as f:
                values = json.loads(f.read().decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not a valid JSON file ({e})") from None
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a JSON object")
        if "model_type" in values or "architectures" in values:
            return cls.from_hf_dict(values, source=path)
        return cls.from_dict(values, source=path)

    def to_dict(self):
        """Returns the config as a dict with the original's keys."""
        return copy.deepcopy(dataclasses.asdict(self))

    def to_json_string(self):
        """Returns the config as bert_config.json text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        """Writes bert_config.json, creating the parent folder if needed.

        Uses tf.io.gfile, so that path may be on GCS (gs://), where TPU runs
        keep their output.
        """
        import tensorflow as tf

        tf.io.gfile.makedirs(os.path.dirname(path) or ".")
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(self.to_json_string())

    def to_hf_dict(self):
        """Returns the config as a Hugging Face BERT config.json dict."""
        to_hf = {"gelu": "gelu_new", "gelu_exact": "gelu", "swish": "silu"}
        values = self.to_dict()
        values["hidden_act"] = to_hf.get(self.hidden_act, self.hidden_act)
        values.update(model_type="bert", architectures=["BertModel"], layer_norm_eps=1e-12)
        return values
