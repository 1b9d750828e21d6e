"""Tests for bert_tf/model/recompute.py: gradients that recompute do it in the backward pass.

In a graph, an op runs as soon as its inputs exist. A gradient function that
recomputes a forward tensor from forward tensors alone would run during the
forward pass, and hold its result until the backward pass: these tests find,
in each such gradient's graph, every op that computes a tensor of the
recomputed input's shape outside the forward pass, and check that it waits
(through data or control edges) for the incoming gradient.

Inside forward_only() the same functions build their forward pass alone: the
same outputs, without the custom gradients' marks that a SavedModel cannot
keep whole, and without XLA-compiled calls, which a server may lack.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.dropout import Dropout
from bert_tf.model.feed_forward import activation_then_dense
from bert_tf.model.layer_norm import layer_norm
from bert_tf.model.modeling import gelu, gelu_exact
from bert_tf.model.recompute import after, forward_only

keras = tf.keras


def ops_that_do_not_wait(function, input_shape):
    """The backward pass's ops of the input's shape that do not wait for the upstream gradient.

    Args:
      function: Maps a float32 tensor of input_shape to a float32 tensor.
      input_shape: The input's static shape.

    Returns:
      The names of the ops, in the graph of function's output and its
      gradient, that are not on the way to the output, that output a tensor
      of input_shape, and that read the input but not the upstream gradient.
    """
    x_spec = tf.TensorSpec(input_shape, tf.float32)

    @tf.function
    def output_and_gradient(x, upstream):
        with tf.GradientTape() as tape:
            tape.watch(x)
            output = function(x)
        return output, tape.gradient(output, x, output_gradients=upstream)

    output_shape = tf.function(function).get_concrete_function(x_spec).structured_outputs.shape
    graph = output_and_gradient.get_concrete_function(
        x_spec, tf.TensorSpec(output_shape, tf.float32)).graph
    input_op, upstream_op = graph.inputs[0].op, graph.inputs[1].op
    output_op = graph.outputs[0].op

    def ancestors(op, seen):
        for parent in [t.op for t in op.inputs] + list(op.control_inputs):
            if parent not in seen:
                seen.add(parent)
                ancestors(parent, seen)
        return seen

    forward = ancestors(output_op, {output_op})
    early = []
    for op in graph.get_operations():
        # An Identity aliases its input: it allocates nothing.
        if op in forward or op.type in ("Identity", "IdentityN"):
            continue
        if not any(t.shape == input_shape for t in op.outputs):
            continue
        before = ancestors(op, set())
        if input_op in before and upstream_op not in before:
            early.append(op.name)
    return early


@pytest.mark.parametrize("activation", [gelu, gelu_exact])
def test_the_gelus_recompute_after_the_upstream_gradient(activation):
    assert ops_that_do_not_wait(activation, [4, 6]) == []


def test_the_feed_forward_recomputes_its_activation_after_the_upstream_gradient():
    dense = keras.layers.Dense(3)
    dense.build((None, None, 6))
    function = lambda x: activation_then_dense(x, tf.nn.silu, dense)  # noqa: E731
    assert ops_that_do_not_wait(function, [2, 4, 6]) == []


def test_attention_redraws_its_dropout_after_the_upstream_gradient():
    dropout = Dropout(0.1, seed=1)
    # [batch, heads, seq_to, head_size]
    value = tf.random.normal([2, 3, 5, 4], seed=2)
    # [batch, heads, seq_from, seq_to]
    function = lambda probs: dropout.attention_context(probs, value, training=True)  # noqa: E731
    assert ops_that_do_not_wait(function, [2, 3, 5, 5]) == []


def test_the_check_finds_a_recomputation_that_does_not_wait():
    # The GELU's gradient as it would be without after(): tanh(x) is ready in the forward pass.
    @tf.custom_gradient
    def eager_tanh(x):
        def gradient(upstream):
            return upstream * (1.0 - tf.tanh(x) ** 2)
        return tf.tanh(x), gradient

    @tf.custom_gradient
    def waiting_tanh(x):
        def gradient(upstream):
            with after(upstream):
                slope = 1.0 - tf.tanh(x) ** 2
            return upstream * slope
        return tf.tanh(x), gradient

    assert ops_that_do_not_wait(eager_tanh, [4, 6]) == ["Tanh_1", "pow", "sub"]
    assert ops_that_do_not_wait(waiting_tanh, [4, 6]) == []


def _marked_ops(function, input_shape):
    """The ops of function's graph that carry a custom gradient, and its XLA-compiled functions."""
    graph_def = tf.function(function).get_concrete_function(
        tf.TensorSpec(input_shape, tf.float32)).graph.as_graph_def()
    marked = [node.name for node in graph_def.node if "_gradient_op_type" in node.attr]
    return marked + [called.signature.name for called in graph_def.library.function
                     if called.attr["_XlaMustCompile"].b]


def test_forward_only_gives_the_same_outputs_without_custom_gradients():
    dense = keras.layers.Dense(3)
    dense.build((None, None, 6))
    gamma, beta = tf.random.normal([6], seed=3), tf.random.normal([6], seed=4)
    functions = [gelu, gelu_exact,
                 lambda x: activation_then_dense(x, gelu, dense),
                 lambda x: layer_norm(x, gamma, beta, 1e-12)]
    x = tf.random.normal([2, 4, 6], seed=5)
    for function in functions:
        assert _marked_ops(function, [2, 4, 6])
        expected = function(x)
        with forward_only():
            assert _marked_ops(function, [2, 4, 6]) == []
            # XLA's fused loop and TensorFlow's separate kernels round differently.
            np.testing.assert_allclose(function(x), expected, rtol=1e-6, atol=1e-6)
    # Outside the context again, the gradients are back.
    assert _marked_ops(gelu, [2, 4, 6])
