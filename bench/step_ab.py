"""Where bert_tf's training step differs from keras-hub's: each custom piece against Keras's own.

Builds, in one process, the harness's pretraining model (bench/peer_adapter.py,
Keras AdamW, Keras sparse cross-entropy, dropout 0.1, the harness's synthetic
batch) several times, each with one of bert_tf's own pieces swapped for
what Keras or autodiff would do, and keras-hub's model as the harness builds
it (BertBackbone and the MaskedLMHead of BertMaskedLM, an NSP Dense):

  bert_tf           as shipped
  keras_dropout     keras.layers.Dropout in place of bert_tf's Dropout (whose
                    masks are hashed from each element's index and computed
                    again in the backward pass, attention's included)
  autodiff_gelu     Keras's GELU with autodiff's gradient, which keeps the
                    formula's intermediates, in place of the written-out
                    gradient that recomputes them
  keras_layer_norm  keras.layers.LayerNormalization in place of LayerNorm
                    with its written-out gradient
  keep_activation   dense(activation(x)), whose gradient keeps the
                    activation's output, in place of activation_then_dense,
                    which recomputes it
  keras_pieces      all four swaps at once
  keras_hub         keras-hub's model

After warm-up steps, each round times --steps steps of every model, in an
order that rotates between rounds, so that each sees the same load within
a round; the ratios within a round are what is worth reading on a shared
machine. Prints one JSON line per round (ms per step of each) and a summary
line with the medians and each variant's step time over bert_tf's (below 1:
the variant is faster), each with where it ran (machine.describe()); --out
appends them to a file too.

The harness's configs, workload and batch come from bench/pretraining_step.py.

Example, from the repository root (bfloat16 on TensorFlow's kernels, the
default on a CPU with bfloat16 units):
  .venv/bin/python -m bench.step_ab --config=bert_base --precision=mixed_bfloat16 \\
      --out=bench/results/step_ab-$(date +%F).jsonl
"""

import argparse
import contextlib
import statistics
import time
from unittest import mock

import tensorflow as tf

from bench import arguments, machine, pretraining_step

keras = tf.keras

VARIANTS = ("bert_tf", "keras_dropout", "autodiff_gelu", "keras_layer_norm", "keep_activation",
            "keras_pieces", "keras_hub")

# The swaps each bert_tf variant makes: sets of the names in _swaps().
_VARIANT_SWAPS = {
    "bert_tf": (),
    "keras_dropout": ("dropout",),
    "autodiff_gelu": ("gelu",),
    "keras_layer_norm": ("layer_norm",),
    "keep_activation": ("activation",),
    "keras_pieces": ("dropout", "gelu", "layer_norm", "activation"),
}


class _KerasDropout(keras.layers.Dropout):
    """keras.layers.Dropout with the attention_context method that SelfAttention calls."""

    def attention_context(self, probs, value, training=False):
        """matmul(dropout(probs), value), through autodiff."""
        probs = self(tf.cast(probs, value.dtype), training=training)
        return tf.matmul(probs, value)


def _keep_activation_then_dense(pre_activation, activation, dense):
    """dense(activation(pre_activation)) through autodiff, for the keep_activation variant."""
    return dense(activation(pre_activation))


def _swaps(names):
    """A context that swaps the named bert_tf pieces for Keras's while models are built.

    The layers look their pieces up in their own modules when constructed
    (get_activation looks up gelu when called), so patching the names there
    swaps every use and nothing else.

    Args:
      names: Names among "dropout", "gelu", "layer_norm", "activation".

    Returns:
      A context manager.
    """
    from bert_tf.model import heads, modeling

    patches = {
        "dropout": [(modeling, "Dropout", _KerasDropout), (heads, "Dropout", _KerasDropout)],
        "gelu": [(modeling, "gelu", lambda x: keras.activations.gelu(x, approximate=True))],
        "layer_norm": [(modeling, "LayerNorm", keras.layers.LayerNormalization)],
        "activation": [(modeling, "activation_then_dense", _keep_activation_then_dense)],
    }
    stack = contextlib.ExitStack()
    for name in names:
        for module, attribute, replacement in patches[name]:
            stack.enter_context(mock.patch.object(module, attribute, replacement))
    return stack


