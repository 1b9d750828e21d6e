"""What every Hugging Face peer's training shares: seeds, AdamW's groups, the schedules.

The peers train as the original BERT and bert_tf do: AdamW with weight decay
on every weight but LayerNorm weights and biases, and a learning rate that
rises linearly over the warmup and then falls linearly to 0. Written once
here so that the peers differ only in their task.
"""

import random

import numpy as np
import torch

SCHEDULES = ("linear", "original")


def seed_everything(seed):
    """Seeds Python's, numpy's and torch's generators.

    Args:
      seed: An int.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def parameter_groups(model, weight_decay=0.01):
    """AdamW's parameter groups: weight decay on all but LayerNorm weights and biases.

    Args:
      model: A torch.nn.Module with BERT's parameter names.
      weight_decay: The decayed group's rate.

    Returns:
      A list of two param-group dicts for a torch optimizer.
    """
    decayed, exempt = [], []
    for name, parameter in model.named_parameters():
        (exempt if "LayerNorm" in name or name.endswith("bias") else decayed).append(parameter)
    return [{"params": decayed, "weight_decay": weight_decay},
            {"params": exempt, "weight_decay": 0.0}]


def learning_rate_factor(schedule, warmup, updates):
    """The learning rate's multiplier at each update (numbered from 0), for LambdaLR.

    "linear" is Hugging Face's: up over warmup, then down from 1 to 0 over the
    remaining updates (bert_tf's default). "original" is the original BERT's
    (bert_tf's with --nodecay_after_warmup): up over warmup, then the decay
    1 - step / updates that started at step 0, so the rate drops to
    1 - warmup / updates of the peak (0.9 at 10% warmup) right after warmup.

    Args:
      schedule: One of SCHEDULES.
      warmup: Updates of rising rate.
      updates: The update the rate reaches 0 at.

    Returns:
      A function of the update number.
    """
    def factor(step):
        if step < warmup:
            return step / max(1, warmup)
        if schedule == "original":
            return max(0.0, 1.0 - step / updates)
        return max(0.0, (updates - step) / max(1, updates - warmup))
    return factor
