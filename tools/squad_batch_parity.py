"""One SQuAD training batch through bert_tf and through Hugging Face, from the same weights.

The check of the model side of the SQuAD gap against Hugging Face: the same windows (bert_tf's
own, from run_squad.py's pipeline), the same all-MiniLM-L6-v2 weights and the
same span-head weights, dropout off; compares the loss, the logits, the
gradients and the first AdamW update of both. Two steps, in two venvs:

  .venv/bin/python -m tools.squad_batch_parity --side=bert_tf --out=/tmp/squad_batch.npz
  /tmp/hfvenv/bin/python -m tools.squad_batch_parity --side=hf --out=/tmp/squad_batch.npz

The first writes the batch, the head's weights and bert_tf's results; the second
adds Hugging Face's and prints one JSON line comparing them.
"""

import argparse
import json
import os

import numpy as np

from bench import minilm

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "data", "squad")
BATCH, SEQ, LR = 32, 256, 1e-4


def bert_tf_side(out):
    import dataclasses

    import tensorflow as tf

    from bert_tf.checkpoints import checkpoints, model_files
    from bert_tf.data import squad
    from bert_tf.model.modeling import BertModel
    from bert_tf.tasks import QuestionAnsweringTask
    from bert_tf.training import optimization

    files = model_files.find(minilm.model_dir(), max_seq_length=SEQ)
    examples, _ = squad.read_squad_examples(
        os.path.join(SHARED, "train-v2.0-first10.json"), True, False)
    windows, _ = squad.convert_examples_to_features(
        examples[:60], files.tokenizer(), SEQ, 128, 64, True)
    windows = windows[:BATCH]
    batch = {name: np.array([getattr(w, name) for w in windows], np.int32)
             for name in ("input_ids", "input_mask", "segment_ids")}
    batch["start_positions"] = np.array([[w.start_position] for w in windows], np.int32)
    batch["end_positions"] = np.array([[w.end_position] for w in windows], np.int32)
    batch["is_real_example"] = np.ones((len(windows), 1), np.int32)
    config = dataclasses.replace(files.bert_config, hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0)
    task = QuestionAnsweringTask(squad.SquadSettings(max_seq_length=SEQ))
    encoder = BertModel(config)
    heads = task.create_heads(encoder)
    checkpoints.load_weights(minilm.model_dir(), encoder, heads)
    rng = np.random.default_rng(0)
    head_w = (0.02 * rng.standard_normal((2, config.hidden_size))).astype(np.float32)
    heads["squad"].output_weights.assign(head_w)
    variables = list(encoder.trainable_variables) + list(heads["squad"].trainable_variables)
    with tf.GradientTape() as tape:
        outputs = task.forward(encoder, heads, batch, training=True)
        loss = task.losses(batch, outputs)["loss"]
    grads = tape.gradient(loss, variables)
    # The pooler is no part of the span model: no gradient (nor a weight in
    # Hugging Face's BertForQuestionAnswering).
    grads = [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
             for g, v in zip(grads, variables, strict=True)]
    norm = float(tf.linalg.global_norm(grads))
    word_index = next(i for i, v in enumerate(variables) if "word_embeddings" in v.path)
    before = [v.numpy().copy() for v in variables]
    # No warmup, so that the first update's learning rate is not 0.
    optimizer = optimization.create_optimizer(LR, 100, 0)
    optimizer.build(variables)
    first_lr = float(optimizer.learning_rate)
    optimizer.apply(grads, variables)
    updates = [v.numpy() - b for v, b in zip(variables, before, strict=True)]
    norms = {v.path: float(tf.norm(g)) for v, g in zip(variables, grads, strict=True)}
    with open(out + ".tf_norms.json", "w", encoding="utf-8") as f:
        json.dump(norms, f, indent=0)
    np.savez(out, **batch, head_w=head_w, tf_loss=float(loss),
             tf_start_logits=outputs["start_logits"].numpy(),
             tf_end_logits=outputs["end_logits"].numpy(), tf_grad_norm=norm,
             tf_head_grad=grads[-2].numpy(), tf_head_bias_grad=grads[-1].numpy(),
             tf_word_grad=grads[word_index].numpy(), tf_word_update=updates[word_index],
             tf_head_update=updates[-2], tf_lr_step1=first_lr)
    print(json.dumps({"side": "bert_tf", "loss": float(loss), "grad_norm": norm}))


