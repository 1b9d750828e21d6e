"""The BERT encoder as Keras layers: embeddings, transformer blocks, pooler.

The architecture is the original's ("BERT: Pre-training of Deep Bidirectional
Transformers for Language Understanding", Devlin et al., 2018):

  input_ids, segment_ids
    -> word + position + token-type embeddings -> LayerNorm -> dropout
    -> num_hidden_layers x post-LayerNorm transformer block
    -> sequence_output [batch, seq, hidden]
    -> tanh dense on the first ([CLS]) token -> pooled_output [batch, hidden]

Every weight has the shape the original TF1 variable has (dense kernels are
[in, out]), so checkpoints.py can map names one to one.

Mixed precision: the layers follow the global Keras dtype policy
("mixed_bfloat16" on TPU, "mixed_float16" on GPU). LayerNorm and the attention
softmax always run in float32, because their sums of squares and exponentials
lose too much precision in 16 bits.
"""

import functools
import math

import tensorflow as tf

from bert_tf.model import recompute
from bert_tf.model.config import BertConfig
from bert_tf.model.dropout import Dropout
from bert_tf.model.feed_forward import activation_then_dense
from bert_tf.model.layer_norm import LayerNorm

keras = tf.keras

# BERT's LayerNorm epsilon (the original's tf.contrib layer_norm default).
LAYER_NORM_EPSILON = 1e-12


# The tanh approximation's constants: sqrt(2 / pi) and the cubic term's weight.
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


# Both GELUs write their gradient out rather than leave it to autodiff, which
# would keep every intermediate of the formula (x^3, the tanh or erf, 1 + it,
# 0.5 x), each [batch, seq, intermediate], from the forward to the backward
# pass. Their gradients here keep x alone and recompute the rest, in the
# backward pass. Fine-tuning all-MiniLM-L6-v2 at batch 32 and seq 128 on a
# CPU, that is 15% less memory for a step's gradients (docs/benchmarks.md,
# "The GELU's gradient"). Each formula is one fused loop (recompute.fused), so
# the recomputation reads x once rather than once per op, and costs less
# than the separate ops autodiff would run.


def _fused_in_float32(formula):
    """formula as one fused loop that computes in float32 and rounds once, to x's dtype.

    XLA's CPU loops run a 16-bit formula op by op through conversions; on
    bfloat16 inputs, computing in float32 and rounding once is 2-3x faster
    (and more exact).

    Args:
      formula: Takes x and optionally more tensors of x's shape, all float32;
        returns a float32 tensor of that shape.

    Returns:
      A function of the same arguments, in any float dtype, whose result has
      x's dtype.
    """
    @recompute.fused
    @functools.wraps(formula)
    def call(x, *others):
        x = tf.convert_to_tensor(x)
        result = formula(*(tf.cast(tensor, tf.float32) for tensor in (x, *others)))
        return tf.cast(result, x.dtype)

    return call


@_fused_in_float32
def _gelu_value(x):
    """The tanh GELU of x, elementwise."""
    return keras.activations.gelu(x, approximate=True)


@_fused_in_float32
def _gelu_gradient(x, upstream):
    """upstream times the tanh GELU's slope at x, elementwise."""
    inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
    tanh = tf.tanh(inner)
    # d inner / dx
    inner_slope = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x * x)
    return upstream * (0.5 * (1.0 + tanh) + 0.5 * x * (1.0 - tanh * tanh) * inner_slope)


@_fused_in_float32
def _gelu_exact_value(x):
    """The exact (erf) GELU of x, elementwise."""
    return keras.activations.gelu(x, approximate=False)


@_fused_in_float32
def _gelu_exact_gradient(x, upstream):
    """upstream times the exact GELU's slope at x, elementwise."""
    # The standard normal's CDF and density at x: d(x * cdf) / dx = cdf + x * pdf.
    cdf = 0.5 * (1.0 + tf.math.erf(x * (1.0 / math.sqrt(2.0))))
    pdf = tf.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
    return upstream * (cdf + x * pdf)


@recompute.custom_gradient
def gelu(x):
    """GELU, tanh approximation: what the original calls "gelu".

    Args:
      x: A float tensor.

    Returns:
      0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), same shape as x.
      (The body returns its gradient function too, for custom_gradient,
      which hands the caller the tensor alone.)
    """
    def gradient(upstream):
        # upstream is an input of the fused gradient, so it runs in the backward pass.
        return _gelu_gradient(x, upstream)

    return _gelu_value(x), gradient


