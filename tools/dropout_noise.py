"""How much noise dropout adds, in bert_tf and in Hugging Face, from the same weights.

The check of dropout's side of the SQuAD comparison: bert_tf draws its masks
its own way (bert_tf/model/dropout.py: 16 random bits per element), torch its way.
From the same all-MiniLM-L6-v2 weights, on the same 8 training windows
(bert_tf's, from `python -m tools.squad_swap --mode=train_windows`), each
library runs the encoder once without dropout and --draws times with it, and
projects the final hidden states onto one random span head. Two steps, in two
venvs:

  .venv/bin/python -m tools.dropout_noise --side=bert_tf --windows=bt.npz --out=/tmp/noise.npz
  /tmp/hfvenv/bin/python -m tools.dropout_noise --side=hf --out=/tmp/noise.npz

The first writes the windows, the head and bert_tf's outputs; the second adds
Hugging Face's and prints one JSON line: for the hidden states and the span
logits of each library, the standard deviation across draws (averaged over
the real tokens' elements), the mean absolute deviation of a draw from the
output without dropout, and the mean absolute distance of the draws' mean from
it; and how far the two libraries' outputs without dropout are apart.
"""

import argparse

import numpy as np

from bench import machine, minilm

WINDOWS = 8


def bert_tf_side(args):
    from bert_tf.checkpoints import checkpoints, model_files
    from bert_tf.model.modeling import BertModel

    windows = np.load(args.windows)
    rng = np.random.default_rng(0)
    chosen = rng.choice(len(windows["input_ids"]), WINDOWS, replace=False)
    batch = {name: windows[name][chosen].astype(np.int32)
             for name in ("input_ids", "input_mask", "segment_ids")}
    files = model_files.find(minilm.model_dir(), max_seq_length=batch["input_ids"].shape[1])
    encoder = BertModel(files.bert_config)
    checkpoints.load_weights(minilm.model_dir(), encoder)
    head = (0.02 * rng.standard_normal((2, files.bert_config.hidden_size))).astype(np.float32)

    def run(training):
        hidden = encoder(batch, training=training)["sequence_output"].numpy()
        return hidden, np.einsum("bsh,kh->bsk", hidden, head)

    plain_hidden, plain_logits = run(False)
    hidden, logits = zip(*[run(True) for _ in range(args.draws)], strict=True)
    np.savez(args.out, **batch, head=head, plain_hidden=plain_hidden, plain_logits=plain_logits,
             hidden=np.stack(hidden), logits=np.stack(logits))


def noise(plain, draws, real):
    """The dropout noise of draws [draws, batch, seq, ...] around plain [batch, seq, ...]."""
    tokens = draws[:, real]  # [draws, real tokens, ...]
    deviation = tokens - plain[real][None]
    return {"std_across_draws": round(float(tokens.std(axis=0).mean()), 5),
            "mean_abs_deviation": round(float(np.abs(deviation).mean()), 5),
            "mean_of_draws_from_plain": round(float(np.abs(deviation.mean(axis=0)).mean()), 5)}


def hf_side(args):
    import torch
    from transformers import BertModel

    data = dict(np.load(args.out))
    model = BertModel.from_pretrained(minilm.model_dir(), add_pooling_layer=False)
    inputs = {"input_ids": torch.tensor(data["input_ids"], dtype=torch.long),
              "attention_mask": torch.tensor(data["input_mask"], dtype=torch.long),
              "token_type_ids": torch.tensor(data["segment_ids"], dtype=torch.long)}
    torch.manual_seed(0)

    def run(training):
        model.train(training)
        with torch.no_grad():
            hidden = model(**inputs).last_hidden_state.numpy()
        return hidden, np.einsum("bsh,kh->bsk", hidden, data["head"])

    plain_hidden, plain_logits = run(False)
    hidden, logits = zip(*[run(True) for _ in range(len(data["hidden"]))], strict=True)
    real = data["input_mask"].astype(bool)
    machine.emit({
        "draws": len(hidden), "windows": len(real),
        "plain_max_abs_diff_hidden": float(np.abs(data["plain_hidden"][real]
                                                  - plain_hidden[real]).max()),
        "hidden": {"bert_tf": noise(data["plain_hidden"], data["hidden"], real),
                   "hf": noise(plain_hidden, np.stack(hidden), real)},
        "span_logits": {"bert_tf": noise(data["plain_logits"], data["logits"], real),
                        "hf": noise(plain_logits, np.stack(logits), real)},
        **machine.describe()}, args.results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", choices=("bert_tf", "hf"), required=True)
    parser.add_argument("--windows", help="bert_tf side: the training windows' npz.")
    parser.add_argument("--draws", type=int, default=32, help="bert_tf side: dropout draws.")
    parser.add_argument("--out", required=True, help="The npz the two sides share.")
    parser.add_argument("--results", default=None, help="hf side: also append the line here.")
    args = parser.parse_args()
    if args.side == "bert_tf":
        if not args.windows:
            parser.error("--side=bert_tf needs --windows")
        bert_tf_side(args)
    else:
        hf_side(args)


if __name__ == "__main__":
    main()
