"""Numeric precision: the dtype policy a run trains under, and the one its outputs use.

Training picks the fastest correct precision for the device
(--mixed_precision=auto): bfloat16 on a TPU, float16 with loss scaling on a
GPU, bfloat16 on a CPU whose bfloat16 units outrun its float32 ones
(cpu.py), else float32. What a run
hands to a user (extract_features.py's features, --do_eval and --do_predict
outputs, exported SavedModels) is computed in float32 by default, whatever the
device: those numbers are the product, and in bfloat16 they differ from
float32's by up to a few 1e-2 (docs/benchmarks.md), so the same command would
give other numbers on another machine. bfloat16 or float16 outputs are an
explicit choice (--inference_precision, or extract_features.py's
--mixed_precision), logged in one line.

Weights are float32 under every policy: a model trained in bfloat16 computes
in float32 from the same weights (with_policy).
"""

import contextlib

import tensorflow as tf
from absl import logging

from bert_tf.model.modeling import BertModel
from bert_tf.runtime import cpu

keras = tf.keras

PRECISIONS = ("auto", "float32", "bfloat16", "float16")
# --inference_precision's choices and the Keras policy each names; as_trained
# keeps the training's policy.
INFERENCE_PRECISIONS = {"float32": "float32", "bfloat16": "mixed_bfloat16",
                        "float16": "mixed_float16", "as_trained": None}


def choose_policy(mixed_precision, strategy):
    """The Keras dtype policy a run trains under, logged in one line.

    run_setup.Runtime holds it; models are built under it with
    building_under().

    Args:
      mixed_precision: One of PRECISIONS. "auto" picks bfloat16 on TPU,
        float16 (with loss scaling) on GPU, and on a CPU bfloat16 where its
        bfloat16 units outrun float32 (cpu.this_cpu()), else float32.
      strategy: The strategy the model will run under.

    Returns:
      The policy name: "float32", "mixed_bfloat16" or "mixed_float16".
    """
    if mixed_precision not in PRECISIONS:
        raise ValueError(f"--mixed_precision must be one of {PRECISIONS}, got {mixed_precision!r}")
    reason = "as given"
    if mixed_precision == "auto":
        if isinstance(strategy, tf.distribute.TPUStrategy):
            mixed_precision, reason = "bfloat16", "auto: a TPU"
        elif tf.config.list_logical_devices("GPU"):
            mixed_precision, reason = "float16", "auto: a GPU"
        else:
            kind = cpu.this_cpu()
            if kind.bfloat16_outruns_float32:
                mixed_precision = "bfloat16"
                reason = f"auto: the CPU multiplies bfloat16 faster than float32 ({kind.why})"
            else:
                mixed_precision = "float32"
                reason = (f"auto: the CPU multiplies float32 at least as fast as bfloat16 "
                          f"({kind.why})")
    policy = "float32" if mixed_precision == "float32" else f"mixed_{mixed_precision}"
    logging.info("Precision policy: %s (%s)", policy, reason)
    return policy


@contextlib.contextmanager
def building_under(policy):
    """Builds the Keras layers made inside it under a dtype policy.

    A Keras layer takes its policy when it is made, from the global one;
    this sets that for the layers made inside only, and puts the caller's
    back after, so that the policy a model computes under is the one its
    builder was handed (run_setup.Runtime.policy), whatever was built before.

    Args:
      policy: A Keras dtype policy name, such as "mixed_bfloat16".

    Yields:
      Nothing.
    """
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(policy)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)


def with_policy(task, encoder, heads, policy):
    """A trained model that computes under a dtype policy: itself, or a copy.

    Weights stay float32 under every policy, so they copy as they are; only
    the computation changes. Inputs (strings) and outputs (float32 logits and
    probabilities: the heads cast them) keep their types.

    Args:
      task: The tasks.Task (it builds the heads).
      encoder: The trained BertModel.
      heads: Its heads.
      policy: A Keras dtype policy name, such as "mixed_bfloat16".

    Returns:
      (encoder, heads) computing under policy: the given ones when they
      already do, else copies built under policy with the trained weights.
    """
    if policy == encoder.dtype_policy.name:
        return encoder, heads
    with building_under(policy):
        copy = BertModel(encoder.config)
        copy_heads = task.create_heads(copy)
    copy_weights(encoder, heads, copy, copy_heads)
    return copy, copy_heads


def copy_weights(encoder, heads, target_encoder, target_heads):
    """Assigns a model's weights to a copy of it (built under any policy).

    Args:
      encoder, heads: The source BertModel and its {name: head}.
      target_encoder, target_heads: The copy, with the same structure.
    """
    for source, target in [(encoder, target_encoder)] + [
            (heads[name], target_heads[name]) for name in heads]:
        for a, b in zip(source.weights, target.weights, strict=True):
            b.assign(a)


def inference_policy(precision, trained_policy):
    """The Keras policy that predictions and exports compute under.

    Args:
      precision: One of INFERENCE_PRECISIONS (--inference_precision).
      trained_policy: The policy the model trained under, e.g.
        "mixed_bfloat16".

    Returns:
      A policy name. Anything but float32 is logged in one line, since the
      outputs then differ from float32's.

    Raises:
      ValueError: for an unknown precision.
    """
    if precision not in INFERENCE_PRECISIONS:
        raise ValueError(f"--inference_precision must be one of "
                         f"{', '.join(INFERENCE_PRECISIONS)}, got {precision!r}")
    policy = INFERENCE_PRECISIONS[precision] or trained_policy
    if policy != "float32":
        logging.info("Outputs computed in %s (--inference_precision=%s), not float32: "
                     "faster where the device multiplies it natively, and different from "
                     "float32's outputs in the second or third digit", policy, precision)
    return policy
