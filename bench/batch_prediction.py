"""Labelling a file: predict_text.py and predict_entities.py against transformers' pipeline.

What a user pays to label a file of sentences, first pass included. One
all-MiniLM-L6-v2 classifier and one tagger (the real encoder, heads with
seeded random weights: speed does not depend on their values) are exported
by bench/serving.py's build_models, and written as Hugging Face folders with
the same weights. The input is --sentences real lines of --corpus, drawn at
random (seed 0), so that their lengths are a real file's.

Two measures, each in fresh processes, the implementations alternating,
--repeats times:
- end to end: the wall time of the command a user runs, from start to the
  written output: `predict_text.py` / `predict_entities.py --input_file
  --output_file` against `bench/peers/hf_pipeline.py` (transformers'
  pipeline, "text-classification" / "token-classification"), both at batch 32;
- passes: in one process, the model loaded, then the file run twice; the
  first pass pays every one-off cost (XLA's compiles, for an export that
  has them), the second is the steady state. bert_tf's passes run
  export_runner.load_signature and run_loaded as the scripts do, for each
  --variants entry: default (the export as written by default, inputs run
  in order of length within text_input.LENGTH_ORDER_BATCHES batches),
  unsorted (each batch as it comes), xla (an export with
  --jit_compile=true), xla_unsorted (how predict_text.py ran before: XLA,
  each batch as it comes).

Prints one JSON line per process, then one summary per task with medians
and bert_tf over HF ratios of sentences per second (above 1: bert_tf is
faster).

  .venv/bin/python -m bench.batch_prediction --out=bench/results/batch_prediction-$(date +%F).jsonl
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from bench import arguments, machine, serving
from bert_tf.cli import text_input

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = {"classifier": ("predict_text.py", "text-classification"),
         "tagger": ("predict_entities.py", "token-classification")}
# bert_tf's pass variants: (export variant of serving.VARIANTS, batches run in order of length).
SORTED = text_input.LENGTH_ORDER_BATCHES
VARIANTS = {"default": ("dynamic", SORTED), "unsorted": ("dynamic", 1),
            "xla": ("dynamic_xla", SORTED), "xla_unsorted": ("dynamic_xla", 1)}
BATCH_SIZE = 32

# bert_tf's passes: the export loaded as the scripts load it, then the file
# run twice through run_loaded, as the scripts run it.
BERT_TF_PASSES = """
import json, sys, time
begin = time.perf_counter()
from bert_tf.serving import export_runner
export_dir, task_class, signature, name, input_file, sort_window, batch_size = sys.argv[1:]
function = export_runner.load_signature(export_dir, signature, task_class, [name])
load_s = time.perf_counter() - begin
lines = [line.rstrip("\\n") for line in open(input_file, encoding="utf-8")]
size = int(batch_size)
passes = []
for _ in range(2):
    begin = time.perf_counter()
    batches = ({name: lines[i:i + size]} for i in range(0, len(lines), size))
    for _ in export_runner.run_loaded(function, batches, int(sort_window)):
        pass
    passes.append(time.perf_counter() - begin)
