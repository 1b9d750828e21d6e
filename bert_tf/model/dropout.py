"""Dropout with a cheaper random mask.

BERT applies dropout to every attention-probability matrix and after every
sublayer, and Keras's Dropout draws a float32 uniform number per element
for it from TensorFlow's random generator: on a CPU, a share of the
training step worth cutting (docs/benchmarks.md, the AMX section). A mask
needs less than such a generator gives, so this layer hashes each
element's index with a key made from the seed instead: two rounds of a
32-bit integer hash (the "lowbias32" finalizer), computed in the same XLA
loop as the drop itself. An element is kept when its 32 bits are at or
above round(rate * 2^32), so the drop probability is `rate` to within
2^-32, and the survivors are scaled by the exact inverse of the keep
probability, so the expected output still equals the input. Everything
else, including the seeding through a keras.random.SeedGenerator (whose
state training_loop.Trainer checkpoints), is keras.layers.Dropout's.

A hash of the index is a fine source of dropout masks, not of
randomness for every purpose: for one key it is a bijection of the 32-bit
indices, so the elements of one mask are distinct draws, and a new key
(each call's seed) gives an unrelated permutation. The indices are int32:
a tensor may hold up to 2^31 - 1 elements, far above what one replica's
step holds.

No mask is kept for the backward pass: the gradients compute it again
from the seed. Dropout.attention_context does the same for the attention's
dropped-out probabilities, and recomputes them in the backward pass rather
than keep them.
"""

import tensorflow as tf

from bert_tf.model import recompute

keras = tf.keras

_LEVELS = 1 << 32  # a 32-bit hash per element


class Dropout(keras.layers.Dropout):
    """keras.layers.Dropout with a hashed random mask (see the module docstring)."""

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

        matmul(dropout(probs), value), whose backward pass
        keeps probs and value alone: it draws the mask again from the seed and
        recomputes dropout(probs), rather than keep that
        [batch, heads, seq, seq] tensor from the forward pass. The softmax's
        gradient keeps probs anyway, so the dropped copy was the one such
        tensor per layer that only this product needed: at batch 32 and
        seq 128 with 12 heads, 25 MB per layer in float32
        (docs/benchmarks.md, "Recomputation in the backward pass").

        Args:
          probs: float32 [batch, heads, seq_from, seq_to], the softmax's output.
          value: [batch, heads, seq_to, head_size], in the compute dtype.
          training: Whether to drop.

        Returns:
          [batch, heads, seq_from, head_size], in value's dtype.
        """
        if self._draws_from_a_seed(training):
            return _attention_context_saving_only_the_seed(
                probs, value, self._next_seed(), self._threshold())
        probs = self(tf.cast(probs, value.dtype), training=training)
        return tf.matmul(probs, value)

    def _draws_from_a_seed(self, training):
        """Whether this call drops with the hashed mask of a stateless seed.

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
        """The hash value below which an element is dropped: round(rate * 2^32), in [0, 2^32)."""
        return min(round(self.rate * _LEVELS), _LEVELS - 1)


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
            # upstream: [batch, heads, seq_from, head_size]
            # [batch, heads, seq_from, seq_to]
            dropped_gradient = tf.matmul(upstream, value, transpose_b=True)
            # One draw of the mask gives both the dropped probabilities again
            # and the probabilities' gradient; the upstream gradient is
            # already an input, so this runs in the backward pass.
            dropped, probs_gradient = _dropout_both(
                tf.cast(probs, value.dtype), dropped_gradient, seed, threshold)
            # [batch, heads, seq_to, head_size]
            value_gradient = tf.matmul(dropped, upstream, transpose_a=True)
            return tf.cast(probs_gradient, probs.dtype), value_gradient

        dropped = _dropout(tf.cast(probs, value.dtype), seed, threshold)
        return tf.matmul(dropped, value), gradient

    return attention_context(probs, value)


def _hash(x):
    """The "lowbias32" integer hash: a bijection of uint32 with strong avalanche.

    Args:
      x: A uint32 tensor.

    Returns:
      A uint32 tensor of x's shape.
    """
    x = _xor_shift_right(x, 16) * tf.constant(0x7FEB352D, tf.uint32)
    x = _xor_shift_right(x, 15) * tf.constant(0x846CA68B, tf.uint32)
    return _xor_shift_right(x, 16)


def _xor_shift_right(x, bits):
    """x ^ (x >> bits), for a uint32 tensor x and a Python int bits."""
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, tf.constant(bits, tf.uint32)))


def _keep(shape, seed, threshold):
    """The mask of kept elements: True where the element's hash is at or above threshold.

    Args:
      shape: int32 [rank], the mask's shape.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [0, 2^32): round(rate * 2^32).

    Returns:
      bool, of the given shape.
    """
    seed = tf.bitcast(seed, tf.uint32)
    # Two key words, each depending on both seed words.
    first_key = _hash(tf.bitwise.bitwise_xor(seed[0], _hash(seed[1])))
    second_key = _hash(first_key + seed[1])
    # [size]: each element's flat index, hashed with the keys.
    index = tf.bitcast(tf.range(tf.reduce_prod(shape)), tf.uint32)
    bits = _hash(_hash(tf.bitwise.bitwise_xor(index, first_key)) + second_key)
    return tf.reshape(bits >= tf.constant(threshold, tf.uint32), shape)


def _drop(inputs, keep, threshold):
    """Zeroes inputs where keep is False and scales the rest by the inverse keep probability."""
    scale = tf.cast(_LEVELS / (_LEVELS - threshold), inputs.dtype)
    return tf.where(keep, inputs * scale, tf.zeros_like(inputs))


# Both compiled with XLA even when the caller is not, so that the hash, the
# comparison and the drop are one loop over the elements rather than a
# kernel (and a tensor in memory) each.
@tf.function(jit_compile=True)
def _dropout(inputs, seed, threshold):
    """Zeroes the elements whose hash is below threshold; scales the others.

    Args:
      inputs: A floating-point tensor.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [0, 2^32): round(rate * 2^32).

    Returns:
      A tensor of the inputs' shape and dtype.
    """
    return _drop(inputs, _keep(tf.shape(inputs), seed, threshold), threshold)


@tf.function(jit_compile=True)
def _dropout_both(first, second, seed, threshold):
    """_dropout of two tensors of one shape with one mask, computed once.

    Args:
      first: A floating-point tensor.
      second: A tensor of first's shape and dtype.
      seed: int32 [2], the stateless seed.
      threshold: A Python int in [0, 2^32): round(rate * 2^32).

    Returns:
      (_dropout(first, seed, threshold), _dropout(second, seed, threshold)).
    """
    keep = _keep(tf.shape(first), seed, threshold)
    return _drop(first, keep, threshold), _drop(second, keep, threshold)
