"""A whole SQuAD fine-tuning run through bert_tf's Trainer and through the HF peer's loop.

tools/squad_batch_parity.py checks one update from the same weights. That
cannot see everything a run does: Adam's first update is about the sign of
the gradient whatever its scale, so a difference in the loss's scale or in
gradient clipping hides there; the schedule, the bias correction and the
weight decay act over hundreds of updates. Here both libraries train from the
same weights (all-MiniLM-L6-v2 and one span head drawn once), on the same
windows (bert_tf's, as run_squad.py cuts and labels them) in the same batches
(a permutation per epoch, full batches only, as the peer's stream), with
dropout off, for the run's updates at its schedule (batch 32, lr 1e-4, 10%
warmup, 2 epochs): bert_tf through training.Trainer, the loop run_squad.py
trains with (its gradients step, AdamWeightDecay, clipping and schedule);
Hugging Face through bench/peers/hf_squad_finetune.py's loop (torch AdamW,
LambdaLR, clip_grad_norm_). What is left between them is arithmetic: how far
the losses and the final weights drift apart says whether the training
machinery could explain a gap in quality. Three steps, in two venvs (the
first two take ~40 minutes each on one core for the whole run, and may run
at once: the second starts from the first's inputs.npz, written before its
training):

  .venv/bin/python -m tools.squad_trajectory --side=bert_tf --out=/tmp/trajectory
  /tmp/hfvenv/bin/python -m tools.squad_trajectory --side=hf --out=/tmp/trajectory
  .venv/bin/python -m tools.squad_trajectory --side=compare --out=/tmp/trajectory

The first writes the windows, the batch order, the head's initial weights,
bert_tf's loss at every update and its final weights (a Hugging Face folder)
under --out; the second the peer's losses and its initial and final weights;
the third prints one JSON line comparing the two runs.
"""

import argparse
import json
import os

import numpy as np

from bench import machine, minilm
from bench.squad_quality import SHARED

SEQ, BATCH, LR, EPOCHS, WARMUP = 256, 32, 1e-4, 2.0, 0.1


def batch_order(num_windows, updates, seed):
    """The windows of each update: a permutation per epoch, full batches only.

    Args:
      num_windows: Training windows.
      updates: How many batches.
      seed: Seeds the permutations.

    Returns:
      An int array [updates, BATCH] of window indices.
    """
    rng = np.random.default_rng(seed)
    batches = []
    while len(batches) < updates:
        order = rng.permutation(num_windows)
        batches += [order[i:i + BATCH] for i in range(0, num_windows - BATCH + 1, BATCH)]
    return np.stack(batches[:updates])


