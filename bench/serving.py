"""Raw-text serving speed: bert_tf's SavedModel against Hugging Face transformers.

One all-MiniLM-L6-v2 classifier (the real encoder, and a 2-class head with
seeded random weights: speed does not depend on the head's values) is
exported by bert_tf.serving.export.export_task in each --shapes variant (VARIANTS:
dynamic or static shapes, "_xla" for an XLA-compiled export, "_bfloat16" for
one that computes in bfloat16, --inference_precision=bfloat16), and written as
a Hugging Face folder
(BertForSequenceClassification) with the same weights. Each is then served
in its own fresh process, in float32 unless "_bfloat16", on real sentences of three lengths
picked from --corpus by their number of word pieces: short (10-14, about
12), medium (36-44, about 40) and long (110-126, about 120):
- bert_tf: tf.saved_model.load and its "single" signature, strings in and
  probabilities out (tokenization included, in the graph);
- hf: transformers' fast tokenizer (dynamic padding, truncation at
  max_seq_length) and BertForSequenceClassification in eager mode under
  torch.inference_mode, softmax included.
A process first times its first call at batch 32 and at batch 1 (for XLA,
that compiles the shape), serves every batch once, then measures batch 32
(sentences/s over --sentences sentences), then batch 1 (p50 and p90 latency
over --latency_sentences sentences), and reports its peak RSS (VmHWM,
which includes loading the model).
Runs alternate between the implementations, --repeats times each.

Prints one JSON line per process and length, then per length and measure
the medians and bert_tf over hf (for latency, hf over bert_tf: above 1 means
bert_tf is faster), and one line on how far the outputs agree: each export
against the static export and against hf, over every sentence.

Example, from the repository root:
  .venv/bin/python -m bench.serving --hf_python=/tmp/hfvenv/bin/python \\
      --out=bench/results/serving-$(date +%F).jsonl
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

from bench import arguments, machine, minilm
from bert_tf.checkpoints import checkpoints
from bert_tf.data import conll
from bert_tf.model.heads import ClassifierHead
from bert_tf.model.modeling import BertModel
from bert_tf.serving import export
from bert_tf.tasks import ClassificationTask, TaggingTask
from bert_tf.text import tokenization

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = {"short": (10, 14), "medium": (36, 44), "long": (110, 126)}

# Shared by both servers: batches of 32, then one sentence at a time; the
# outputs of the batch-32 pass are saved for the agreement check.
MEASURE = """
import json, sys, time
import numpy as np

def measure(classify, sentences, latency_sentences):
    # The first call of each shape: for XLA, it compiles.
    first_calls = []
    for batch in (sentences[:32], latency_sentences[:1]):
        begin = time.perf_counter()
        classify(batch)
        first_calls.append(time.perf_counter() - begin)
    for start in range(0, len(sentences), 32):
        classify(sentences[start:start + 32])
    for sentence in latency_sentences:
        classify([sentence])
    begin = time.perf_counter()
    outputs = [classify(sentences[start:start + 32]) for start in range(0, len(sentences), 32)]
    seconds = time.perf_counter() - begin
    latencies = []
    for sentence in latency_sentences:
        begin = time.perf_counter()
        classify([sentence])
        latencies.append(time.perf_counter() - begin)
    return np.concatenate(outputs), {
        "batch32_sentences_per_s": len(sentences) / seconds,
        "batch1_p50_ms": float(np.percentile(latencies, 50) * 1e3),
        "batch1_p90_ms": float(np.percentile(latencies, 90) * 1e3),
        "first_batch32_call_s": first_calls[0], "first_batch1_call_s": first_calls[1]}

def serve(classify, sentences_file, outputs_file):
    lengths = json.load(open(sentences_file, encoding="utf-8"))
    results, outputs = {}, {}
    for length, groups in lengths.items():
        outputs[length], results[length] = measure(classify, groups["batch"], groups["latency"])
    np.savez(outputs_file, **outputs)
    # VmHWM, this program's own high-water mark: ru_maxrss would keep the
    # larger RSS of the bench process that started it (Linux carries it
    # across exec).
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    print(json.dumps({"results": results, "peak_rss_mb": peak}))
"""

BERT_TF_SERVER = MEASURE + """
import tensorflow as tf
import tensorflow_text
export_dir, sentences_file, outputs_file = sys.argv[1:]
single = tf.saved_model.load(export_dir).signatures["single"]
serve(lambda texts: single(text_a=tf.constant(texts))["probabilities"].numpy(),
      sentences_file, outputs_file)