def _keras_hub_model(config):
    """keras-hub's pretraining model as the harness builds it.

    Args:
      config: A pretraining_step.CONFIGS entry.

    Returns:
      A keras.Model with the harness's inputs and outputs.
    """
    import keras_hub

    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config["vocab_size"], num_layers=config["num_layers"],
        num_heads=config["heads"], hidden_dim=config["hidden"],
        intermediate_dim=config["intermediate"], dropout=0.1,
        max_sequence_length=config["max_position"], num_segments=config["type_vocab"])
    mask_positions = keras.Input(shape=(None,), dtype="int32", name="mask_positions")
    features = backbone(backbone.input)
    initializer = keras.initializers.TruncatedNormal(stddev=0.02)
    mlm = keras_hub.layers.MaskedLMHead(
        vocabulary_size=config["vocab_size"], token_embedding=backbone.token_embedding,
        intermediate_activation="gelu", kernel_initializer=initializer,
        name="mlm_head")(features["sequence_output"], mask_positions)
    nsp = keras.layers.Dense(2, kernel_initializer=initializer,
                             name="nsp_head")(features["pooled_output"])
    return keras.Model({**backbone.input, "mask_positions": mask_positions},
                       {"mlm": mlm, "nsp": nsp})


def build(config_name, variant, jit_compile):
    """Builds and compiles one variant of the harness's pretraining model.

    Args:
      config_name: A key of pretraining_step.CONFIGS.
      variant: One of VARIANTS.
      jit_compile: Whether Keras compiles the step with XLA.

    Returns:
      The compiled keras.Model.
    """
    from bench import peer_adapter

    # The same initial weights for every bert_tf variant.
    keras.utils.set_random_seed(0)
    config = pretraining_step.CONFIGS[config_name]
    if variant == "keras_hub":
        model = _keras_hub_model(config)
    else:
        with _swaps(_VARIANT_SWAPS[variant]):
            model = peer_adapter.build(config, "pretrain")
    model.compile(
        optimizer=keras.optimizers.AdamW(learning_rate=1e-4, weight_decay=0.01, beta_1=0.9,
                                         beta_2=0.999, epsilon=1e-6),
        loss={"mlm": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              "nsp": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
        jit_compile=jit_compile)
    return model


def time_steps(model, x, y, steps):
    """Runs training steps on one batch; returns milliseconds per step.

    train_on_batch returns the loss as numbers, so each step has finished
    when it returns.
    """
    start = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(x, y)
    return (time.perf_counter() - start) / steps * 1e3


def run(args):
    """Builds every variant, times them in rotating order and prints the lines."""
    import numpy as np

    keras.mixed_precision.set_global_policy(args.precision)
    batch, seq = pretraining_step.TRAIN_WORKLOADS[args.config]
    x, y = pretraining_step.make_batch(pretraining_step.CONFIGS[args.config], batch, seq,
                                       pretraining_step.MAX_PREDICTIONS,
                                       np.random.default_rng(0))
    models = {variant: build(args.config, variant, args.jit_compile)
              for variant in args.variants}
    for model in models.values():
        for _ in range(args.warmup):
            model.train_on_batch(x, y)
    base = {"bench": "step_ab", "config": args.config, "batch": batch, "seq_len": seq,
            "steps": args.steps, "precision": args.precision, "jit_compile": args.jit_compile}
    step_ms = {variant: [] for variant in models}
    names = list(models)
    for round_index in range(args.rounds):
        shift = round_index % len(names)
        order = names[shift:] + names[:shift]
        ms = {variant: time_steps(models[variant], x, y, args.steps) for variant in order}
        for variant, value in ms.items():
            step_ms[variant].append(value)
        machine.emit({**base, "round": round_index + 1, "order": order,
                      "ms_per_step": {variant: round(ms[variant], 1) for variant in names},
                      **machine.describe()}, args.out)
    medians = {variant: statistics.median(times) for variant, times in step_ms.items()}
    summary = {**base, "summary": True, "rounds": args.rounds,
               "ms_per_step_median": {variant: round(value, 1)
                                      for variant, value in medians.items()},
               "seq_per_s_median": {variant: round(batch * 1e3 / value, 2)
                                    for variant, value in medians.items()}}
    if "bert_tf" in medians:
        summary["over_bert_tf"] = {variant: round(value / medians["bert_tf"], 3)
                                   for variant, value in medians.items()}
    machine.emit({**summary, **machine.describe()}, args.out)


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=sorted(pretraining_step.CONFIGS),
                        default="bert_base", help="The harness's config.")
    parser.add_argument("--precision", choices=["float32", "mixed_bfloat16"],
                        default="mixed_bfloat16", help="The Keras dtype policy.")
    arguments.add_boolean(parser, "jit_compile", False, "Compile the steps with XLA.")
    parser.add_argument("--variants", type=arguments.comma_list, default=list(VARIANTS),
                        help=f"Which of {', '.join(VARIANTS)} to build.")
    parser.add_argument("--steps", type=int, default=8,
                        help="Timed steps of each model per round.")
    parser.add_argument("--rounds", type=int, default=3,
                        help="Rounds; the medians over rounds are reported.")
    parser.add_argument("--warmup", type=int, default=3,
                        help="Untimed steps of each model first (tracing included).")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: unknown {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    return args


if __name__ == "__main__":
    run(parse_args())