print(json.dumps({"load_s": load_s, "pass_s": passes}))
"""
# Each task's signature, its input, and the class check_task expects.
SIGNATURES = {"classifier": ("single", "text_a", "ClassificationTask"),
              "tagger": ("serving_default", "text", "TaggingTask")}


def pick_lines(corpus, count, path):
    """Writes count random non-empty lines of corpus (seed 0) to path, one a line."""
    with open(corpus, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    random.Random(0).shuffle(lines)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines[:count]) + "\n")
    return path


def timed(command):
    """Runs command from the repository root; returns its wall seconds and stdout."""
    begin = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    seconds = time.perf_counter() - begin
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} failed:\n{result.stderr[-3000:]}")
    return seconds, result.stdout


def commands(task, exports, hf_folder, input_file, work_dir, args):
    """{(measure, impl): argv} of one task's processes."""
    script, pipeline_task = TASKS[task]
    signature, name, task_class = SIGNATURES[task]
    hf = [args.hf_python, "-m", "bench.peers.hf_pipeline", f"--task={pipeline_task}",
          f"--model_dir={hf_folder}", f"--input_file={input_file}",
          f"--batch_size={BATCH_SIZE}", f"--max_seq_length={args.max_seq_length}"]
    bert_tf = [sys.executable, script, f"--export_dir={exports['dynamic']}",
               f"--input_file={input_file}", f"--batch_size={BATCH_SIZE}"]
    runs = {
        ("end_to_end", "bert_tf"): [
            *bert_tf, f"--output_file={os.path.join(work_dir, f'{task}_bert_tf.tsv')}"],
        ("end_to_end", "hf"): [*hf, f"--output_file={os.path.join(work_dir, f'{task}_hf.tsv')}"],
        ("passes", "hf"): [*hf, "--passes=2"],
    }
    for variant in args.variants:
        export_variant, sort_window = VARIANTS[variant]
        runs[("passes", f"bert_tf_{variant}")] = [
            sys.executable, "-c", BERT_TF_PASSES, exports[export_variant], task_class, signature,
            name, input_file, str(sort_window), str(BATCH_SIZE)]
    return runs


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "data",
                                                         "corpus", "gutenberg_11books.txt"),
                        help="One sentence per line.")
    parser.add_argument("--sentences", type=int, default=512, help="Lines in the input file.")
    parser.add_argument("--tasks", type=arguments.comma_list, default=list(TASKS),
                        help=f"Which of {', '.join(TASKS)}.")
    parser.add_argument("--variants", type=arguments.comma_list, default=list(VARIANTS),
                        help=f"bert_tf's pass variants: {', '.join(VARIANTS)}.")
    parser.add_argument("--repeats", type=int, default=3,
                        help="Processes per implementation and measure, alternating.")
    parser.add_argument("--max_seq_length", type=int, default=128,
                        help="The exports' and the peer's limit.")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--work_dir", default=None,
                        help="Scratch folder; default: a temporary one.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    """Runs every process --repeats times and prints the lines."""
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="batch_prediction_")
    os.makedirs(work_dir, exist_ok=True)
    input_file = pick_lines(args.corpus, args.sentences, os.path.join(work_dir, "input.txt"))
    export_variants = sorted({VARIANTS[v][0] for v in args.variants} | {"dynamic"})
    for task in args.tasks:
        exports, hf_folder = serving.build_models(work_dir, export_variants,
                                                  args.max_seq_length, kind=task)
        runs = commands(task, exports, hf_folder, input_file, work_dir, args)
        results = {key: [] for key in runs}
        for repeat in range(args.repeats):
            for (measure, impl), command in runs.items():
                seconds, stdout = timed(command)
                line = {"bench": "batch_prediction", "task": task, "measure": measure,
                        "impl": impl, "run": repeat, "sentences": args.sentences}
                if measure == "end_to_end":
                    line["wall_s"] = seconds
                else:
                    parsed = json.loads(stdout.strip().splitlines()[-1])
                    line.update(load_s=parsed["load_s"], first_pass_s=parsed["pass_s"][0],
                                steady_pass_s=parsed["pass_s"][1])
                results[(measure, impl)].append(line)
                machine.emit({**line, **machine.describe()}, args.out)
        machine.emit({**summarize(task, results, args.sentences), **machine.describe()},
                     args.out)


def summarize(task, results, sentences):
    """Medians, in sentences per second, and bert_tf over HF ratios of one task."""
    summary = {"bench": "batch_prediction_summary", "task": task, "sentences": sentences}
    rates = {}
    for (measure, impl), lines in results.items():
        fields = ["wall"] if measure == "end_to_end" else ["first_pass", "steady_pass"]
        for field in fields:
            rates[(impl, field)] = sentences / statistics.median(
                line[f"{field}_s"] for line in lines)
            summary[f"{impl}_{field}_sentences_per_s"] = round(rates[(impl, field)], 1)
        if measure == "passes":
            summary[f"{impl}_load_s"] = round(statistics.median(
                line["load_s"] for line in lines), 2)
    for (impl, field), rate in rates.items():
        if impl != "hf":
            summary[f"{impl}_{field}_over_hf"] = round(rate / rates[("hf", field)], 3)
    return summary


if __name__ == "__main__":
    main(parse_args())