"""

HF_SERVER = MEASURE + """
import torch, transformers
folder, max_seq_length, sentences_file, outputs_file = sys.argv[1:]
tokenizer = transformers.BertTokenizerFast(folder + "/vocab.txt", do_lower_case=True)
model = transformers.BertForSequenceClassification.from_pretrained(folder).eval()

def classify(texts):
    inputs = tokenizer(texts, padding=True, truncation=True, max_length=int(max_seq_length),
                       return_tensors="pt")
    with torch.inference_mode():
        return model(**inputs).logits.softmax(-1).numpy()

serve(classify, sentences_file, outputs_file)
"""


def pick_sentences(corpus, vocab_file, count, latency_count):
    """Real sentences of each length, by their number of word pieces.

    Returns:
      {length: {"batch": count sentences, "latency": latency_count others}}.

    Raises:
      ValueError: when the corpus has too few sentences of a length.
    """
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    picked = {length: [] for length in LENGTHS}
    wanted = count + latency_count
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            pieces = len(tokenizer.tokenize(line))
            for length, (low, high) in LENGTHS.items():
                if low <= pieces <= high and len(picked[length]) < wanted:
                    picked[length].append(line)
            if all(len(lines) == wanted for lines in picked.values()):
                break
    for length, lines in picked.items():
        if len(lines) < wanted:
            raise ValueError(f"{corpus} has {len(lines)} sentences of {LENGTHS[length]} word "
                             f"pieces; {wanted} are needed (lower --sentences)")
    return {length: {"batch": lines[:count], "latency": lines[count:]}
            for length, lines in picked.items()}


# The export variants the serving benches compare: shapes, "_xla" for an
# XLA-compiled export (--jit_compile=true) and "_bfloat16" for one that computes
# in bfloat16 (--inference_precision=bfloat16); without them, the default.
VARIANTS = ("dynamic", "dynamic_xla", "static", "static_xla", "dynamic_bfloat16",
            "dynamic_xla_bfloat16")
# The tagger's labels: CoNLL-2003's.
TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def build_models(work_dir, variants, max_seq_length, kind="classifier"):
    """Exports one MiniLM model for bert_tf (each variant) and for HF.

    The real all-MiniLM-L6-v2 encoder, and a head with seeded random weights:
    a 2-class classifier, or a tagger of CoNLL's 9 tags whose bias favours
    entities, so that the entity decoding has work to do.

    Args:
      work_dir: Where the exports and the HF folder go.
      variants: Names from VARIANTS.
      max_seq_length: The exports' limit.
      kind: "classifier" or "tagger".

    Returns:
      ({variant: export_dir}, hf_folder).
    """
    folder = minilm.model_dir()
    config = checkpoints.find_config(folder)
    encoder = BertModel(config)
    np.random.seed(0)
    if kind == "classifier":
        task, head = ClassificationTask(2), ClassifierHead(config, 2)
    else:
        task, head = TaggingTask(TAGS, conll.ConllSettings()), ClassifierHead(config, len(TAGS))
    checkpoints.load_weights(folder, encoder, {"classifier": head})
    head.output_bias.assign(np.random.normal(size=head.output_bias.shape))
    exports = {}
    for variant in variants:
        exports[variant] = export.export_task(
            os.path.join(work_dir, f"{kind}_{variant}"), task, encoder, {"classifier": head},
            minilm.vocab_file(), True, max_seq_length, shapes=variant.split("_")[0],
            jit_compile="_xla" in variant,
            policy="mixed_bfloat16" if variant.endswith("_bfloat16") else "float32")
    hf_folder = checkpoints.save_hf_folder(os.path.join(work_dir, f"{kind}_hf"), encoder,
                                           {"classifier": head}, task.hf_task_config())
    with open(os.path.join(hf_folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write(open(minilm.vocab_file(), encoding="utf-8").read())
    return exports, hf_folder


def serve(command, impl, run, out):
    """Runs one server process and prints its lines.

    Args:
      command: The server's argv.
      impl: Its name in the JSON lines.
      run: Which repeat this is.
      out: A file to append the JSON lines to too, or None.

    Returns:
      The server's own JSON line, parsed.
    """
    result = subprocess.run(command, capture_output=True, text=True, check=False,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    if result.returncode != 0:
        raise RuntimeError(f"{impl} server failed:\n{result.stderr[-3000:]}")
    line = json.loads(result.stdout.strip().splitlines()[-1])
    for length, measures in line["results"].items():
        machine.emit({"bench": "serving", "impl": impl, "run": run, "length": length,
                      **measures, "peak_rss_mb": round(line["peak_rss_mb"]),
                      **machine.describe()}, out)
    return line


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "data",
                                                         "corpus", "gutenberg_11books.txt"),
                        help="One sentence per line; the sentences are picked from it by length.")
    parser.add_argument("--sentences", type=int, default=128,
                        help="Sentences per length for batch 32 (a multiple of 32).")
    parser.add_argument("--latency_sentences", type=int, default=64,
                        help="Sentences per length for batch 1.")
    parser.add_argument("--repeats", type=int, default=3,
                        help="Processes per implementation, alternating.")
    parser.add_argument("--max_seq_length", type=int, default=128,
                        help="The export's and the tokenizer's limit.")
    parser.add_argument("--shapes", type=arguments.comma_list, default=["dynamic"],
                        help=f"bert_tf exports to serve: {', '.join(VARIANTS)}.")
    parser.add_argument("--impls", type=arguments.comma_list, default=["bert_tf", "hf"],
                        help="Which implementations to run.")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--work_dir", default=None,
                        help="Scratch folder; default: a temporary one.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Serves every implementation --repeats times and prints the lines."""
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="serving_bench_")
    os.makedirs(work_dir, exist_ok=True)
    sentences = pick_sentences(args.corpus, minilm.vocab_file(), args.sentences,
                               args.latency_sentences)
    sentences_file = os.path.join(work_dir, "sentences.json")
    with open(sentences_file, "w", encoding="utf-8") as f:
        json.dump(sentences, f)
    shapes = [s for s in args.shapes if "bert_tf" in args.impls]
    exports, hf_folder = build_models(work_dir, sorted(set(shapes) | {"static"}),
                                      args.max_seq_length)
    commands = {f"bert_tf_{s}": [sys.executable, "-c", BERT_TF_SERVER, exports[s]]
                for s in shapes}
    if "hf" in args.impls:
        commands["hf"] = [args.hf_python, "-c", HF_SERVER, hf_folder,
                          str(args.max_seq_length)]
    runs = {impl: [] for impl in commands}
    for run in range(args.repeats):
        for impl, command in commands.items():
            outputs = os.path.join(work_dir, f"{impl}.npz")
            runs[impl].append(serve([*command, sentences_file, outputs], impl, run, args.out))

    summary = {"bench": "serving_summary", "repeats": args.repeats,
               "sentences": args.sentences, "latency_sentences": args.latency_sentences}
    for impl, lines in runs.items():
        summary[f"{impl}_peak_rss_mb"] = round(float(np.median(
            [line["peak_rss_mb"] for line in lines])))
        for length in LENGTHS:
            for measure in lines[0]["results"][length]:
                summary[f"{impl}_{length}_{measure}"] = round(float(np.median(
                    [line["results"][length][measure] for line in lines])), 2)
    if "hf" in runs:
        for impl in runs:
            if impl == "hf":
                continue
            for length in LENGTHS:
                summary[f"{impl}_over_hf_{length}_batch32"] = round(
                    summary[f"{impl}_{length}_batch32_sentences_per_s"]
                    / summary[f"hf_{length}_batch32_sentences_per_s"], 3)
                for p in ("p50", "p90"):
                    summary[f"hf_over_{impl}_{length}_batch1_{p}"] = round(
                        summary[f"hf_{length}_batch1_{p}_ms"]
                        / summary[f"{impl}_{length}_batch1_{p}_ms"], 3)
    machine.emit({**summary, **machine.describe()}, args.out)

    # The outputs of the last run of each server, on every batch-32 sentence.
    outputs = {impl: np.load(os.path.join(work_dir, f"{impl}.npz")) for impl in runs}
    agreement = {"bench": "serving_agreement"}
    static = _static_outputs(exports["static"], sentences)
    for impl, values in outputs.items():
        diffs = [np.abs(values[length] - static[length]).max() for length in LENGTHS]
        agreement[f"{impl}_vs_static_export_max_abs_diff"] = float(max(diffs))
        agreement[f"{impl}_same_class_as_static_export"] = float(np.mean(np.concatenate(
            [values[n].argmax(-1) == static[n].argmax(-1) for n in LENGTHS])))
    machine.emit({**agreement, **machine.describe()}, args.out)


def _static_outputs(export_dir, sentences):
    """The static (padded) export's probabilities, computed here, per length."""
    single = tf.saved_model.load(export_dir).signatures["single"]
    return {length: np.concatenate([
        single(text_a=tf.constant(groups["batch"][start:start + 32]))["probabilities"].numpy()
        for start in range(0, len(groups["batch"]), 32)]) for length, groups in
        sentences.items()}


if __name__ == "__main__":
    main(parse_args())
