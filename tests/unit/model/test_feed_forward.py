"""Tests for bert_tf/model/feed_forward.py: the activation recomputed in the backward pass."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.feed_forward import activation_then_dense
from bert_tf.model.modeling import get_activation

keras = tf.keras


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("name", ["gelu", "gelu_exact", "relu", "tanh", "swish"])
def test_outputs_and_gradients_are_those_of_the_dense_layer(name, jit_compile):
    activation = get_activation(name)
    dense = keras.layers.Dense(6, bias_initializer="random_normal")
    dense.build((None, None, 16))
    x = tf.random.normal([3, 5, 16], seed=1) * 2.0
    upstream = tf.random.normal([3, 5, 6], seed=2)

    @tf.function(jit_compile=jit_compile)
    def outputs_and_gradients(function):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(function(x) * upstream)
        return (function(x), *tape.gradient(loss, [x, dense.kernel, dense.bias]))

    written = outputs_and_gradients(lambda t: activation_then_dense(t, activation, dense))
    autodiff = outputs_and_gradients(lambda t: dense(activation(t)))
    for got, want in zip(written, autodiff, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)


def test_bfloat16_inputs_use_the_kernel_in_bfloat16():
    # As Keras's autocasting does under a mixed policy: float32 weights, bfloat16 math.
    dense = keras.layers.Dense(4)
    dense.build((None, None, 8))
    x = tf.cast(tf.random.normal([2, 3, 8], seed=3), tf.bfloat16)
    y = activation_then_dense(x, get_activation("gelu"), dense)
    assert y.dtype == tf.bfloat16
    expected = tf.einsum("bsi,iu->bsu", get_activation("gelu")(x),
                         tf.cast(dense.kernel, tf.bfloat16))
    np.testing.assert_allclose(tf.cast(y, tf.float32), tf.cast(expected, tf.float32),
                               atol=0.02)