def hf_side(out):
    import torch
    from transformers import BertForQuestionAnswering

    data = dict(np.load(out))
    model = BertForQuestionAnswering.from_pretrained(minilm.model_dir())
    model.eval()  # no dropout
    with torch.no_grad():
        model.qa_outputs.weight.copy_(torch.tensor(data["head_w"]))
        model.qa_outputs.bias.zero_()
    outputs = model(input_ids=torch.tensor(data["input_ids"], dtype=torch.long),
                    attention_mask=torch.tensor(data["input_mask"], dtype=torch.long),
                    token_type_ids=torch.tensor(data["segment_ids"], dtype=torch.long),
                    start_positions=torch.tensor(data["start_positions"][:, 0], dtype=torch.long),
                    end_positions=torch.tensor(data["end_positions"][:, 0], dtype=torch.long))
    outputs.loss.backward()
    word = model.bert.embeddings.word_embeddings.weight
    word_grad = word.grad.numpy().copy()
    head_grad = model.qa_outputs.weight.grad.numpy().copy()
    with open(out + ".hf_norms.json", "w", encoding="utf-8") as f:
        json.dump({n: float(p.grad.norm()) for n, p in model.named_parameters()
                   if p.grad is not None}, f, indent=0)
    norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
    groups = [{"params": [p for n, p in model.named_parameters()
                          if not ("bias" in n or "LayerNorm" in n)], "weight_decay": 0.01},
              {"params": [p for n, p in model.named_parameters()
                          if "bias" in n or "LayerNorm" in n], "weight_decay": 0.0}]
    # The learning rate bert_tf's schedule gives its first update.
    optimizer = torch.optim.AdamW(groups, lr=float(data["tf_lr_step1"]), eps=1e-6)
    before_word, before_head = word.detach().numpy().copy(), model.qa_outputs.weight.detach(
    ).numpy().copy()
    optimizer.step()
    word_update = word.detach().numpy() - before_word
    head_update = model.qa_outputs.weight.detach().numpy() - before_head

    def rel(a, b):
        return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))

    print(json.dumps({
        "loss": {"bert_tf": float(data["tf_loss"]), "hf": float(outputs.loss)},
        "grad_norm": {"bert_tf": float(data["tf_grad_norm"]), "hf": norm},
        "max_abs_diff_start_logits": float(np.abs(
            data["tf_start_logits"] - outputs.start_logits.detach().numpy()).max()),
        "max_abs_diff_end_logits": float(np.abs(
            data["tf_end_logits"] - outputs.end_logits.detach().numpy()).max()),
        "rel_diff_head_grad": rel(data["tf_head_grad"], head_grad),
        "rel_diff_word_embedding_grad": rel(data["tf_word_grad"], word_grad),
        # Row 0 is [PAD]: Hugging Face's embedding has padding_idx=0 and gives it
        # no gradient; bert_tf, as the original, trains it like any row.
        "rel_diff_word_embedding_grad_without_pad": rel(data["tf_word_grad"][1:],
                                                        word_grad[1:]),
        "pad_row_grad_norm": {"bert_tf": float(np.linalg.norm(data["tf_word_grad"][0])),
                              "hf": float(np.linalg.norm(word_grad[0]))},
        "rel_diff_word_embedding_update": rel(data["tf_word_update"], word_update),
        "rel_diff_head_update": rel(data["tf_head_update"], head_update),
        "first_learning_rate": float(data["tf_lr_step1"])}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", choices=["bert_tf", "hf"], required=True)
    parser.add_argument("--out", default="/tmp/squad_batch.npz")
    args = parser.parse_args()
    (bert_tf_side if args.side == "bert_tf" else hf_side)(args.out)


if __name__ == "__main__":
    main()