@recompute.custom_gradient
def gelu_exact(x):
    """GELU, exact erf form: what Hugging Face calls "gelu".

    Args:
      x: A float tensor.

    Returns:
      0.5 * x * (1 + erf(x / sqrt(2))), same shape as x. (The body returns
      its gradient function too, for custom_gradient, which hands the
      caller the tensor alone.)
    """
    def gradient(upstream):
        return _gelu_exact_gradient(x, upstream)

    return _gelu_exact_value(x), gradient


def get_activation(name):
    """Maps a bert_config.json `hidden_act` to a function.

    Args:
      name: One of config.ACTIVATIONS.

    Returns:
      The activation function.

    Raises:
      ValueError: for an unknown name.
    """
    activations = {
        "gelu": gelu,
        "gelu_exact": gelu_exact,
        "relu": tf.nn.relu,
        "tanh": tf.tanh,
        "swish": tf.nn.silu,
        "linear": tf.identity,
    }
    if name not in activations:
        raise ValueError(f"unknown activation {name!r}; known: {', '.join(activations)}")
    return activations[name]


def create_initializer(config):
    """The original's weight initializer: truncated normal, stddev initializer_range."""
    return keras.initializers.TruncatedNormal(stddev=config.initializer_range)


def dense_layer(config, units, name, activation=None):
    """A Dense layer with BERT's initializer."""
    return keras.layers.Dense(
        units, activation=activation, kernel_initializer=create_initializer(config), name=name)


