"""Makes tests/fixtures/parity_pretraining.npz: one pretraining step of Hugging Face BERT.

The pretraining parity test (tests/unit/tasks/test_pretraining_parity.py) loads the same
weights into bert_tf's BertModel and PretrainingTask heads, runs the same
batch, and compares the logits, the losses, every gradient and the first
update of each optimizer. This tool needs torch and transformers (and
imports no bert_tf); the test needs neither. Regenerate the fixture with:

  python -m venv /tmp/hfvenv && \\
      /tmp/hfvenv/bin/pip install torch==2.13.0 transformers safetensors numpy
  /tmp/hfvenv/bin/python -m tools.make_pretraining_parity_fixture

The reference is the original run_pretraining.py's recipe, computed with
transformers' BertForPreTraining modules: the masked-LM head (cls.predictions)
on the sequence output gathered at masked_lm_positions, the next-sentence head
(cls.seq_relationship) on the pooled output, masked-LM loss sum(weight * nll) /
(sum(weight) + 1e-5), next-sentence loss the mean cross-entropy, their sum the
loss. The weights are float32 (what the test loads); the forward and backward
passes run in float64 on exactly those values, so that the test's tolerance
measures bert_tf's float32 error alone. The optimizers' first updates are
written here in numpy from the papers, independently of bert_tf's code.

The file holds (names are Hugging Face's state-dict names, "bert."-prefixed):
  config: BertForPreTraining's config.json, as a string.
  optimizer: the hyperparameters of the updates, as a JSON string.
  init/<name>: the initial weights (the state dict, tied copies included,
    without the position_ids / token_type_ids buffers), float32.
  input_ids, input_mask, segment_ids [batch, seq]; masked_lm_positions,
    masked_lm_ids [batch, predictions], int32; masked_lm_weights [batch,
    predictions], float32; next_sentence_labels [batch, 1], int32: the batch,
    as create_pretraining_data.py writes it and the reader hands it over.
  mlm_logits [batch, predictions, vocab], nsp_logits [batch, 2]: float32.
  loss, masked_lm_loss, next_sentence_loss: float64 scalars.
  grad/<name>: the loss's gradient for every parameter (the tied decoder
    weight is the word-embedding table, which gets both gradients), float32.
  gradient_norm: the global norm of those gradients, before clipping.
  adamw/<name>, adamw_original/<name>, lamb/<name>: every parameter after one
    update from the float32 gradients above (clipped first), float32.
"""

import argparse
import json
import os

import numpy as np
import torch
import transformers

CONFIG = {
    "vocab_size": 120,
    # Hidden 32 rather than 64 keeps the fixture (weights, gradients and three
    # updated copies) well under 1 MB; 4 heads of 8 still test the head split.
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    # Hugging Face's "gelu" is the exact erf form (bert_tf's "gelu_exact").
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    # Ten times BERT's 0.02: at 0.02 a model this narrow attends almost
    # uniformly, and the query and key gradients (about 1e-5) would sit near
    # Adam's epsilon and test little. 0.2 also puts the gradient norm near 4,
    # well above the clip norm.
    "initializer_range": 0.2,
}
SEED = 1234
BATCH, SEQ_LENGTH, PREDICTIONS = 8, 32, 6
# Real lengths of the 8 sequences: full ones and varied padding.
LENGTHS = (32, 30, 27, 23, 19, 14, 32, 10)
# The original's num_to_predict = min(max_predictions_per_seq,
# max(1, round(len * masked_lm_prob))): 0.2 gives rows with all 6 slots
# used and rows with padded slots.
MASKED_LM_PROB = 0.2
PAD_ID, CLS_ID, SEP_ID, MASK_ID = 0, 2, 3, 4
FIRST_WORD_ID = 5  # ids below are special tokens

LEARNING_RATE = 1e-3
WEIGHT_DECAY_RATE = 0.01
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-6
CLIP_NORM = 1.0
# The original's exclude_from_weight_decay, matched anywhere in the name.
EXCLUDED_FROM_DECAY = ("LayerNorm", "layer_norm", "bias")


def build_model():
    """A random float32 BertForPreTraining with non-trivial biases and LayerNorms.

    transformers initializes biases to 0 and LayerNorm weights to 1, which
    would leave the decay exemption and the bias gradients' layout untested
    (a wrongly decayed zero stays zero).

    Returns:
      The model, in eval mode (no dropout), with eager attention.
    """
    torch.manual_seed(SEED)
    config = transformers.BertConfig(**CONFIG, attn_implementation="eager")
    model = transformers.BertForPreTraining(config).float().eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("LayerNorm.weight"):
                parameter.copy_(1.0 + 0.2 * torch.randn_like(parameter))
            elif name.endswith("bias"):
                parameter.copy_(0.1 * torch.randn_like(parameter))
    return model


