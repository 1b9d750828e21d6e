"""LayerNorm whose backward pass keeps one tensor of the input's size.

Keras's LayerNormalization computes x * (rsqrt(variance + epsilon) * gamma)
+ (beta - mean * rsqrt(variance + epsilon) * gamma), and autodiff through that
keeps the input, its centred copy and the scale broadcast to the input's
shape for the backward pass, each [batch, seq, hidden]. A BERT block has two
LayerNorms, so that is several hidden-size vectors per token and layer held
from the forward to the backward pass. This layer writes its gradient out: the
backward pass keeps the normalized input and one reciprocal standard deviation
per position, and nothing else. The forward pass computes the same function
(the same mean and variance, then (x - mean) * rsqrt(variance + epsilon) *
gamma + beta), equal to Keras's to float32 rounding. Its weights are Keras's
("gamma", "beta"), so checkpoints and the optimizer's decay rules see no
difference.
"""

import tensorflow as tf

from bert_tf.model import recompute

keras = tf.keras


class LayerNorm(keras.layers.LayerNormalization):
    """keras.layers.LayerNormalization over the last axis, with a written-out gradient.

    Takes LayerNormalization's arguments; only the last axis, a scale and a
    centre are supported (BERT's LayerNorm).
    """

    def build(self, input_shape):
        """Checks the settings this layer supports, then builds gamma and beta.

        Args:
          input_shape: The input's shape; the last axis is normalized.

        Raises:
          ValueError: for another axis, no scale or centre, or RMS scaling.
        """
        if self.axis not in (-1, [-1], len(input_shape) - 1, [len(input_shape) - 1]):
            raise ValueError(f"LayerNorm normalizes the last axis only, not {self.axis}")
        if not (self.scale and self.center) or self.rms_scaling:
            raise ValueError("LayerNorm needs scale=True, center=True and no rms_scaling")
        super().build(input_shape)

    def call(self, inputs):
        """Normalizes each position's vector, then scales and shifts it.

        Args:
          inputs: [..., hidden], cast by Keras to the layer's compute dtype.

        Returns:
          The same shape, in the layer's compute dtype.
        """
        outputs = layer_norm(
            tf.cast(inputs, tf.float32), tf.cast(self.gamma, tf.float32),
            tf.cast(self.beta, tf.float32), self.epsilon)
        return tf.cast(outputs, self.compute_dtype)


def layer_norm(inputs, gamma, beta, epsilon):
    """LayerNorm over the last axis, whose gradient keeps only the normalized input.

    Args:
      inputs: float32 [..., hidden].
      gamma: float32 [hidden], the scale.
      beta: float32 [hidden], the shift.
      epsilon: Added to the variance, a Python float.

    Returns:
      float32 [..., hidden]: (inputs - mean) / sqrt(variance + epsilon) * gamma + beta.
    """

    @recompute.custom_gradient
    def normalize(inputs, gamma, beta):
        mean, variance = tf.nn.moments(inputs, axes=[-1], keepdims=True)
        # [..., 1]
        inverse_std = tf.math.rsqrt(variance + epsilon)
        # [..., hidden]: all the backward pass keeps, besides inverse_std.
        normalized = (inputs - mean) * inverse_std

        def gradient(upstream):
            # Every axis but the last: gamma's and beta's gradients sum over them.
            leading_axes = tf.range(tf.rank(upstream) - 1)
            gamma_gradient = tf.reduce_sum(upstream * normalized, axis=leading_axes)
            beta_gradient = tf.reduce_sum(upstream, axis=leading_axes)
            # Through y = normalized * gamma + beta, then through the
            # normalization: x's gradient is the incoming one, less its mean
            # and its projection on the normalized vector, over the std.
            normalized_gradient = upstream * gamma
            inputs_gradient = inverse_std * (
                normalized_gradient
                - tf.reduce_mean(normalized_gradient, axis=-1, keepdims=True)
                - normalized * tf.reduce_mean(
                    normalized_gradient * normalized, axis=-1, keepdims=True))
            return inputs_gradient, gamma_gradient, beta_gradient

        return normalized * gamma + beta, gradient

    return normalize(inputs, gamma, beta)
