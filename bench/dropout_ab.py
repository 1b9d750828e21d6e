"""A/B of a pretraining step: bert_tf's Dropout against keras.layers.Dropout.

Builds bert_tf's model twice in one process, exactly as the bench-peers
harness trains it (bench/peer_adapter.py, Keras AdamW, Keras sparse
cross-entropy, XLA, float32, dropout 0.1, the harness's synthetic batch):
"bert_tf" with bert_tf.model.dropout.Dropout, as shipped, and "keras" with every
Dropout layer of the model and heads replaced by keras.layers.Dropout. Nothing
else differs. After warm-up steps, each round times --steps steps of one
model, then of the other; the order alternates between rounds, so that
neither always runs first. Within one process and one round both see the
same load, which is what makes the ratio worth more than the absolute times
on a shared machine.

Prints one JSON line per round (ms per step of each, and keras / bert_tf,
above 1 when bert_tf's is faster) and one summary line per config with the
medians, each with where it ran (machine.describe()); --out appends them to
a file too.

The harness's configs, workload and batch come from bench/pretraining_step.py.

Example, from the repository root:
  .venv/bin/python -m bench.dropout_ab --configs=bert_tiny,bert_base \\
      --out=bench/results/dropout_ab.jsonl
"""

import argparse
import statistics
import time
from unittest import mock

from bench import arguments, machine, pretraining_step


def build(config_name, keras_dropout):
    """Builds and compiles the harness's pretraining model.

    Args:
      config_name: A key of pretraining_step.CONFIGS.
      keras_dropout: Whether to build it with keras.layers.Dropout in place of
        bert_tf.model.dropout.Dropout.

    Returns:
      The compiled keras.Model.
    """
    import tensorflow as tf

    from bench import peer_adapter
    from bert_tf.model import heads, modeling

    keras = tf.keras
    # Same initial weights for both models; the dropout masks differ anyway.
    keras.utils.set_random_seed(0)
    # The layers look Dropout up in their own modules when constructed, so swapping
    # the names there swaps every dropout layer and nothing else.
    layer = keras.layers.Dropout if keras_dropout else modeling.Dropout
    with mock.patch.object(modeling, "Dropout", layer), mock.patch.object(heads, "Dropout", layer):
        model = peer_adapter.build(pretraining_step.CONFIGS[config_name], "pretrain")
    model.compile(
        optimizer=keras.optimizers.AdamW(learning_rate=1e-4, weight_decay=0.01, beta_1=0.9,
                                         beta_2=0.999, epsilon=1e-6),
        loss={"mlm": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              "nsp": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
        jit_compile=True)
    return model


def time_steps(model, x, y, steps):
    """Runs training steps on one batch; returns milliseconds per step.

    Args:
      model: A compiled keras.Model.
      x: The inputs.
      y: The labels.
      steps: How many steps.

    Returns:
      The mean wall time of a step, in ms. train_on_batch returns the loss
      as numbers, so each step has finished when it returns.
    """
    start = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(x, y)
    return (time.perf_counter() - start) / steps * 1e3


def run_config(config_name, args):
    """Runs the A/B on one config and prints its lines.

    Args:
      config_name: A key of pretraining_step.CONFIGS.
      args: The parsed command line.
    """
    import numpy as np

    batch, seq = pretraining_step.TRAIN_WORKLOADS[config_name]
    x, y = pretraining_step.make_batch(pretraining_step.CONFIGS[config_name], batch, seq,
                                       pretraining_step.MAX_PREDICTIONS,
                                       np.random.default_rng(0))
    models = {"bert_tf": build(config_name, keras_dropout=False),
              "keras": build(config_name, keras_dropout=True)}
    for model in models.values():
        for _ in range(args.warmup):
            model.train_on_batch(x, y)
    base = {"bench": "dropout_ab", "config": config_name, "batch": batch, "seq_len": seq,
            "steps": args.steps, "precision": "float32", "jit_compile": True}
    ratios, step_ms = [], {name: [] for name in models}
    for round_index in range(args.rounds):
        order = list(models) if round_index % 2 == 0 else list(models)[::-1]
        ms = {name: time_steps(models[name], x, y, args.steps) for name in order}
        ratios.append(ms["keras"] / ms["bert_tf"])
        for name in models:
            step_ms[name].append(ms[name])
        machine.emit({**base, "round": round_index + 1, "first": order[0],
                      **{f"{name}_ms_per_step": round(ms[name], 1) for name in models},
                      "keras_over_bert_tf": round(ratios[-1], 3), **machine.describe()},
                     args.out)
    machine.emit({**base, "summary": True, "rounds": args.rounds,
                  **{f"{name}_ms_per_step_median": round(statistics.median(times), 1)
                     for name, times in step_ms.items()},
                  "keras_over_bert_tf_median": round(statistics.median(ratios), 3),
                  "keras_over_bert_tf_rounds": [round(r, 3) for r in ratios],
                  **machine.describe()}, args.out)


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=arguments.comma_list, default=["bert_tiny", "bert_base"],
                        help="The harness's configs to run.")
    parser.add_argument("--steps", type=int, default=10,
                        help="Timed steps of each model per round.")
    parser.add_argument("--rounds", type=int, default=3,
                        help="Rounds; the medians over rounds are reported.")
    parser.add_argument("--warmup", type=int, default=3,
                        help="Untimed steps of each model first (compilation included).")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Runs every config in --configs."""
    for config_name in args.configs:
        run_config(config_name, args)


if __name__ == "__main__":
    main(parse_args())