def make_batch(rng):
    """One batch of pretraining features, packed and masked as the original does.

    Each row is [CLS] A [SEP] B [SEP] then padding; segment ids are 0 up to
    the first [SEP] and 1 after it. Masked positions are sorted, and each
    masked token becomes [MASK] 80% of the time, stays 10% and becomes a
    random word 10%. Unused prediction slots hold position 0, id 0 and
    weight 0, as create_pretraining_data.py writes them.

    Args:
      rng: A numpy Generator.

    Returns:
      {feature name: np.ndarray}, int32 except masked_lm_weights (float32).
    """
    batch = {key: np.zeros((BATCH, SEQ_LENGTH), np.int32)
             for key in ("input_ids", "input_mask", "segment_ids")}
    for key in ("masked_lm_positions", "masked_lm_ids"):
        batch[key] = np.zeros((BATCH, PREDICTIONS), np.int32)
    batch["masked_lm_weights"] = np.zeros((BATCH, PREDICTIONS), np.float32)
    for row, length in enumerate(LENGTHS):
        first = int(rng.integers(1, length - 3))  # tokens of A; B gets the rest
        words = rng.integers(FIRST_WORD_ID, CONFIG["vocab_size"], size=length - 3)
        tokens = [CLS_ID, *words[:first], SEP_ID, *words[first:], SEP_ID]
        batch["input_ids"][row, :length] = tokens
        batch["input_mask"][row, :length] = 1
        batch["segment_ids"][row, first + 2:length] = 1
        candidates = [i for i, t in enumerate(tokens) if t not in (CLS_ID, SEP_ID)]
        count = min(PREDICTIONS, max(1, round(length * MASKED_LM_PROB)))
        positions = np.sort(rng.choice(candidates, size=count, replace=False))
        for slot, position in enumerate(positions):
            draw = rng.random()
            if draw < 0.8:
                batch["input_ids"][row, position] = MASK_ID
            elif draw >= 0.9:
                batch["input_ids"][row, position] = rng.integers(
                    FIRST_WORD_ID, CONFIG["vocab_size"])
            batch["masked_lm_positions"][row, slot] = position
            batch["masked_lm_ids"][row, slot] = tokens[position]
            batch["masked_lm_weights"][row, slot] = 1.0
    # Half actual next sentences (0), half random ones (1), in random order.
    batch["next_sentence_labels"] = rng.permutation(
        np.repeat(np.arange(2, dtype=np.int32), BATCH // 2))[:, np.newaxis]
    return batch


def reference_step(model, batch):
    """The original run_pretraining.py's forward pass, losses and gradients.

    Args:
      model: A float64 BertForPreTraining in eval mode.
      batch: make_batch()'s features.

    Returns:
      (outputs, grads): outputs {"mlm_logits", "nsp_logits", "loss",
      "masked_lm_loss", "next_sentence_loss"} as float64 arrays, grads
      {parameter name: float64 gradient}.
    """
    tensors = {key: torch.from_numpy(value) for key, value in batch.items()}
    model.zero_grad()
    encoded = model.bert(input_ids=tensors["input_ids"].long(),
                         attention_mask=tensors["input_mask"].long(),
                         token_type_ids=tensors["segment_ids"].long())
    rows = torch.arange(BATCH)[:, None]
    # [batch, predictions, hidden]
    gathered = encoded.last_hidden_state[rows, tensors["masked_lm_positions"].long()]
    # [batch, predictions, vocab]
    mlm_logits = model.cls.predictions(gathered)
    # [batch, 2]
    nsp_logits = model.cls.seq_relationship(encoded.pooler_output)
    log_probs = torch.log_softmax(mlm_logits, dim=-1)
    # [batch, predictions]
    nll = -log_probs.gather(-1, tensors["masked_lm_ids"].long()[..., None])[..., 0]
    weights = tensors["masked_lm_weights"].double()
    masked_lm_loss = (weights * nll).sum() / (weights.sum() + 1e-5)
    next_sentence_loss = torch.nn.functional.cross_entropy(
        nsp_logits, tensors["next_sentence_labels"][:, 0].long())
    loss = masked_lm_loss + next_sentence_loss
    loss.backward()
    outputs = {"mlm_logits": mlm_logits, "nsp_logits": nsp_logits, "loss": loss,
               "masked_lm_loss": masked_lm_loss, "next_sentence_loss": next_sentence_loss}
    outputs = {key: value.detach().numpy() for key, value in outputs.items()}
    # named_parameters() lists each tied parameter once, under its first name:
    # the decoder's weight is bert.embeddings.word_embeddings.weight and its
    # bias cls.predictions.bias, each with the sum of both uses' gradients.
    grads = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    return outputs, grads


def uses_weight_decay(name):
    """The original's rule: no decay for LayerNorm weights and biases, by name."""
    return not any(pattern in name for pattern in EXCLUDED_FROM_DECAY)


def clip_by_global_norm(grads, clip_norm):
    """Scales all gradients by clip_norm / max(norm, clip_norm), as tf.clip_by_global_norm.

    Returns:
      (clipped grads, the global norm before clipping).
    """
    norm = np.sqrt(sum(np.sum(np.square(g)) for g in grads.values()))
    scale = clip_norm / max(norm, clip_norm)
    return {name: g * scale for name, g in grads.items()}, norm


def adam_direction(grad, bias_correction):
    """Adam's first update direction m / (sqrt(v) + epsilon), from zero moments.

    Args:
      grad: The (clipped) gradient, float64.
      bias_correction: Divide m and v by (1 - beta^1), as Adam (Kingma & Ba)
        does; the original BERT optimizer does not.

    Returns:
      The direction, float64.
    """
    m = (1.0 - BETA_1) * grad
    v = (1.0 - BETA_2) * np.square(grad)
    if bias_correction:
        m = m / (1.0 - BETA_1)
        v = v / (1.0 - BETA_2)
    return m / (np.sqrt(v) + EPSILON)


def adamw_step(weights, grads, bias_correction):
    """One AdamW update with decoupled weight decay (Loshchilov & Hutter).

    As the original BERT applies it: update = m / (sqrt(v) + eps) + wd * w,
    w -= lr * update, with the decay term skipped for LayerNorm and biases.

    Args:
      weights: {name: float64 weight}.
      grads: {name: float64 clipped gradient}.
      bias_correction: See adam_direction().

    Returns:
      {name: float64 updated weight}.
    """
    updated = {}
    for name, w in weights.items():
        update = adam_direction(grads[name], bias_correction)
        if uses_weight_decay(name):
            update = update + WEIGHT_DECAY_RATE * w
        updated[name] = w - LEARNING_RATE * update
    return updated


def lamb_step(weights, grads):
    """One LAMB update (You et al., 2019, Algorithm 2), with bias correction.

    r = m_hat / (sqrt(v_hat) + eps) + wd * w, w -= lr * (||w|| / ||r||) * r,
    with ratio 1 when either norm is 0. The paper applies the trust ratio to
    every layer; bert_tf's documented convention (optimization.Lamb) exempts
    the tensors that get no weight decay (LayerNorm, biases) from the ratio
    as well, so their update is plain Adam's: this follows bert_tf.

    Args:
      weights: {name: float64 weight}.
      grads: {name: float64 clipped gradient}.

    Returns:
      {name: float64 updated weight}.
    """
    updated = {}
    for name, w in weights.items():
        update = adam_direction(grads[name], bias_correction=True)
        if uses_weight_decay(name):
            update = update + WEIGHT_DECAY_RATE * w
            weight_norm, update_norm = np.linalg.norm(w), np.linalg.norm(update)
            if weight_norm > 0 and update_norm > 0:
                update = update * (weight_norm / update_norm)
        updated[name] = w - LEARNING_RATE * update
    return updated


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "parity_pretraining.npz"))
    args = parser.parse_args()

    model = build_model()
    buffers = {name for name, _ in model.named_buffers()}
    initial = {name: value.numpy().copy() for name, value in model.state_dict().items()
               if name not in buffers}
    config_json = model.config.to_json_string()
    batch = make_batch(np.random.default_rng(SEED))
    outputs, grads = reference_step(model.double(), batch)

    # The optimizers start from what the test hands bert_tf's: the float32
    # weights and gradients, here in float64 arithmetic.
    grads32 = {name: g.astype(np.float32) for name, g in grads.items()}
    weights = {name: initial[name].astype(np.float64) for name in grads}
    clipped, norm = clip_by_global_norm(
        {name: g.astype(np.float64) for name, g in grads32.items()}, CLIP_NORM)
    if norm <= CLIP_NORM:
        raise SystemExit(f"gradient norm {norm:.3f} <= {CLIP_NORM}: clipping would be untested")
    updates = {"adamw": adamw_step(weights, clipped, bias_correction=True),
               "adamw_original": adamw_step(weights, clipped, bias_correction=False),
               "lamb": lamb_step(weights, clipped)}

    arrays = {
        "config": np.array(config_json),
        "optimizer": np.array(json.dumps({
            "learning_rate": LEARNING_RATE, "weight_decay_rate": WEIGHT_DECAY_RATE,
            "beta_1": BETA_1, "beta_2": BETA_2, "epsilon": EPSILON,
            "clip_norm": CLIP_NORM})),
        **{f"init/{name}": value for name, value in initial.items()},
        **batch,
        "mlm_logits": outputs["mlm_logits"].astype(np.float32),
        "nsp_logits": outputs["nsp_logits"].astype(np.float32),
        **{key: outputs[key] for key in ("loss", "masked_lm_loss", "next_sentence_loss")},
        **{f"grad/{name}": value for name, value in grads32.items()},
        "gradient_norm": np.array(norm),
        "transformers_version": np.array(transformers.__version__),
        "torch_version": np.array(torch.__version__),
    }
    for optimizer, updated in updates.items():
        arrays.update({f"{optimizer}/{name}": value.astype(np.float32)
                       for name, value in updated.items()})
    np.savez_compressed(args.output, **arrays)
    print(f"wrote {args.output}: {len(grads)} parameters, loss {float(outputs['loss']):.6f}, "
          f"gradient norm {norm:.4f}, {os.path.getsize(args.output)} bytes")


if __name__ == "__main__":
    main()