def bert_tf_side(args):
    """Trains with bert_tf's Trainer; writes inputs, losses and final weights under args.out."""
    import dataclasses

    import tensorflow as tf
    from absl import logging

    from bench.squad_files import answerable_only
    from bert_tf import configs, finetune
    from bert_tf.checkpoints import checkpoints, model_files
    from bert_tf.data import squad
    from bert_tf.runtime import run_setup
    from bert_tf.tasks import QuestionAnsweringTask
    from bert_tf.training.training_loop import Trainer
    from tools.squad_swap import squad_windows

    logging.set_verbosity(logging.INFO)  # The Trainer's line per update.
    os.makedirs(args.out, exist_ok=True)
    # The answerable questions, as bench/squad_quality.py trains on them.
    train_file = os.path.join(args.out, "train-v1.1.json")
    answerable_only(args.train_file, train_file)
    _, windows = squad_windows(train_file, is_training=True)
    arrays = {name: np.array([getattr(w, name) for w in windows], np.int32)
              for name in ("input_ids", "input_mask", "segment_ids")}
    for name in ("start_position", "end_position"):
        arrays[name + "s"] = np.array([getattr(w, name) for w in windows], np.int32)
    updates, warmup = finetune.train_steps(len(windows), BATCH, EPOCHS, WARMUP)
    order = batch_order(len(windows), updates, args.seed)
    steps = min(args.stop_after or updates, updates)
    files = model_files.find(minilm.model_dir(), max_seq_length=SEQ)
    runtime = run_setup.prepare(
        configs.RuntimeSettings(mixed_precision="float32", seed=args.seed))
    config = dataclasses.replace(files.bert_config, hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0)
    # One loop per update, so that the history holds every update's loss.
    training = configs.TrainingConfig(
        output_dir=os.path.join(args.out, "bert_tf_run"), num_train_steps=updates,
        num_warmup_steps=warmup, optimizer=configs.OptimizerSettings(learning_rate=LR),
        cadence=configs.CadenceSettings(iterations_per_loop=1, save_checkpoints_steps=updates))
    trainer = Trainer(QuestionAnsweringTask(squad.SquadSettings(max_seq_length=SEQ)), config,
                      runtime, training)
    if trainer.restore(minilm.model_dir()) != "initialized":
        raise SystemExit(f"{training.output_dir} holds an earlier run: remove it first")
    rng = np.random.default_rng(args.seed)
    head_w = (0.02 * rng.standard_normal((2, config.hidden_size))).astype(np.float32)
    trainer.heads["squad"].output_weights.assign(head_w)
    np.savez(os.path.join(args.out, "inputs.npz"), order=order, head_w=head_w,
             updates=updates, warmup=warmup, **arrays)

    def dataset_fn(input_context):
        del input_context  # One replica: the batches are the order's, as they are.
        ordered = {name: a[order[:steps].reshape(-1)] for name, a in arrays.items()}
        for name in ("start_positions", "end_positions"):
            ordered[name] = ordered[name][:, None]  # [examples, 1], as the records
        ordered["is_real_example"] = np.ones((len(ordered["input_ids"]), 1), np.int32)
        return tf.data.Dataset.from_tensor_slices(ordered).batch(BATCH, drop_remainder=True)

    history = trainer.train(dataset_fn, steps, BATCH)
    losses = np.array([record["loss"] for record in history], np.float64)
    rates = np.array([record["learning_rate"] for record in history], np.float64)
    np.savez(os.path.join(args.out, "bert_tf.npz"), losses=losses, learning_rates=rates)
    checkpoints.save_hf_folder(os.path.join(args.out, "bert_tf_final"), trainer.encoder,
                               trainer.heads)
    print(json.dumps({"side": "bert_tf", "updates": len(losses), "of": updates,
                      "last_loss": float(losses[-1])}))


