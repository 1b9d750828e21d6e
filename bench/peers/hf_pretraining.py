"""The pretraining peer: Hugging Face BertForPreTraining trained with the original recipe.

An independent implementation to compare run_pretraining.py with, on the same
instances: it reads pretraining records decoded to numpy arrays (an .npz of
create_pretraining_data.py's features, one row per instance; see
bench/pretraining_quality.py, which writes them), and never imports bert_tf.

The recipe is the original run_pretraining.py's:
  * masked-LM loss = sum(weight * nll) / (sum(weight) + 1e-5) over the batch's
    predicted positions, the MLM head applied to the gathered positions only;
    plus the next-sentence cross-entropy, averaged over the batch;
  * the learning rate rises linearly from 0 over num_warmup_steps, and
    otherwise is learning_rate * (1 - step / num_train_steps): the decay
    measured from step 0, reaching 0 at num_train_steps;
  * AdamW with epsilon 1e-6, betas 0.9 / 0.999 and weight decay 0.01 on every
    weight except LayerNorm weights and biases, after clipping the gradients
    to a global norm of 1.0. --adam=torch is torch.optim.AdamW (Adam's bias
    correction on, bert_tf's default); --adam=original is the original's
    update without bias correction, written out below;
  * every instance once per epoch, in a new permutation per epoch;
  * every weight matrix and embedding drawn from the original's initializer,
    TensorFlow 1's truncated_normal_initializer(stddev=0.02): a normal cut at
    two standard deviations and not rescaled, so its spread is 0.88 x 0.02.
    --init=normal keeps Hugging Face's own initialisation (an uncut normal,
    stddev 0.02, the [PAD] embedding zeroed) instead.

Held-out evaluation reads the first batches of the held-out file in order,
with dropout off, and reports masked-LM accuracy and loss (weighted by
masked_lm_weights, as the original's metrics are) and next-sentence
accuracy. Prints one JSON line per evaluation; saves the final model as a
Hugging Face folder (model.safetensors, config.json) in --output_dir, which
convert_checkpoint.py reads.

Example (the torch venv of docs/benchmarks.md):
  /tmp/hfvenv/bin/python -m bench.peers.hf_pretraining --train=/tmp/pq/train.npz \\
      --heldout=/tmp/pq/heldout.npz --output_dir=/tmp/pq/hf-seed1 --seed=1
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import transformers

from bench import machine
from bench.peers import recipe

FEATURES = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
            "masked_lm_ids", "masked_lm_weights", "next_sentence_labels")


def parse_args(argv=None):
    """The peer's command line; the defaults are the learning comparison's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", help="Training instances (.npz); required unless "
                        "--evaluate.")
    parser.add_argument("--heldout", required=True, help="Held-out instances (.npz).")
    parser.add_argument("--output_dir", help="Where the model is saved; required unless "
                        "--evaluate.")
    parser.add_argument("--evaluate", metavar="FOLDER", help="Train nothing: score this saved "
                        "Hugging Face folder (the peer's, or bert_tf's converted by "
                        "convert_checkpoint.py) on --heldout with this evaluator, so that both "
                        "libraries' models are measured by one piece of code.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num_layers", type=int, default=4)
    parser.add_argument("--hidden_size", type=int, default=256)
    parser.add_argument("--vocab_size", type=int, default=30522)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=32)
    parser.add_argument("--num_train_steps", type=int, default=3000)
    parser.add_argument("--num_warmup_steps", type=int, default=300)
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--adam", choices=("torch", "original"), default="torch",
                        help="torch.optim.AdamW (bias correction), or the original's update.")
    parser.add_argument("--init", choices=("truncated", "normal"), default="truncated",
                        help="The original's truncated normal, or Hugging Face's normal.")
    parser.add_argument("--eval_every", type=int, default=500)
    parser.add_argument("--eval_train_batches", type=int, default=50,
                        help="Also evaluate this many batches of training instances.")
    parser.add_argument("--threads", type=int, default=0, help="torch threads; 0: all cores.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines here.")
    return parser.parse_args(argv)


