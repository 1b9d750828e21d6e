"""Custom gradients that recompute forward-pass tensors: when they run, how they fuse.

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

Without XLA for the whole step, TensorFlow runs each elementwise op as its
own kernel, one pass over memory each: the tanh GELU's gradient is a dozen
such passes over a [batch, seq, intermediate] tensor, and in bfloat16 on an
AMX CPU such passes took more of a step's time than its matmuls
(docs/benchmarks.md, the AMX section). fused() compiles such a formula with
XLA into one loop, which the step calls like any op. (A loop over bfloat16
is faster when it computes in float32 and rounds once at the end, as the
GELU's do.)

A raw-text export serves inference alone, so it has no use for these
gradients; yet a SavedModel cannot keep a gradient function that itself
contains custom gradients, and loading one then warns, once per function,
that a gradient would fail. custom_gradient builds the forward pass alone
inside forward_only(), which export.py traces its signatures in: the same
ops and outputs, without the gradient's marks. fused() functions run there
as plain ops too, so that a server needs no XLA.
"""

import contextlib
import contextvars
import functools

import tensorflow as tf

# True while forward_only() is active (in this thread or task).
_FORWARD_ONLY = contextvars.ContextVar("forward_only", default=False)


def after(upstream):
    """A context whose ops wait for upstream: for a gradient function's recomputations.

    Args:
      upstream: The gradient function's incoming gradient.

    Returns:
      A context manager; ops created inside it run only once upstream exists.
    """
    return tf.control_dependencies([upstream])


@contextlib.contextmanager
def forward_only():
    """A context in which custom_gradient functions build their forward pass alone.

    For tracing functions that will never be differentiated, such as an
    export's serving signatures.

    Yields:
      None.
    """
    token = _FORWARD_ONLY.set(True)
    try:
        yield
    finally:
        _FORWARD_ONLY.reset(token)


def fused(function):
    """function, compiled with XLA into one loop, except inside forward_only().

    For elementwise formulas (see the module docstring). XLA compiles once
    per input shape and dtype; under an XLA-compiled step the function is
    simply part of the step.

    Args:
      function: Takes and returns tensors; elementwise work only.

    Returns:
      A function of the same arguments and results.
    """
    compiled = tf.function(function, jit_compile=True)

    @functools.wraps(function)
    def call(*args):
        if _FORWARD_ONLY.get():
            return function(*args)
        return compiled(*args)

    return call


def custom_gradient(function):
    """tf.custom_gradient, except inside forward_only(), where no gradient is attached.

    Args:
      function: As tf.custom_gradient's: takes tensors, returns (outputs,
        gradient function).

    Returns:
      A function of the same arguments that returns the outputs alone.
    """
    with_gradient = tf.custom_gradient(function)

    @functools.wraps(function)
    def call(*args):
        if _FORWARD_ONLY.get():
            outputs, _ = function(*args)
            return outputs
        return with_gradient(*args)

    return call
