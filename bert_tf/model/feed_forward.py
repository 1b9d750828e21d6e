"""The feed-forward sublayer's second half: activation, then the output projection.

A transformer block's feed-forward computes dense(activation(dense(x))), and
autodiff keeps the activation's input for the activation's gradient and its
output for the output projection's kernel gradient: two tensors of the
intermediate width (4 x hidden) per token, the largest a block holds for the
backward pass. activation_then_dense keeps the input alone and computes the
activation again in the backward pass, which costs one elementwise pass over
that tensor and no matmul.
"""

import tensorflow as tf

from bert_tf.model import recompute


def activation_then_dense(pre_activation, activation, dense):
    """dense(activation(pre_activation)), whose backward pass recomputes the activation.

    Args:
      pre_activation: [batch, seq, intermediate], in the compute dtype.
      activation: An elementwise function (modeling.get_activation's).
      dense: A built keras Dense layer of input width intermediate and no
        activation of its own; its kernel and bias are used, cast to the
        compute dtype as Keras's autocasting would.

    Returns:
      [batch, seq, units], in pre_activation's dtype.
    """
    kernel = tf.cast(dense.kernel, pre_activation.dtype)
    bias = tf.cast(dense.bias, pre_activation.dtype)

    @recompute.custom_gradient
    def forward(pre_activation, kernel, bias):
        # [batch, seq, intermediate] @ [intermediate, units] -> [batch, seq, units]
        outputs = tf.einsum("bsi,iu->bsu", activation(pre_activation), kernel) + bias

        def gradient(upstream):
            # The activation and the intermediates of its own gradient read
            # pre_activation alone: after() keeps them in the backward pass.
            with recompute.after(upstream):
                with tf.GradientTape() as tape:
                    tape.watch(pre_activation)
                    activated = activation(pre_activation)
                kernel_gradient = tf.einsum("bsi,bsu->iu", activated, upstream)
                bias_gradient = tf.reduce_sum(upstream, axis=[0, 1])
                activated_gradient = tf.einsum("bsu,iu->bsi", upstream, kernel)
                pre_activation_gradient = tape.gradient(
                    activated, pre_activation, output_gradients=activated_gradient)
            return pre_activation_gradient, kernel_gradient, bias_gradient

        return outputs, gradient

    return forward(pre_activation, kernel, bias)
