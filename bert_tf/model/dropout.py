"""Dropout with a cheaper random mask.

BERT applies dropout to every attention-probability matrix and after every
sublayer, and Keras's Dropout generates one float32 uniform number per
element for it: a share of a CPU training step worth cutting at small scale
(docs/benchmarks.md, "Pretraining speed"). This layer draws 32 random bits
per two elements instead and keeps an element when its 16 bits are at or
above round(rate * 2^16). That moves the drop probability by less than 1e-5
from `rate` (0.100006 for 0.1), and the survivors are scaled by the exact
inverse of the keep probability, so the expected output still equals the
input. Everything else, including the
seeding through a keras.random.SeedGenerator (whose state training_loop.Trainer checkpoints),
is keras.layers.Dropout's.

No mask is kept for the backward pass: the gradients draw it again from the
seed. Dropout.attention_context does the same for the attention's
dropped-out probabilities, and recomputes them in the backward pass rather
than keep them.
"""

import tensorflow as tf

from bert_tf.model import recompute

keras = tf.keras

_LEVELS = 1 << 16  # a 16-bit draw per element


class Dropout(keras.layers.Dropout):
    """keras.layers.Dropout with a 16-bit random mask (see the module docstring)."""

    def call(self, inputs, training=False):
        """Drops elements at random in training; returns the inputs unchanged otherwise.

        Args:
          inputs: A floating-point tensor of any shape.
          training: Whether to drop.

        Returns:
          A tensor of the inputs' shape and dtype.
        """
        if self._draws_from_a_seed(training):
            return _dropout_saving_only_the_seed(inputs, self._next_seed(), self._threshold())
        if not training or self.rate == 0:
            return inputs
        return super().call(inputs, training=training)

    def attention_context(self, probs, value, training=False):
        """The attention's context vectors from dropped-out probabilities.

        einsum("bnft,btnd->bfnd", dropout(probs), value), whose backward pass
        keeps probs and value alone: it draws the mask again from the seed and
        recomputes dropout(probs), rather than keep that
        [batch, heads, seq, seq] tensor from the forward pass. The softmax's
        gradient keeps probs anyway, so the dropped copy was the one such
        tensor per layer that only this product needed: at batch 32 and
        seq 128 with 12 heads, 25 MB per layer in float32
        (docs/benchmarks.md, "Recomputation in the backward pass").

        Args:
          probs: float32 [batch, heads, seq_from, seq_to], the softmax's output.
          value: [batch, seq_to, heads, head_size], in the compute dtype.
          training: Whether to drop.

        Returns:
          [batch, seq_from, heads, head_size], in value's dtype.
        """
        if self._draws_from_a_seed(training):
            return _attention_context_saving_only_the_seed(
                probs, value, self._next_seed(), self._threshold())
        probs = self(tf.cast(probs, value.dtype), training=training)
        return tf.einsum("bnft,btnd->bfnd", probs, value)

    def _draws_from_a_seed(self, training):
        """Whether this call drops with the 16-bit mask drawn from a stateless seed.

        Not outside training, nor at rate 0 (nothing to drop), nor at rate 1
        or with a noise_shape, which keras.layers.Dropout handles.
        """
        return bool(training) and 0 < self.rate < 1 and self.noise_shape is None

    def _next_seed(self):
        """The next stateless seed, int32 [2], from the layer's seed generator."""
        seed = self.seed_generator.next()
        if seed.dtype != tf.int32:
            seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
        return seed

    def _threshold(self):
        """The 16-bit draw below which an element is dropped: round(rate * 2^16)."""
        return round(self.rate * _LEVELS)


def _dropout_saving_only_the_seed(inputs, seed, threshold):
    """_dropout, whose gradient draws the same mask again from the seed.

    Dropout is linear in its input, so its gradient is the same dropout applied
    to the incoming gradient. Drawing the mask again in the backward pass means
    the forward pass keeps nothing for it: no mask and no random bits per
    element. Arguments and result are _dropout's.
    """

    @recompute.custom_gradient
    def dropout(inputs):
        def gradient(upstream):
            return _dropout(upstream, seed, threshold)

        return _dropout(inputs, seed, threshold), gradient

    return dropout(inputs)


def _attention_context_saving_only_the_seed(probs, value, seed, threshold):
    """Dropout.attention_context in training; arguments are its and _dropout's."""

    @recompute.custom_gradient
    def attention_context(probs, value):
        def gradient(upstream):
            # upstream: [batch, seq_from, heads, head_size]
            dropped_gradient = tf.einsum("bfnd,btnd->bnft", upstream, value)
            # One draw of the mask gives both the dropped probabilities again
            # and the probabilities' gradient; the upstream gradient is
            # already an input, so this runs in the backward pass.
            dropped, probs_gradient = _dropout_both(
                tf.cast(probs, value.dtype), dropped_gradient, seed, threshold)
            value_gradient = tf.einsum("bnft,bfnd->btnd", dropped, upstream)
            return tf.cast(probs_gradient, probs.dtype), value_gradient

        dropped = _dropout(tf.cast(probs, value.dtype), seed, threshold)
        return tf.einsum("bnft,btnd->bfnd", dropped, value), gradient

    return attention_context(probs, value)


def _keep(shape, seed, threshold):
    """The mask of kept elements: True where the element's 16-bit draw is at or above threshold.

    Args:
      shape: int32 [rank], the mask's shape.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [1, 2^16): round(rate * 2^16).

    Returns:
      bool, of the given shape.
    """
    size = tf.reduce_prod(shape)
    # [ceil(size / 2)] 32-bit draws -> [size] 16-bit draws.
    bits = tf.random.stateless_uniform(
        [(size + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32, alg="threefry")
    halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
    return tf.reshape(halves >= threshold, shape)


def _drop(inputs, keep, threshold):
    """Zeroes inputs where keep is False and scales the rest by the inverse keep probability."""
    scale = tf.cast(_LEVELS / (_LEVELS - threshold), inputs.dtype)
    return tf.where(keep, inputs * scale, tf.zeros_like(inputs))


# Both compiled with XLA even when the caller is not: TensorFlow's CPU kernels
# lack the ThreeFry generator, which is the fastest of XLA's on the CPU.
@tf.function(jit_compile=True)
def _dropout(inputs, seed, threshold):
    """Zeroes the elements whose 16-bit draw is below threshold; scales the others.

    Args:
      inputs: A floating-point tensor.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [1, 2^16): round(rate * 2^16).

    Returns:
      A tensor of the inputs' shape and dtype.
    """
    return _drop(inputs, _keep(tf.shape(inputs), seed, threshold), threshold)


@tf.function(jit_compile=True)
def _dropout_both(first, second, seed, threshold):
    """_dropout of two tensors of one shape with one mask, drawn once.

    Args:
      first: A floating-point tensor.
      second: A tensor of first's shape and dtype.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [1, 2^16): round(rate * 2^16).

    Returns:
      (_dropout(first, seed, threshold), _dropout(second, seed, threshold)).
    """
    keep = _keep(tf.shape(first), seed, threshold)
    return _drop(first, keep, threshold), _drop(second, keep, threshold)
