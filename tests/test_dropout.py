"""Tests for bert_tf/dropout.py: the 16-bit-mask Dropout layer."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.dropout import Dropout

# The drop probability the 16-bit threshold gives for rate 0.1: round(6553.6) / 65536.
DROP_PROBABILITY = 6554 / 65536


def test_inference_returns_the_inputs():
    x = tf.random.normal([4, 8, 16])
    np.testing.assert_array_equal(Dropout(0.1)(x, training=False), x)
    np.testing.assert_array_equal(Dropout(0.1)(x), x)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_training_drops_the_rate_and_keeps_the_expectation(jit_compile):
    layer = Dropout(0.1, seed=5)
    x = tf.random.uniform([1000, 1000], 1.0, 2.0)
    y = tf.function(lambda t: layer(t, training=True), jit_compile=jit_compile)(x).numpy()
    dropped = y == 0
    # Binomial standard deviation over 1e6 elements: 3e-4; the bound is ~6 of them.
    assert abs(dropped.mean() - DROP_PROBABILITY) < 2e-3
    # Survivors are scaled by the inverse keep probability: the expectation is unchanged.
    np.testing.assert_allclose(y[~dropped], x.numpy()[~dropped] / (1 - DROP_PROBABILITY),
                               rtol=1e-6)


def test_each_call_draws_a_new_mask_and_a_seed_repeats_them():
    x = tf.ones([64, 64])
    first, second = Dropout(0.1, seed=7), Dropout(0.1, seed=7)
    a1, a2 = first(x, training=True).numpy(), first(x, training=True).numpy()
    b1, b2 = second(x, training=True).numpy(), second(x, training=True).numpy()
    assert (a1 != a2).any()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)


def test_odd_sizes_and_16_bit_inputs_keep_shape_and_dtype():
    x = tf.ones([3, 5, 7], tf.bfloat16)
    y = Dropout(0.5, seed=1, dtype="mixed_bfloat16")(x, training=True)
    assert y.shape == (3, 5, 7) and y.dtype == tf.bfloat16
    assert set(np.unique(y.numpy().astype(np.float32))) <= {0.0, 2.0}


def test_rates_zero_and_one():
    x = tf.random.normal([10, 10])
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)
    np.testing.assert_array_equal(Dropout(1.0)(x, training=True), tf.zeros_like(x))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_the_gradient_uses_the_forward_passs_mask(jit_compile):
    layer = Dropout(0.1, seed=3)
    x = tf.random.uniform([37, 29], 1.0, 2.0)
    upstream = tf.random.uniform([37, 29], 1.0, 2.0)

    def output_and_gradient(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = layer(t, training=True)
            loss = tf.reduce_sum(y * upstream)
        return y, tape.gradient(loss, t)

    y, gradient = tf.function(output_and_gradient, jit_compile=jit_compile)(x)
    # y = x * mask * scale, so d(sum(y * upstream))/dx = upstream * mask * scale.
    kept = y.numpy() != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_array_equal(gradient.numpy() == 0, ~kept)
    np.testing.assert_allclose(gradient.numpy()[kept],
                               upstream.numpy()[kept] / (1 - DROP_PROBABILITY), rtol=1e-6)
