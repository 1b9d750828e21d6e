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
    # [batch, seq, units]
    output_shape = tf.concat([tf.shape(pre_activation)[:-1], tf.shape(kernel)[-1:]], axis=0)

    @recompute.custom_gradient
    def forward(pre_activation, kernel, bias):
        # [batch * seq, intermediate]. The projection and its gradients are
        # 2-D matmuls: on a CPU, oneDNN runs them up to a sixth faster than
        # the same products written as einsums over [batch, seq, ...] in
        # float32 (docs/benchmarks.md, the AMX section).
        flat = tf.reshape(pre_activation, [-1, tf.shape(pre_activation)[-1]])
        # [batch * seq, intermediate] @ [intermediate, units] -> [batch * seq, units]
        outputs = tf.matmul(activation(flat), kernel) + bias

        def gradient(upstream):
            # [batch * seq, units]
            upstream = tf.reshape(upstream, [-1, tf.shape(upstream)[-1]])
            # The activation and the intermediates of its own gradient read
            # pre_activation alone: after() keeps them in the backward pass.
            with recompute.after(upstream):
                with tf.GradientTape() as tape:
                    tape.watch(flat)
                    activated = activation(flat)
                kernel_gradient = tf.matmul(activated, upstream, transpose_a=True)
                bias_gradient = tf.reduce_sum(upstream, axis=0)
                activated_gradient = tf.matmul(upstream, kernel, transpose_b=True)
                flat_gradient = tape.gradient(
                    activated, flat, output_gradients=activated_gradient)
            pre_activation_gradient = tf.reshape(flat_gradient, tf.shape(pre_activation))
            return pre_activation_gradient, kernel_gradient, bias_gradient

        return tf.reshape(outputs, output_shape), gradient

    return forward(pre_activation, kernel, bias)
