"""Tests for bert_tf/model/dropout.py: the Dropout layer with a hashed mask."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.dropout import Dropout

# The drop probability the 32-bit threshold gives for rate 0.1.
DROP_PROBABILITY = round(0.1 * 2**32) / 2**32


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


def test_masks_are_independent_between_neighbours_and_calls():
    layer = Dropout(0.5, seed=9)
    x = tf.ones([1000, 1000])
    first = layer(x, training=True).numpy() == 0
    second = layer(x, training=True).numpy() == 0
    # Each pair is dropped together with probability 1/4 if independent; over
    # ~1e6 pairs the binomial standard deviation is ~4e-4, the bound ~10 of them.
    for together in (first[:, 1:] & first[:, :-1],  # neighbours in a row
                     first[1:] & first[:-1],  # neighbours in a column
                     first & second):  # one element, two calls
        assert abs(together.mean() - 0.25) < 4e-3


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


@pytest.mark.parametrize("policy, value_dtype, tolerance", [
    ("float32", tf.float32, 1e-6), ("mixed_bfloat16", tf.bfloat16, 1e-2)])
@pytest.mark.parametrize("jit_compile", [False, True])
def test_attention_context_and_its_gradients_are_those_of_dropout_then_matmul(
        policy, value_dtype, tolerance, jit_compile):
    # Two layers with one seed draw the same masks, call for call.
    written = Dropout(0.1, seed=11, dtype=policy)
    reference = Dropout(0.1, seed=11, dtype=policy)
    # [batch, heads, seq_from, seq_to], rows summing to 1 as a softmax's do.
    probs = tf.nn.softmax(tf.random.normal([2, 3, 5, 7], seed=4), axis=-1)
    # [batch, heads, seq_to, head_size]
    value = tf.cast(tf.random.normal([2, 3, 7, 4], seed=5), value_dtype)
    upstream = tf.cast(tf.random.normal([2, 3, 5, 4], seed=6), value_dtype)

    @tf.function(jit_compile=jit_compile)
    def context_and_gradients(function):
        with tf.GradientTape() as tape:
            tape.watch([probs, value])
            context = function(probs, value)
            loss = tf.reduce_sum(tf.cast(context * upstream, tf.float32))
        return (context, *tape.gradient(loss, [probs, value]))

    got = context_and_gradients(
        lambda p, v: written.attention_context(p, v, training=True))
    want = context_and_gradients(lambda p, v: tf.matmul(
        reference(tf.cast(p, value_dtype), training=True), v))
    assert got[0].dtype == value_dtype and got[1].dtype == tf.float32
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(tf.cast(g, tf.float32), tf.cast(w, tf.float32),
                                   atol=tolerance, rtol=tolerance)
    # The mask was used: some probabilities' gradients are exactly zero, not all.
    dropped = got[1].numpy() == 0
    assert 0 < dropped.mean() < 0.5


def test_attention_context_without_training_is_the_plain_product():
    probs = tf.nn.softmax(tf.random.normal([1, 2, 3, 3], seed=7), axis=-1)
    value = tf.random.normal([1, 2, 3, 4], seed=8)
    np.testing.assert_allclose(
        Dropout(0.1).attention_context(probs, value, training=False),
        tf.matmul(probs, value), rtol=1e-6)