def load_instances(path):
    """{feature: np.ndarray [instances, length]} from an .npz of decoded records."""
    with np.load(path) as data:
        return {name: data[name] for name in FEATURES}


class OriginalAdamW(torch.optim.Optimizer):
    """The original BERT's AdamWeightDecayOptimizer: Adam without bias correction.

    update = m / (sqrt(v) + eps) + weight_decay * w;  w -= lr * update.
    """

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        """Applies one update to every parameter that has a gradient."""
        for group in self.param_groups:
            beta_1, beta_2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                m, v = state["m"], state["v"]
                m.mul_(beta_1).add_(p.grad, alpha=1 - beta_1)
                v.mul_(beta_2).addcmul_(p.grad, p.grad, value=1 - beta_2)
                update = m / (v.sqrt() + group["eps"])
                if group["weight_decay"]:
                    update.add_(p, alpha=group["weight_decay"])
                p.add_(update, alpha=-group["lr"])


def truncated_normal_init(model, stddev):
    """Redraws every weight matrix and embedding as the original initialises them.

    TensorFlow 1's truncated_normal_initializer(stddev) draws a normal and
    redraws values beyond two standard deviations, without rescaling: the
    weights' spread is 0.88 x stddev, where Hugging Face's normal gives stddev.
    Biases and LayerNorm keep their zeros and ones, as in both.
    """
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.trunc_normal_(module.weight, mean=0.0, std=stddev,
                                            a=-2 * stddev, b=2 * stddev)


def create_optimizer(model, args):
    """AdamW with weight decay on every parameter but LayerNorm weights and biases."""
    groups = recipe.parameter_groups(model)
    if args.adam == "torch":
        return torch.optim.AdamW(groups, lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-6)
    return OriginalAdamW(groups, lr=args.learning_rate)


def to_tensors(instances, rows):
    """One batch: the given rows of every feature, as torch tensors."""
    batch = {name: torch.from_numpy(values[rows]) for name, values in instances.items()}
    for name in FEATURES:
        if name != "masked_lm_weights":
            batch[name] = batch[name].long()
    return batch


def forward(model, batch):
    """MLM logits at the masked positions [b, p, vocab] and NSP logits [b, 2]."""
    outputs = model.bert(input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                         token_type_ids=batch["segment_ids"])
    sequence, pooled = outputs[0], outputs[1]  # [b, seq, hidden], [b, hidden]
    positions = batch["masked_lm_positions"]  # [b, p]
    # [b, p, hidden]: only the predicted positions go through the vocab projection.
    gathered = torch.gather(
        sequence, 1, positions.unsqueeze(-1).expand(-1, -1, sequence.shape[-1]))
    return model.cls.predictions(gathered), model.cls.seq_relationship(pooled)


def losses(mlm_logits, nsp_logits, batch):
    """The original's masked-LM and next-sentence losses (scalars)."""
    weights = batch["masked_lm_weights"]  # [b, p]
    nll = torch.nn.functional.cross_entropy(
        mlm_logits.transpose(1, 2), batch["masked_lm_ids"], reduction="none")  # [b, p]
    mlm = (nll * weights).sum() / (weights.sum() + 1e-5)
    nsp = torch.nn.functional.cross_entropy(nsp_logits, batch["next_sentence_labels"][:, 0])
    return mlm, nsp


@torch.no_grad()
def evaluate(model, instances, batch_size, max_batches=None):
    """The original's eval metrics over the first batches of `instances`, in order."""
    model.eval()
    count = len(instances["input_ids"]) // batch_size
    if max_batches is not None:
        count = min(count, max_batches)
    hits = nll_sum = weight_sum = nsp_hits = 0.0
    for b in range(count):
        batch = to_tensors(instances, np.arange(b * batch_size, (b + 1) * batch_size))
        mlm_logits, nsp_logits = forward(model, batch)
        weights = batch["masked_lm_weights"]
        nll = torch.nn.functional.cross_entropy(
            mlm_logits.transpose(1, 2), batch["masked_lm_ids"], reduction="none")
        hits += float(((mlm_logits.argmax(-1) == batch["masked_lm_ids"]) * weights).sum())
        nll_sum += float((nll * weights).sum())
        weight_sum += float(weights.sum())
        nsp_hits += float((nsp_logits.argmax(-1) == batch["next_sentence_labels"][:, 0]).sum())
    model.train()
    return {"masked_lm_accuracy": hits / weight_sum, "masked_lm_loss": nll_sum / weight_sum,
            "next_sentence_accuracy": nsp_hits / (count * batch_size)}