def hf_side(args):
    """Trains the peer's loop on the same batches; writes its losses and weights under args.out."""
    import torch
    import transformers
    from safetensors.numpy import save_file
    from transformers import BertForQuestionAnswering

    from bench.peers import hf_squad_finetune, recipe

    inputs = np.load(os.path.join(args.out, "inputs.npz"))
    updates, warmup = int(inputs["updates"]), int(inputs["warmup"])
    steps = min(args.stop_after or updates, updates)
    torch.manual_seed(args.seed)
    model = BertForQuestionAnswering.from_pretrained(
        minilm.model_dir(), hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    # bert_tf trains the [PAD] row like any other: so does the peer here.
    model.bert.embeddings.word_embeddings.padding_idx = None
    with torch.no_grad():
        model.qa_outputs.weight.copy_(torch.tensor(inputs["head_w"]))
        model.qa_outputs.bias.zero_()

    def weights():
        return {name: p.detach().numpy().copy() for name, p in model.named_parameters()}

    save_file(weights(), os.path.join(args.out, "hf_initial.safetensors"))
    tensors = {"input_ids": inputs["input_ids"], "attention_mask": inputs["input_mask"],
               "token_type_ids": inputs["segment_ids"],
               "start_positions": inputs["start_positions"],
               "end_positions": inputs["end_positions"]}
    tensors = {name: torch.tensor(a, dtype=torch.long) for name, a in tensors.items()}
    batches = (torch.tensor(index, dtype=torch.long) for index in inputs["order"])
    # bert_tf's epsilon and weight decay; the schedule ends at the run's end
    # even when --stop_after trains fewer updates.
    losses = hf_squad_finetune.train(model, tensors, batches, updates, LR, adam_epsilon=1e-6,
                                     weight_decay=0.01, warmup_proportion=WARMUP,
                                     schedule="linear", stop_after=steps)
    # The rates LambdaLR gave each update.
    factor = recipe.learning_rate_factor("linear", warmup, updates)
    rates = [LR * factor(update) for update in range(steps)]
    save_file(weights(), os.path.join(args.out, "hf_final.safetensors"))
    np.savez(os.path.join(args.out, "hf.npz"), losses=losses, learning_rates=rates,
             versions=json.dumps({"torch": torch.__version__,
                                  "transformers": transformers.__version__}))
    print(json.dumps({"side": "hf", "updates": len(losses), "of": updates,
                      "last_loss": losses[-1]}))


def compare(args):
    """Prints (and appends to args.jsonl) the JSON line comparing the two sides' runs.

    The line holds the mean loss of every 50 updates on both sides, the
    largest difference in any one update's loss per 50 updates, the largest
    difference in the learning rate, and how far the final weights differ.
    """
    from safetensors.numpy import load_file

    bert_tf_run = np.load(os.path.join(args.out, "bert_tf.npz"))
    hf_run = np.load(os.path.join(args.out, "hf.npz"))
    bert_tf_weights = load_file(os.path.join(args.out, "bert_tf_final", "model.safetensors"))
    hf_weights = load_file(os.path.join(args.out, "hf_final.safetensors"))
    initial = load_file(os.path.join(args.out, "hf_initial.safetensors"))
    bt_losses, hf_losses = bert_tf_run["losses"], hf_run["losses"]
    if len(bt_losses) != len(hf_losses):
        raise SystemExit(f"bert_tf trained {len(bt_losses)} updates and the peer "
                         f"{len(hf_losses)}: run both sides with the same --stop_after")
    # bert_tf logs each loop's learning rate after its update: the next one's.
    bt_rates = np.concatenate([[0.0], bert_tf_run["learning_rates"][:-1]])
    bins = [(i, min(i + 50, len(bt_losses))) for i in range(0, len(bt_losses), 50)]
    # Each weight's difference between the libraries, over its norm and over
    # how far training moved it (the peer's final less its initial weights).
    # Some weights have no gradient but rounding noise, because a softmax
    # ignores a constant added to all its inputs: the span bias, the keys'
    # biases, the last LayerNorm's offset. Their "movement" is noise, so the
    # movement is summed over all weights rather than taken one by one.
    of_weight, differences, movements = {}, {}, {}
    for name, mine in hf_weights.items():
        differences[name] = np.linalg.norm(mine - bert_tf_weights[name])
        movements[name] = np.linalg.norm(mine - initial[name])
        if name != "qa_outputs.bias":  # Starts at 0 and stays near it: noise over noise.
            of_weight[name] = float(differences[name] / np.linalg.norm(mine))
    inputs = np.load(os.path.join(args.out, "inputs.npz"))
    line = {
        "check": "squad_trajectory", "updates": len(bt_losses),
        "schedule_updates": int(inputs["updates"]),
        "loss_by_50": {"bert_tf": [round(float(bt_losses[a:b].mean()), 5) for a, b in bins],
                       "hf": [round(float(hf_losses[a:b].mean()), 5) for a, b in bins]},
        "max_abs_loss_diff_by_50": [float(np.abs(bt_losses[a:b] - hf_losses[a:b]).max())
                                    for a, b in bins],
        "max_rel_learning_rate_diff": float(
            np.abs(bt_rates - hf_run["learning_rates"]).max() / LR),
        "final_weights_diff": {
            "of_weight": {"median": float(np.median(list(of_weight.values()))),
                          "max": max(of_weight.values()),
                          "max_at": max(of_weight, key=of_weight.get)},
            "of_movement": float(np.sqrt(sum(d ** 2 for d in differences.values())
                                         / sum(m ** 2 for m in movements.values()))),
            "qa_outputs.weight_of_movement": float(differences["qa_outputs.weight"]
                                                   / movements["qa_outputs.weight"])},
        "recipe": {"max_seq_length": SEQ, "batch_size": BATCH, "learning_rate": LR,
                   "epochs": EPOCHS, "warmup": WARMUP, "dropout": 0.0, "seed": args.seed},
        "peer": json.loads(str(hf_run["versions"])),
        **machine.describe(),
    }
    machine.emit(line, args.jsonl)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", choices=["bert_tf", "hf", "compare"], required=True)
    parser.add_argument("--out", default="/tmp/squad_trajectory",
                        help="The folder both sides share.")
    parser.add_argument("--train_file", default=os.path.join(SHARED, "train-v2.0-first10.json"))
    parser.add_argument("--seed", type=int, default=1,
                        help="Seeds the batch order and the span head's weights.")
    parser.add_argument("--stop_after", type=int, default=None,
                        help="Train only this many updates (the schedule stays the run's).")
    parser.add_argument("--jsonl", default=None,
                        help="--side=compare: also append the JSON line here.")
    args = parser.parse_args()
    {"bert_tf": bert_tf_side, "hf": hf_side, "compare": compare}[args.side](args)


if __name__ == "__main__":
    main()
