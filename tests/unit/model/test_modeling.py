"""Tests for bert_tf.model.modeling and bert_tf.model.heads."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.heads import ClassifierHead, MaskedLMHead, NextSentenceHead
from bert_tf.model.modeling import BertModel, gelu, gelu_exact


@pytest.fixture
def restore_policy():
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


def test_outputs_have_documented_shapes(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    out = model(tiny_inputs)
    assert out["sequence_output"].shape == (3, 12, 64)
    assert out["pooled_output"].shape == (3, 64)
    assert out["embedding_output"].shape == (3, 12, 64)
    assert len(out["encoder_outputs"]) == tiny_config.num_hidden_layers
    np.testing.assert_array_equal(out["encoder_outputs"][-1], out["sequence_output"])
    assert model.get_embedding_table().shape == (99, 64)
    # The pooler is tanh(dense(first token)).
    first = out["sequence_output"][:, 0, :]
    np.testing.assert_allclose(out["pooled_output"], model.pooler(first), atol=1e-6)


def test_defaults_for_mask_and_segments(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    ids = tiny_inputs["input_ids"][:1]
    explicit = model({"input_ids": ids, "input_mask": np.ones_like(ids),
                      "segment_ids": np.zeros_like(ids)})
    implicit = model({"input_ids": ids})
    np.testing.assert_allclose(explicit["sequence_output"], implicit["sequence_output"],
                               atol=1e-6)


def test_padding_does_not_leak_into_real_positions(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    out = model(tiny_inputs)["sequence_output"].numpy()
    changed = dict(tiny_inputs)
    changed["input_ids"] = np.where(tiny_inputs["input_mask"] == 1, tiny_inputs["input_ids"], 42)
    out2 = model(changed)["sequence_output"].numpy()
    real = tiny_inputs["input_mask"].astype(bool)
    np.testing.assert_allclose(out[real], out2[real], atol=1e-5)
    assert not np.allclose(out[~real], out2[~real])


def test_pooled_only_computes_the_last_block_at_the_first_position_alone(tiny_config,
                                                                          tiny_inputs):
    model = BertModel(tiny_config)
    full = model(tiny_inputs)
    pooled_only = model(tiny_inputs, pooled_only=True)
    np.testing.assert_allclose(pooled_only["pooled_output"], full["pooled_output"], atol=1e-6)
    assert pooled_only["sequence_output"].shape == (3, 1, tiny_config.hidden_size)
    np.testing.assert_allclose(pooled_only["sequence_output"], full["sequence_output"][:, :1],
                               atol=1e-6)
    # The blocks before the last still run at every position.
    np.testing.assert_allclose(pooled_only["encoder_outputs"][-2], full["encoder_outputs"][-2],
                               atol=1e-6)


def test_dropout_only_in_training(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    eval1 = model(tiny_inputs, training=False)["sequence_output"]
    eval2 = model(tiny_inputs, training=False)["sequence_output"]
    train = model(tiny_inputs, training=True)["sequence_output"]
    np.testing.assert_array_equal(eval1, eval2)
    assert np.abs(eval1 - train).max() > 1e-3


def test_xla_compiles_with_static_shapes_and_matches(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    eager = model(tiny_inputs)["sequence_output"]
    compiled = tf.function(lambda x: model(x)["sequence_output"], jit_compile=True)
    np.testing.assert_allclose(compiled(tiny_inputs), eager, atol=1e-5)


def test_gelu_forms():
    x = tf.constant([-1.0, 0.5, 1.0, 3.0])
    exact = 0.5 * x * (1.0 + tf.math.erf(x / np.sqrt(2.0)))
    np.testing.assert_allclose(gelu_exact(x), exact, atol=1e-6)
    approx = 0.5 * x * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(gelu(x), approx, atol=1e-6)
    assert abs(float(gelu(1.0)) - float(gelu_exact(1.0))) > 1e-4


@pytest.mark.parametrize("dtype, tolerance", [(tf.float32, 5e-6), (tf.bfloat16, 2e-2)])
def test_gelu_gradients_are_those_of_their_formulas(dtype, tolerance):
    # The written-out gradients against autodiff through each formula. The
    # written-out ones run in XLA, whose tanh and erf round differently from
    # TensorFlow's kernels; 1 - tanh^2 near saturation turns that into a few
    # 1e-6 of the slope.
    x = tf.cast(tf.linspace(-6.0, 6.0, 97), dtype)
    formulas = {
        gelu_exact: lambda x: 0.5 * x * (1.0 + tf.math.erf(x / np.sqrt(2.0))),
        gelu: lambda x: 0.5 * x * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    }
    for activation, formula in formulas.items():
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            written, autodiff = activation(x), formula(x)
        assert written.dtype == dtype
        np.testing.assert_allclose(tf.cast(tape.gradient(written, x), tf.float32),
                                   tf.cast(tape.gradient(autodiff, x), tf.float32),
                                   atol=tolerance, rtol=tolerance)


def test_config_activation_changes_the_model(tiny_config, tiny_inputs):
    exact_config = type(tiny_config)(**{**tiny_config.to_dict(), "hidden_act": "gelu_exact"})
    tanh_model, exact_model = BertModel(tiny_config), BertModel(exact_config)
    for a, b in zip(tanh_model.weights, exact_model.weights, strict=True):
        b.assign(a)
    diff = np.abs(tanh_model(tiny_inputs)["sequence_output"]
                  - exact_model(tiny_inputs)["sequence_output"]).max()
    assert 0 < diff < 0.05


@pytest.mark.parametrize("policy, dtype, tolerance", [
    ("mixed_bfloat16", tf.bfloat16, 0.15), ("mixed_float16", tf.float16, 0.02)])
def test_mixed_precision(tiny_config, tiny_inputs, restore_policy, policy, dtype, tolerance):
    reference = BertModel(tiny_config)
    expected = reference(tiny_inputs)["sequence_output"].numpy()
    tf.keras.mixed_precision.set_global_policy(policy)
    model = BertModel(tiny_config)
    for a, b in zip(reference.weights, model.weights, strict=True):
        b.assign(a)
    out = model(tiny_inputs, training=False)
    assert out["sequence_output"].dtype == dtype
    assert all(w.dtype == tf.float32 for w in model.weights)
    # LayerNorm computes in float32 whatever the policy.
    assert model.layer_0.output_layer_norm.compute_dtype == "float32"
    got = tf.cast(out["sequence_output"], tf.float32).numpy()
    assert np.isfinite(got).all()
    assert np.abs(got - expected).max() < tolerance
    grads = _mlm_gradients(model, tiny_inputs)
    assert all(np.isfinite(g.numpy()).all() for g in grads)


def _mlm_gradients(model, inputs):
    head = MaskedLMHead(model.config, model.get_embedding_table())
    positions = np.array([[1, 2], [1, 3], [1, 2]], np.int32)
    with tf.GradientTape() as tape:
        out = model(inputs, training=True)
        logits = head(out["sequence_output"], positions)
        pooled = tf.cast(out["pooled_output"], tf.float32)
        loss = tf.reduce_mean(logits ** 2) + tf.reduce_mean(pooled)
    return tape.gradient(loss, model.trainable_weights)


def test_heads(tiny_config, tiny_inputs):
    model = BertModel(tiny_config)
    out = model(tiny_inputs)
    mlm = MaskedLMHead(tiny_config, model.get_embedding_table())
    positions = np.array([[1, 4], [2, 3], [1, 2]], np.int32)
    logits = mlm(out["sequence_output"], positions)
    assert logits.shape == (3, 2, 99) and logits.dtype == tf.float32
    # The projection is tied to the word embeddings: changing one row changes
    # only that vocabulary entry's logits.
    table = model.get_embedding_table()
    table.assign(tf.tensor_scatter_nd_update(table, [[7]], tf.ones([1, 64])))
    logits2 = mlm(out["sequence_output"], positions)
    changed = np.abs(logits2 - logits).max(axis=(0, 1)) > 0
    assert changed.tolist() == [i == 7 for i in range(99)]
    assert NextSentenceHead(tiny_config)(out["pooled_output"]).shape == (3, 2)
    classifier = ClassifierHead(tiny_config, num_labels=3)
    assert classifier(out["pooled_output"]).shape == (3, 3)
    assert classifier.output_weights.shape == (3, 64)


def test_too_long_sequence_is_refused(tiny_config):
    model = BertModel(tiny_config)
    with pytest.raises(ValueError, match="exceeds max_position_embeddings"):
        model({"input_ids": np.zeros((1, 65), np.int32)})