def epoch_batches(num_instances, batch_size, generator):
    """Yields batches of row indices: each epoch a new permutation, read in order."""
    leftover = np.zeros([0], np.int64)
    while True:
        order = np.concatenate([leftover, generator.permutation(num_instances)])
        full = len(order) // batch_size * batch_size
        yield from order[:full].reshape(-1, batch_size)
        leftover = order[full:]


def evaluate_folder(args):
    """--evaluate: one JSON line of held-out metrics for a saved folder."""
    model = transformers.BertForPreTraining.from_pretrained(args.evaluate)
    point = {"evaluated": os.path.abspath(args.evaluate)}
    for key, value in evaluate(model, load_instances(args.heldout),
                               args.eval_batch_size).items():
        point[f"heldout_{key}"] = round(value, 4)
    point.update(torch=torch.__version__, transformers=transformers.__version__)
    machine.emit({**point, **machine.describe()}, args.out)


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.evaluate:
        evaluate_folder(args)
        return
    if not (args.train and args.output_dir):
        sys.exit("hf_pretraining.py: --train and --output_dir are required to train")
    torch.manual_seed(args.seed)
    train, heldout = load_instances(args.train), load_instances(args.heldout)
    config = transformers.BertConfig(
        vocab_size=args.vocab_size, hidden_size=args.hidden_size,
        num_hidden_layers=args.num_layers, num_attention_heads=args.hidden_size // 64,
        intermediate_size=4 * args.hidden_size, max_position_embeddings=512,
        type_vocab_size=2, hidden_act="gelu_new",  # the original's tanh-approximate GELU
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, initializer_range=0.02)
    model = transformers.BertForPreTraining(config)
    if args.init == "truncated":
        truncated_normal_init(model, config.initializer_range)
    model.train()
    optimizer = create_optimizer(model, args)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, recipe.learning_rate_factor("original", args.num_warmup_steps,
                                          args.num_train_steps))
    batches = epoch_batches(len(train["input_ids"]), args.train_batch_size,
                            np.random.default_rng(args.seed))
    start = time.time()
    train_seconds, segment_loss, segment_steps = 0.0, 0.0, 0
    for step in range(1, args.num_train_steps + 1):
        tick = time.time()
        batch = to_tensors(train, next(batches))
        mlm, nsp = losses(*forward(model, batch), batch)
        loss = mlm + nsp
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        train_seconds += time.time() - tick
        segment_loss += loss.item()
        segment_steps += 1
        if step % args.eval_every and step != args.num_train_steps:
            continue
        point = {"impl": "hf", "adam": args.adam, "init": args.init, "seed": args.seed,
                 "step": step,
                 "train_loss": round(segment_loss / segment_steps, 4),
                 "examples_per_second": round(
                     step * args.train_batch_size / train_seconds, 2)}
        for name, data, limit in (("heldout", heldout, None),
                                  ("train", train, args.eval_train_batches)):
            for key, value in evaluate(model, data, args.eval_batch_size, limit).items():
                point[f"{name}_{key}"] = round(value, 4)
        point["elapsed_s"] = round(time.time() - start, 1)
        point.update(torch=torch.__version__, transformers=transformers.__version__,
                     threads=torch.get_num_threads())
        machine.emit({**point, **machine.describe()}, args.out)
        segment_loss, segment_steps = 0.0, 0
        if not math.isfinite(point["train_loss"]):
            sys.exit(f"hf_pretraining.py: the loss is {point['train_loss']} at step {step}")
    model.save_pretrained(args.output_dir)
    with open(os.path.join(args.output_dir, "run.json"), "w", encoding="utf-8") as f:
        json.dump(vars(args), f, indent=2)


if __name__ == "__main__":
    main()