def layer_norm_layer(name):
    """A LayerNorm that always computes in float32, whatever the policy.

    Its backward pass keeps one tensor of the input's size (bert_tf/model/layer_norm.py).
    """
    return LayerNorm(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


class BertEmbeddings(keras.layers.Layer):
    """Word + position + token-type embeddings, then LayerNorm and dropout."""

    def __init__(self, config, **kwargs):
        """Creates the three embedding tables.

        Args:
          config: A BertConfig.
          **kwargs: Passed to keras.layers.Layer.
        """
        super().__init__(**kwargs)
        self.config = config
        init = create_initializer(config)
        hidden = config.hidden_size
        # Read in float32 under any policy (autocast=False): their sum goes
        # into a float32 LayerNorm anyway, and a gather from the float32
        # table reads its [batch, seq] rows alone, where autocasting would
        # first cast the whole [vocab, hidden] table, every step.
        self.word_embeddings = self.add_weight(
            name="word_embeddings", shape=(config.vocab_size, hidden), initializer=init,
            autocast=False)
        self.token_type_embeddings = self.add_weight(
            name="token_type_embeddings", shape=(config.type_vocab_size, hidden),
            initializer=init, autocast=False)
        self.position_embeddings = self.add_weight(
            name="position_embeddings", shape=(config.max_position_embeddings, hidden),
            initializer=init, autocast=False)
        self.layer_norm = layer_norm_layer("LayerNorm")
        self.layer_norm.build((None, None, hidden))
        self.dropout = Dropout(config.hidden_dropout_prob)
        self.built = True

    def call(self, input_ids, segment_ids, training=None):
        """Embeds a batch of token ids.

        Args:
          input_ids: int32 [batch, seq].
          segment_ids: int32 [batch, seq], values in [0, type_vocab_size).
          training: Whether dropout is active.

        Returns:
          The embedding output, [batch, seq, hidden], in the compute dtype.
        """
        seq_length = tf.shape(input_ids)[1]
        # [batch, seq, hidden], float32
        words = tf.gather(self.word_embeddings, input_ids)
        # Token types come from a tiny table, where a one-hot matmul is faster
        # than a gather on TPU. [batch, seq, type_vocab] @ [type_vocab, hidden]
        one_hot_types = tf.one_hot(segment_ids, self.config.type_vocab_size, dtype=words.dtype)
        types = tf.einsum("bst,th->bsh", one_hot_types, self.token_type_embeddings)
        # [1, seq, hidden]: the same positions for every example.
        positions = self.position_embeddings[tf.newaxis, :seq_length, :]
        output = self.layer_norm(words + types + positions)
        return self.dropout(tf.cast(output, self.compute_dtype), training=training)


class SelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention (the original's attention/self)."""

    def __init__(self, config, **kwargs):
        """Creates the query, key and value projections.

        Args:
          config: A BertConfig.
          **kwargs: Passed to keras.layers.Layer.
        """
        super().__init__(**kwargs)
        self.num_heads = config.num_attention_heads
        self.head_size = config.head_size
        hidden = config.hidden_size
        self.query = dense_layer(config, hidden, "query")
        self.key = dense_layer(config, hidden, "key")
        self.value = dense_layer(config, hidden, "value")
        for layer in (self.query, self.key, self.value):
            layer.build((None, None, hidden))
        self.dropout = Dropout(config.attention_probs_dropout_prob)
        self.built = True

    def _split_heads(self, x):
        """[batch, seq, hidden] -> [batch, heads, seq, head_size].

        Heads before positions: the layout in which the attention's products
        are plain batched matmuls. Transposed once here, rather than inside
        each einsum of the forward and backward passes.
        """
        x = tf.reshape(x, [-1, tf.shape(x)[1], self.num_heads, self.head_size])
        return tf.transpose(x, [0, 2, 1, 3])

    def call(self, hidden_states, input_mask, training=None, first_token_only=False):
        """Attends every position to every unmasked position.

        Args:
          hidden_states: [batch, seq, hidden].
          input_mask: int32 [batch, seq]: 1 for real tokens, 0 for padding.
            (An int mask, not a float bias, because Keras would cast a float
            argument to the 16-bit compute dtype.)
          training: Whether attention dropout is active.
          first_token_only: Attend from the first position only (it still
            attends to every position).

        Returns:
          The context vectors, [batch, seq, hidden] ([batch, 1, hidden] for
          first_token_only).
        """
        queries_from = hidden_states[:, :1] if first_token_only else hidden_states
        # [batch, heads, seq, head_size]
        query = self._split_heads(self.query(queries_from))
        key = self._split_heads(self.key(hidden_states))
        value = self._split_heads(self.value(hidden_states))
        # Scale before the matmul so that 16-bit scores do not overflow.
        query = query * tf.cast(1.0 / math.sqrt(self.head_size), query.dtype)
        # [batch, heads, seq_from, seq_to]
        scores = tf.matmul(query, key, transpose_b=True)
        scores = tf.cast(scores, tf.float32) + attention_bias_from_mask(input_mask)
        probs = tf.nn.softmax(scores, axis=-1)
        # [batch, heads, seq_from, head_size]
        context = self.dropout.attention_context(probs, value, training=training)
        # [batch, seq_from, heads, head_size]
        context = tf.transpose(context, [0, 2, 1, 3])
        return tf.reshape(context, [-1, tf.shape(context)[1], self.num_heads * self.head_size])


class TransformerBlock(keras.layers.Layer):
    """One post-LayerNorm transformer block (the original's encoder/layer_N)."""

    def __init__(self, config, **kwargs):
        """Creates the attention and feed-forward sublayers.

        Args:
          config: A BertConfig.
          **kwargs: Passed to keras.layers.Layer.
        """
        super().__init__(**kwargs)
        hidden = config.hidden_size
        self.attention = SelfAttention(config, name="attention")
        self.attention_output = dense_layer(config, hidden, "attention_output")
        self.attention_layer_norm = layer_norm_layer("attention_layer_norm")
        # The activation is applied by activation_then_dense with the output
        # projection, so that the backward pass need not keep its output.
        self.intermediate = dense_layer(config, config.intermediate_size, "intermediate")
        self.activation = get_activation(config.hidden_act)
        self.output_dense = dense_layer(config, hidden, "output")
        self.output_layer_norm = layer_norm_layer("output_layer_norm")
        self.attention_output.build((None, None, hidden))
        self.attention_layer_norm.build((None, None, hidden))
        self.intermediate.build((None, None, hidden))
        self.output_dense.build((None, None, config.intermediate_size))
        self.output_layer_norm.build((None, None, hidden))
        self.dropout = Dropout(config.hidden_dropout_prob)
        self.built = True

    def _add_and_norm(self, layer_norm, residual, update):
        """LayerNorm(residual + update), computed in float32, returned in compute dtype."""
        output = layer_norm(tf.cast(residual, tf.float32) + tf.cast(update, tf.float32))
        return tf.cast(output, self.compute_dtype)

    def call(self, hidden_states, input_mask, training=None, first_token_only=False):
        """Runs attention and feed-forward, each with a residual and LayerNorm.

        Args:
          hidden_states: [batch, seq, hidden].
          input_mask: int32 [batch, seq], 1 for real tokens, 0 for padding.
          training: Whether dropout is active.
          first_token_only: Compute the output at the first position only.

        Returns:
          [batch, seq, hidden] ([batch, 1, hidden] for first_token_only).
        """
        context = self.attention(hidden_states, input_mask, training=training,
                                 first_token_only=first_token_only)
        update = self.dropout(self.attention_output(context), training=training)
        residual = hidden_states[:, :1] if first_token_only else hidden_states
        attention_output = self._add_and_norm(self.attention_layer_norm, residual, update)
        # [batch, seq, intermediate], before the activation
        pre_activation = self.intermediate(attention_output)
        update = self.dropout(
            activation_then_dense(pre_activation, self.activation, self.output_dense),
            training=training)
        return self._add_and_norm(self.output_layer_norm, attention_output, update)


def attention_bias_from_mask(input_mask):
    """Turns a [batch, seq] 0/1 padding mask into an additive attention bias.

    Adding -10000 to a score before the softmax makes exp() underflow to 0 in
    float32, so padded keys get no weight. A finite value (rather than -inf)
    keeps a fully masked row free of NaNs.

    Args:
      input_mask: int [batch, seq], 1 for real tokens and 0 for padding.

    Returns:
      float32 [batch, 1, 1, seq]: 0 for real tokens, -10000 for padding.
    """
    mask = tf.cast(input_mask, tf.float32)[:, tf.newaxis, tf.newaxis, :]
    return (1.0 - mask) * -10000.0


class BertModel(keras.Model):
    """The BERT encoder with its pooler.

    Call it with a dict of int32 [batch, seq] tensors `input_ids`, and
    optionally `input_mask` (default all ones) and `segment_ids` (default all
    zeros). It returns a dict:
      sequence_output: [batch, seq, hidden], the last layer.
      pooled_output: [batch, hidden], tanh(dense(sequence_output[:, 0])).
      encoder_outputs: a list of num_hidden_layers [batch, seq, hidden] tensors,
        one per transformer block (the last equals sequence_output).
      embedding_output: [batch, seq, hidden], the input to the first block.

    The weights exist as soon as the model is constructed, so a checkpoint can
    be loaded before the first call.
    """

    def __init__(self, config, **kwargs):
        """Creates every layer and weight.

        Args:
          config: A BertConfig.
          **kwargs: Passed to keras.Model (e.g. name).
        """
        kwargs.setdefault("name", "bert")
        super().__init__(**kwargs)
        if not isinstance(config, BertConfig):
            raise TypeError(f"config must be a BertConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = BertEmbeddings(config, name="embeddings")
        # One attribute per block (layer_0, layer_1, ...) rather than a list:
        # Keras 3 hides lists from tf.train.Checkpoint, and the attribute names
        # give stable checkpoint keys that mirror the original's scopes.
        for i in range(config.num_hidden_layers):
            setattr(self, f"layer_{i}", TransformerBlock(config, name=f"layer_{i}"))
        self.pooler = dense_layer(config, config.hidden_size, "pooler", activation="tanh")
        self.pooler.build((None, config.hidden_size))
        # Every weight exists now; tell Keras not to trace call() to build.
        self.built = True

    @property
    def encoder_layers(self):
        """The transformer blocks, first to last."""
        return [getattr(self, f"layer_{i}") for i in range(self.config.num_hidden_layers)]

    def get_embedding_table(self):
        """Returns the word-embedding variable [vocab, hidden], for a tied MLM head."""
        return self.embeddings.word_embeddings

    def call(self, inputs, training=None, pooled_only=False):
        """Encodes a batch.

        Args:
          inputs: A dict with int32 [batch, seq] `input_ids`, and optionally
            `input_mask` and `segment_ids`.
          training: Whether dropout is active.
          pooled_only: Compute what pooled_output needs and no more: the last
            block at the first ([CLS]) position only, which saves most of
            that block's work (a classifier's serving does this). The
            sequence_output, and the last of encoder_outputs, are then
            [batch, 1, hidden].

        Returns:
          The dict described in the class docstring.
        """
        input_ids = inputs["input_ids"]
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = tf.ones_like(input_ids)
        segment_ids = inputs.get("segment_ids")
        if segment_ids is None:
            segment_ids = tf.zeros_like(input_ids)
        seq_length = input_ids.shape[1]
        if seq_length is not None and seq_length > self.config.max_position_embeddings:
            raise ValueError(
                f"sequence length {input_ids.shape[1]} exceeds max_position_embeddings "
                f"({self.config.max_position_embeddings})")

        embedding_output = self.embeddings(input_ids, segment_ids, training=training)
        hidden_states = embedding_output
        encoder_outputs = []
        layers = self.encoder_layers
        for i, layer in enumerate(layers):
            hidden_states = layer(hidden_states, input_mask, training=training,
                                  first_token_only=pooled_only and i == len(layers) - 1)
            encoder_outputs.append(hidden_states)
        # [batch, hidden]: the [CLS] token summarises the sequence.
        pooled_output = self.pooler(hidden_states[:, 0, :])
        return {
            "sequence_output": hidden_states,
            "pooled_output": pooled_output,
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }
