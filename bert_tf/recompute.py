"""Keeps a gradient function's recomputation in the backward pass.

Several gradients here recompute a forward-pass tensor instead of keeping it
(the GELU's intermediates, the activation before the output projection), so
that the step holds less memory between its forward and backward passes. In a
graph, TensorFlow's executor runs an op as soon as its inputs exist, and an op
that reads forward tensors alone is ready during the forward pass: it would
run there, and its output would be held until the backward pass reads it,
which is the very memory the recomputation was meant to save. Fine-tuning
all-MiniLM-L6-v2 at batch 32 and seq 128 in float32 without XLA, that
ordering cut the step's peak allocation by a fifth (docs/benchmarks.md,
"Recomputation in the backward pass"). XLA orders its program itself; eager
execution runs ops one by one, in order.
"""

import tensorflow as tf


def after(upstream):
    """A context whose ops wait for upstream: for a gradient function's recomputations.

    Args:
      upstream: The gradient function's incoming gradient.

    Returns:
      A context manager; ops created inside it run only once upstream exists.
    """
    return tf.control_dependencies([upstream])
