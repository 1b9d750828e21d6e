"""The bench-peers harness's pretraining step, as data: configs, workloads, batch and FLOPs.

bench/step_ab.py and bench/step_profile.py train bert_tf's model
(bench/peer_adapter.py) exactly as ../shared/bench-peers trains it, without
importing the harness: this module holds the harness's numbers (the model
configs, the batch and sequence length of each, the masked positions per
sequence), builds the same synthetic batch and counts a step's matmul FLOPs
the same way.

A config is a dict with the harness's keys, the ones peer_adapter.build reads:
vocab_size, num_layers, hidden, heads, intermediate, max_position, type_vocab.
"""

import numpy as np

CONFIGS = {
    # BERT-Base: uncased_L-12_H-768_A-12.
    "bert_base": {"vocab_size": 30522, "num_layers": 12, "hidden": 768, "heads": 12,
                  "intermediate": 3072, "max_position": 512, "type_vocab": 2},
    # BERT-Tiny: uncased_L-2_H-128_A-2.
    "bert_tiny": {"vocab_size": 30522, "num_layers": 2, "hidden": 128, "heads": 2,
                  "intermediate": 512, "max_position": 512, "type_vocab": 2},
}

# The harness's training workload of each config: (batch size, sequence length).
TRAIN_WORKLOADS = {"bert_base": (8, 128), "bert_tiny": (32, 128)}

# Masked positions per sequence: BERT's max_predictions_per_seq at sequence length 128.
MAX_PREDICTIONS = 20

# Token ids are drawn from [_FIRST_WORD_ID, vocab_size): past [PAD], [unused*],
# [UNK], [CLS], [SEP] and [MASK] of the BERT vocab.
_FIRST_WORD_ID = 999


def make_batch(config, batch_size, seq_length, num_predictions, rng):
    """One synthetic pretraining batch, with its labels, as the harness makes it.

    Every token is a random word id, every sequence is full length (no
    padding), its first half is segment 0 and the rest segment 1, and each
    sequence has num_predictions distinct masked positions, never position 0
    ([CLS]), in increasing order. The values are drawn from rng in the
    harness's order, so the same seed gives the harness's batch.

    Args:
      config: A CONFIGS entry; its vocab_size bounds the ids.
      batch_size: Sequences in the batch, B.
      seq_length: Tokens per sequence, S.
      num_predictions: Masked positions per sequence, P (below S).
      rng: A numpy.random.Generator.

    Returns:
      (inputs, labels), dicts of int32 numpy arrays: inputs "token_ids",
      "segment_ids", "padding_mask" (each [B, S]) and "mask_positions"
      ([B, P]); labels "mlm" ([B, P], the original ids at the masked
      positions) and "nsp" ([B], 0 or 1).
    """
    vocab_size = config["vocab_size"]
    first_half = seq_length // 2
    token_ids = rng.integers(_FIRST_WORD_ID, vocab_size, size=(batch_size, seq_length),
                             dtype=np.int32)  # [B, S]
    segment_ids = np.zeros((batch_size, seq_length), np.int32)  # [B, S]
    segment_ids[:, first_half:] = 1
    padding_mask = np.ones((batch_size, seq_length), np.int32)  # [B, S]
    candidates = np.arange(1, seq_length)  # [S - 1]: every position but [CLS]
    mask_positions = np.empty((batch_size, num_predictions), np.int32)  # [B, P]
    for row in range(batch_size):
        mask_positions[row] = rng.choice(candidates, num_predictions, replace=False)
    mask_positions.sort(axis=1)
    mlm_labels = rng.integers(_FIRST_WORD_ID, vocab_size, size=(batch_size, num_predictions),
                              dtype=np.int32)  # [B, P]
    nsp_labels = rng.integers(0, 2, size=(batch_size,), dtype=np.int32)  # [B]
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask,
              "mask_positions": mask_positions}
    return inputs, {"mlm": mlm_labels, "nsp": nsp_labels}


def train_flops(config, batch_size, seq_length, mlm_positions):
    """The matmul FLOPs of one training step, as the harness counts them.

    A multiply-add is 2 FLOPs; biases, LayerNorm and embedding lookups are not
    counted. With L layers, H hidden, I intermediate, V vocab, B batch, S
    sequence length, T = B * S tokens and M positions the masked-LM head is
    evaluated on:
      encoder weights  N = L * (4 * H^2 + 2 * H * I)   (Q, K, V, O; FFN in and out)
      forward          2 * N * T + 4 * L * S * H * T   (the weights; Q K^T and A V)
                       + B * (2 * H^2 + 2 * H * 2)     (pooler, next-sentence head)
                       + M * (2 * H^2 + 2 * H * V)     (MLM transform, output projection)
      training step    3 * forward                     (the backward pass as 2 forwards)

    Args:
      config: A CONFIGS entry.
      batch_size: B.
      seq_length: S.
      mlm_positions: M, the masked positions of the whole batch (B * P for
        a head evaluated only at the masked positions, as bert_tf's is).

    Returns:
      The FLOPs of one step, an int.
    """
    layers, hidden = config["num_layers"], config["hidden"]
    intermediate, vocab_size = config["intermediate"], config["vocab_size"]
    tokens = batch_size * seq_length
    encoder_weights = layers * (4 * hidden * hidden + 2 * hidden * intermediate)
    encoder = 2 * encoder_weights * tokens + 4 * layers * seq_length * hidden * tokens
    pooler_and_nsp = batch_size * (2 * hidden * hidden + 2 * hidden * 2)
    masked_lm = mlm_positions * (2 * hidden * hidden + 2 * hidden * vocab_size)
    return 3 * (encoder + pooler_and_nsp + masked_lm)
