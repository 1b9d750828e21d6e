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
seeding through a keras.random.SeedGenerator (whose state training.Trainer checkpoints),
is keras.layers.Dropout's.
"""

import tensorflow as tf

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
        if not training or self.rate == 0:
            return inputs
        if self.noise_shape is not None or self.rate == 1:
            return super().call(inputs, training=training)
        seed = self.seed_generator.next()
        if seed.dtype != tf.int32:
            seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
        return _dropout_saving_only_the_seed(inputs, seed, round(self.rate * _LEVELS))


def _dropout_saving_only_the_seed(inputs, seed, threshold):
    """_dropout, whose gradient draws the same mask again from the seed.

    Dropout is linear in its input, so its gradient is the same dropout applied
    to the incoming gradient. Drawing the mask again in the backward pass means
    the forward pass keeps nothing for it: no mask and no random bits per
    element. For attention probabilities that is one [batch, heads, seq, seq]
    tensor less per layer held from the forward to the backward pass.
    Arguments and result are _dropout's.
    """

    @tf.custom_gradient
    def dropout(inputs):
        def gradient(upstream):
            return _dropout(upstream, seed, threshold)

        return _dropout(inputs, seed, threshold), gradient

    return dropout(inputs)


# Compiled with XLA even when the caller is not: TensorFlow's CPU kernels lack
# the ThreeFry generator, which is the fastest of XLA's on the CPU.
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
    size = tf.size(inputs)
    # [ceil(size / 2)] 32-bit draws -> [size] 16-bit draws.
    bits = tf.random.stateless_uniform(
        [(size + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32, alg="threefry")
    halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
    keep = tf.reshape(halves >= threshold, tf.shape(inputs))
    scale = tf.cast(_LEVELS / (_LEVELS - threshold), inputs.dtype)
    return tf.where(keep, inputs * scale, tf.zeros_like(inputs))
