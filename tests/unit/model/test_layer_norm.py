"""Tests for bert_tf/model/layer_norm.py: LayerNorm with a written-out gradient."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.layer_norm import LayerNorm

keras = tf.keras
EPSILON = 1e-12


def pair(hidden=24):
    """bert_tf's LayerNorm and Keras's, with the same random gamma and beta."""
    ours = LayerNorm(epsilon=EPSILON, dtype="float32")
    theirs = keras.layers.LayerNormalization(epsilon=EPSILON, dtype="float32")
    ours.build((None, hidden))
    theirs.build((None, hidden))
    ours.gamma.assign(tf.random.normal([hidden], 1.0, 0.3, seed=1))
    ours.beta.assign(tf.random.normal([hidden], 0.0, 0.3, seed=2))
    theirs.set_weights(ours.get_weights())
    return ours, theirs


def test_weights_are_keras_gamma_and_beta():
    ours, theirs = pair()
    assert [w.path.split("/")[-1] for w in ours.weights] == ["gamma", "beta"]
    assert [w.shape for w in ours.weights] == [w.shape for w in theirs.weights]


@pytest.mark.parametrize("jit_compile", [False, True])
def test_outputs_and_gradients_match_keras(jit_compile):
    ours, theirs = pair()
    # Offsets and scales per position, as residual streams have.
    x = (tf.random.normal([3, 5, 24], seed=3) * tf.random.uniform([3, 5, 1], 0.5, 8.0, seed=4)
         + tf.random.normal([3, 5, 1], 0.0, 5.0, seed=5))
    upstream = tf.random.normal([3, 5, 24], seed=6)

    @tf.function(jit_compile=jit_compile)
    def outputs_and_gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * upstream)
        return (y, *tape.gradient(loss, [x, *layer.trainable_variables]))

    for got, want in zip(outputs_and_gradients(ours), outputs_and_gradients(theirs),
                         strict=True):
        np.testing.assert_allclose(got, want, atol=2e-5, rtol=2e-5)


def test_a_constant_vector_normalizes_to_beta():
    # Zero variance: epsilon keeps the result finite, as in Keras's.
    ours, _ = pair(hidden=8)
    y = ours(tf.fill([2, 8], 3.0))
    np.testing.assert_allclose(y, np.tile(ours.beta.numpy(), (2, 1)), atol=1e-6)


def test_bfloat16_inputs_are_normalized_in_float32():
    # (Keras's rounds its float32 result to the input's bfloat16 before the
    # layer's cast back to float32; this layer keeps float32 throughout.)
    ours, theirs = pair()
    x = tf.cast(tf.random.normal([4, 24], seed=7), tf.bfloat16)
    y = ours(x)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y, theirs(tf.cast(x, tf.float32)), atol=1e-5)


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize("kwargs", [{"axis": 0}, {"scale": False}, {"center": False},
                                    {"rms_scaling": True}])
def test_unsupported_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="LayerNorm"):
        LayerNorm(**kwargs).build((4, 24))
