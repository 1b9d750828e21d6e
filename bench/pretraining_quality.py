"""Pretraining, bert_tf beside an independent Hugging Face peer on the same instances.

Builds pretraining records from a corpus with whole documents held out
(bench/pretraining_corpus.py), decodes them once to numpy for the peer
(bench/peers/hf_pretraining.py, torch; it never imports bert_tf), then trains a
small BERT from scratch with each library and seed, one run after the other,
each in a process of its own. Every --eval_every steps each run evaluates the
same held-out instances (masked-LM accuracy and loss, next-sentence accuracy)
and, to show over-fitting, the first training instances. Both train with the
original run_pretraining.py's recipe: the masked-LM loss weighted by
masked_lm_weights, warmup then linear decay from step 0, AdamW (epsilon 1e-6,
decay 0.01 except LayerNorm and biases) after clipping to norm 1.0, float32.

--runs names what to train:
  bert_tf           bert_tf's Trainer as run_pretraining.py builds it (its
                    AdamW with Adam's bias correction, the default), with
                    the original's schedule (--nodecay_after_warmup);
  bert_tf_original  the same with --noadam_bias_correction, the original's update;
  hf                the peer with torch.optim.AdamW (bias correction) and the
                    original's truncated-normal initialisation;
  hf_original       the peer with the original's update;
  hf_normal_init    the peer as hf, but with Hugging Face's own (uncut normal)
                    initialisation, to show what that one difference does.

Each evaluation is a JSON line (run, seed, step, the metrics, examples per
second of training so far, the machine) printed and appended to --out.
--report reads --out instead of training (and the peer's runs from
--peer_out, if given), and prints the table of both libraries' seed spreads
per step and the speed, and draws --plot.

Example, from the repository root (the torch venv: see docs/benchmarks.md):
  .venv/bin/python -m bench.pretraining_quality \\
      --corpus=../shared/data/corpus/gutenberg_11books.txt --seeds=1,2,3 \\
      --runs=bert_tf,hf --hf_python=/tmp/hfvenv/bin/python \\
      --out=bench/results/pretraining_quality-2026-11-26.jsonl
  .venv/bin/python -m bench.pretraining_quality --report \\
      --out=bench/results/pretraining_quality-2026-11-26.jsonl \\
      --plot=docs/pretraining_quality.png
"""

import argparse
import collections
import functools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf
from absl import logging

from bench import arguments, machine, minilm, pretraining_corpus
from bert_tf import configs
from bert_tf.model.config import BertConfig
from bert_tf.records import input_pipeline, record_specs
from bert_tf.runtime import precision, run_setup
from bert_tf.tasks import PretrainingTask
from bert_tf.text import tokenization
from bert_tf.training import training_loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# run: (library, Adam's bias correction, the peer's --init).
RUNS = {"bert_tf": ("bert_tf", True, None), "bert_tf_original": ("bert_tf", False, None),
        "hf": ("hf", True, "truncated"), "hf_original": ("hf", False, "truncated"),
        "hf_normal_init": ("hf", True, "normal")}
# The comparisons --report prints: (bert_tf's run, the peer's run).
PAIRS = (("bert_tf", "hf"), ("bert_tf_original", "hf_original"), ("bert_tf", "hf_normal_init"))
METRICS = ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy")
EVAL_BATCH = 32


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    pretraining_corpus.add_arguments(parser, work_dir="/tmp/pretraining_quality")
    parser.add_argument("--eval_train_batches", type=int, default=50,
                        help="Training-set batches of 32 per evaluation.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1", "2", "3"],
                        help="Seeds; every run is trained with each.")
    parser.add_argument("--runs", type=arguments.comma_list, default=["bert_tf", "hf"],
                        help="What to train (see the module docstring).")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="A Python with torch and transformers, for the peer.")
    parser.add_argument("--mixed_precision", default="float32",
                        choices=list(precision.PRECISIONS),
                        help="bert_tf's precision; float32, as the peer trains.")
    parser.add_argument("--out", default=None,
                        help="The JSON lines file: appended to, or read by --report (which "
                        "also takes several, comma-separated).")
    arguments.add_boolean(parser, "report", False, "Print the table from --out (and draw "
                          "--plot); train nothing.")
    parser.add_argument("--plot", default=None,
                        help="With --report: write the curves to this PNG.")
    parser.add_argument("--peer_out", type=arguments.comma_list, default=[],
                        help="With --report: also read the peer's runs (hf, hf_original, "
                        "hf_normal_init) from these files, e.g. to set bert_tf runs on other "
                        "records beside peer runs already made.")
    parser.add_argument("--bert_tf_seed", type=int, default=None,
                        help="Internal: train one bert_tf run in this process.")
    arguments.add_boolean(parser, "bias_correction", True,
                          "Internal: the bert_tf run's Adam bias correction.")
    args = parser.parse_args(argv)
    if not args.report:
        if not args.corpus:
            parser.error("--corpus is required to train")
        for run in args.runs:
            if run not in RUNS:
                parser.error(f"--runs: unknown {run!r}; known: {', '.join(RUNS)}")
    return args


def decode_records(args, path, npz_path):
    """Writes every record of a pretraining file, in order, as numpy arrays (.npz)."""
    specs = record_specs.pretraining_features(args.max_seq_length, args.max_predictions_per_seq)
    spec = input_pipeline.parsing_spec(specs)
    parts = collections.defaultdict(list)
    for batch in tf.data.TFRecordDataset(path).batch(4096):
        for name, values in tf.io.parse_example(batch, spec).items():
            parts[name].append(values.numpy().astype(
                np.float32 if values.dtype == tf.float32 else np.int32))
    np.savez(npz_path, **{name: np.concatenate(values) for name, values in parts.items()})


def prepare_data(args):
    """Records and their .npz copies in --work_dir, made once; the unigram baseline."""
    records = {name: os.path.join(args.work_dir, f"{name}.tfrecord")
               for name in ("train", "heldout")}
    if not all(os.path.exists(path) for path in records.values()):
        os.makedirs(args.work_dir, exist_ok=True)
        records = pretraining_corpus.build_records(
            args.corpus, args.heldout_every, args.work_dir,
            args.vocab_file or minilm.vocab_file(), args.max_seq_length,
            args.max_predictions_per_seq, args.dupe_factor, args.out)
        token, baseline = pretraining_corpus.unigram_baseline(
            records["train"], records["heldout"], args.max_seq_length,
            args.max_predictions_per_seq)
        machine.emit({"unigram_baseline_token": token,
                      "unigram_baseline_accuracy": round(baseline, 4),
                      **machine.describe()}, args.out)
    arrays = {name: path.replace(".tfrecord", ".npz") for name, path in records.items()}
    for name, path in arrays.items():
        if not os.path.exists(path):
            decode_records(args, records[name], path)
    return records, arrays


def vocab_size(args):
    """The model's vocab_size: one embedding row per line of --vocab_file (30522 by default)."""
    return len(tokenization.load_vocab(args.vocab_file or minilm.vocab_file()))


def train_bert_tf(args, seed, bias_correction, records):
    """One bert_tf run in this process: trains, evaluating every --eval_every steps."""
    run_setup.set_random_seed(seed)
    name = f"bert_tf{'' if bias_correction else '_original'}-seed{seed}"
    output_dir = os.path.join(args.work_dir, name)
    shutil.rmtree(output_dir, ignore_errors=True)
    config = BertConfig(
        vocab_size=vocab_size(args), hidden_size=args.hidden_size,
        num_hidden_layers=args.num_layers,
        num_attention_heads=args.hidden_size // 64, intermediate_size=4 * args.hidden_size,
        max_position_embeddings=512, type_vocab_size=2)
    strategy = tf.distribute.get_strategy()
    runtime = run_setup.Runtime.resolve(strategy, args.mixed_precision)
    policy = runtime.policy
    trainer = training_loop.Trainer(
        PretrainingTask(args.max_seq_length, args.max_predictions_per_seq), config,
        runtime, configs.TrainingConfig(
            output_dir, num_train_steps=args.num_train_steps,
            num_warmup_steps=args.num_train_steps // 10,
            optimizer=configs.OptimizerSettings(
                learning_rate=args.learning_rate, adam_bias_correction=bias_correction,
                # The original's schedule, as the peer runs it (--nodecay_after_warmup).
                decay_after_warmup=False),
            cadence=configs.CadenceSettings(
                iterations_per_loop=100, save_checkpoints_steps=args.eval_every,
                keep_checkpoint_max=1)))
    trainer.restore()
    # As run_pretraining.py does: convert_checkpoint.py finds it there.
    config.to_json_file(os.path.join(output_dir, "bert_config.json"))

    def dataset_fn(path, batch_size, is_training, input_context):
        return input_pipeline.pretraining_dataset(
            path, batch_size, args.max_seq_length, args.max_predictions_per_seq,
            is_training, input_context=input_context, seed=seed)

    start, train_seconds = time.time(), 0.0
    for step in range(args.eval_every, args.num_train_steps + 1, args.eval_every):
        tick = time.time()
        history = trainer.train(functools.partial(
            dataset_fn, records["train"], args.train_batch_size, True), step,
            args.train_batch_size)
        train_seconds += time.time() - tick
        point = {"impl": "bert_tf", "bias_correction": bias_correction, "seed": seed,
                 "step": step,
                 "train_loss": round(statistics.mean(h["loss"] for h in history), 4),
                 "examples_per_second": round(step * args.train_batch_size / train_seconds, 2)}
        for part, limit in (("heldout", None), ("train", args.eval_train_batches)):
            results = trainer.evaluate(
                functools.partial(dataset_fn, records[part], EVAL_BATCH, False),
                max_steps=limit)
            for metric in METRICS:
                point[f"{part}_{metric}"] = round(results[metric], 4)
        point.update(precision=policy, elapsed_s=round(time.time() - start, 1))
        machine.emit({**point, **machine.describe()}, args.out)


def run_hf(args, run, seed, arrays):
    """One peer run, in the torch venv, from the repository root."""
    _, bias_correction, init = RUNS[run]
    output_dir = os.path.abspath(os.path.join(args.work_dir, f"{run}-seed{seed}"))
    command = [
        args.hf_python, "-m", "bench.peers.hf_pretraining",
        f"--train={os.path.abspath(arrays['train'])}",
        f"--heldout={os.path.abspath(arrays['heldout'])}",
        f"--output_dir={output_dir}", f"--seed={seed}",
        f"--adam={'torch' if bias_correction else 'original'}", f"--init={init}",
        f"--num_layers={args.num_layers}", f"--hidden_size={args.hidden_size}",
        f"--vocab_size={vocab_size(args)}", f"--train_batch_size={args.train_batch_size}",
        f"--eval_batch_size={EVAL_BATCH}",
        f"--num_train_steps={args.num_train_steps}",
        f"--num_warmup_steps={args.num_train_steps // 10}",
        f"--learning_rate={args.learning_rate}", f"--eval_every={args.eval_every}",
        f"--eval_train_batches={args.eval_train_batches}"]
    if args.out:
        command.append(f"--out={os.path.abspath(args.out)}")
    subprocess.run(command, check=True, cwd=ROOT)


def label(line):
    """A run's name in the report (a key of RUNS), from one of its JSON lines."""
    name = line["impl"] + ("" if line.get("bias_correction", line.get("adam") == "torch")
                           else "_original")
    return name + ("_normal_init" if line.get("init") == "normal" else "")


def read_points(path, runs=None):
    """The evaluation lines in path, and the baselines.

    Args:
      path: A JSON lines file of this script.
      runs: Keep only these runs' lines (see label()); None keeps all.

    Returns:
      ({run: {step: [line per seed]}}, {"masked_lm": the unigram baseline,
      "next_sentence": the held-out majority label's share, from
      bench/nsp_signal.py's line}); a baseline missing from path is None.
    """
    points = collections.defaultdict(lambda: collections.defaultdict(list))
    baselines = {"masked_lm": None, "next_sentence": None}
    with open(path, encoding="utf-8") as f:
        for text in f:
            line = json.loads(text)
            if "unigram_baseline_accuracy" in line:
                baselines["masked_lm"] = line["unigram_baseline_accuracy"]
            elif "heldout_majority" in line:
                baselines["next_sentence"] = line["heldout_majority"]
            elif "step" in line and (runs is None or label(line) in runs):
                points[label(line)][line["step"]].append(line)
    return points, baselines


def spread(lines, key):
    """(min, mean, max) of one metric over seeds."""
    values = [line[key] for line in lines]
    return min(values), statistics.mean(values), max(values)


def welch_t(ours, peer):
    """Welch's t of two samples' difference of means; None with fewer than 2 of either.

    Args:
      ours, peer: The metric's values over seeds.

    Returns:
      (mean(ours) - mean(peer)) / sqrt(var(ours) / n + var(peer) / m), or
      None where a sample has one value or neither varies.
    """
    if len(ours) < 2 or len(peer) < 2:
        return None
    scale = math.sqrt(statistics.variance(ours) / len(ours)
                      + statistics.variance(peer) / len(peer))
    return (statistics.mean(ours) - statistics.mean(peer)) / scale if scale else None


def report(path, plot=None, peer_paths=(), num_layers=4, hidden_size=256):
    """Prints, per step, each run's seed spread and whether bert_tf lies within the peer's.

    Args:
      path: The JSON lines of the runs: one file, or several comma-separated.
      plot: Also draw the curves to this PNG.
      peer_paths: Also take the peer's runs from these files.
      num_layers, hidden_size: The model's shape, for the plot's title.
    """
    points = collections.defaultdict(lambda: collections.defaultdict(list))
    baselines = {"masked_lm": None, "next_sentence": None}
    peer_runs = [run for run, (impl, _, _) in RUNS.items() if impl == "hf"]
    sources = [(one, None) for one in path.split(",")]
    sources += [(peer_path, peer_runs) for peer_path in peer_paths]
    # Seeds of one run may come from several files (runs made on several days).
    for source, runs in sources:
        source_points, source_baselines = read_points(source, runs=runs)
        for run, by_step in source_points.items():
            for step, lines in by_step.items():
                points[run][step].extend(lines)
        for key, value in source_baselines.items():
            baselines[key] = baselines[key] or value
    print(f"held-out baselines: masked-LM accuracy of the most frequent token "
          f"{baselines['masked_lm']}, next-sentence majority label {baselines['next_sentence']}")
    for ours, peer in PAIRS:
        if ours not in points or peer not in points:
            continue
        print(f"\n{ours} against {peer}: mean [min, max] over seeds "
              f"({len(points[ours][max(points[ours])])} and "
              f"{len(points[peer][max(points[peer])])} seeds at the last step)")
        print("| step | metric | " + " | ".join((ours, peer))
              + " | difference of means | Welch's t | mean within the peer's range "
              "| ranges overlap |")
        print("|---|---|---|---|---|---|---|---|")
        for step in sorted(set(points[ours]) & set(points[peer])):
            for metric in METRICS:
                key = f"heldout_{metric}"
                ours_spread = spread(points[ours][step], key)
                peer_spread = spread(points[peer][step], key)
                cells = [f"{mean:.4f} [{low:.4f}, {high:.4f}]"
                         for low, mean, high in (ours_spread, peer_spread)]
                within = peer_spread[0] <= ours_spread[1] <= peer_spread[2]
                overlap = ours_spread[0] <= peer_spread[2] and peer_spread[0] <= ours_spread[2]
                t = welch_t([line[key] for line in points[ours][step]],
                            [line[key] for line in points[peer][step]])
                print(f"| {step} | held-out {metric} | {cells[0]} | {cells[1]} | "
                      f"{ours_spread[1] - peer_spread[1]:+.4f} | "
                      f"{'—' if t is None else f'{t:+.1f}'} | {'yes' if within else 'no'} | "
                      f"{'yes' if overlap else 'no'} |")
    medians = {}
    for run, by_step in sorted(points.items()):
        last = by_step[max(by_step)]
        speeds = [line["examples_per_second"] for line in last]
        medians[run] = statistics.median(speeds)
        print(f"{run}: training examples/s, median of {len(speeds)} runs: "
              f"{medians[run]:.1f} (range {min(speeds):.1f}-{max(speeds):.1f})")
    if "bert_tf" in medians and "hf" in medians:
        print(f"bert_tf / hf, training examples/s: {medians['bert_tf'] / medians['hf']:.2f}")
    if plot:
        draw(points, baselines, plot, num_layers, hidden_size)


def draw(points, baselines, path, num_layers, hidden_size):
    """Held-out MLM accuracy and loss, held-out and training-set NSP accuracy, per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("heldout_masked_lm_accuracy", "held-out masked-LM accuracy"),
              ("heldout_masked_lm_loss", "held-out masked-LM loss"),
              ("heldout_next_sentence_accuracy", "held-out next-sentence accuracy"),
              ("train_next_sentence_accuracy", "training-set next-sentence accuracy"))
    colors = {"bert_tf": "tab:blue", "hf": "tab:orange", "bert_tf_original": "tab:green",
              "hf_original": "tab:red", "hf_normal_init": "tab:gray"}
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for axis, (key, title) in zip(axes.flat, panels, strict=True):
        for run, by_step in sorted(points.items()):
            steps = sorted(by_step)
            seeds = sorted({line["seed"] for lines in by_step.values() for line in lines})
            for i, seed in enumerate(seeds):
                xs = [s for s in steps for line in by_step[s] if line["seed"] == seed]
                ys = [line[key] for s in steps for line in by_step[s] if line["seed"] == seed]
                axis.plot(xs, ys, color=colors.get(run), alpha=0.8, marker=".",
                          label=f"{run} ({len(seeds)} seeds)" if i == 0 else None)
        if key == "heldout_masked_lm_accuracy" and baselines["masked_lm"]:
            axis.axhline(baselines["masked_lm"], linestyle="--", color="gray",
                         label="most frequent token")
        if key == "heldout_next_sentence_accuracy" and baselines["next_sentence"]:
            axis.axhline(baselines["next_sentence"], linestyle="--", color="gray",
                         label="majority label")
        axis.set_title(title)
        axis.set_xlabel("step")
        axis.legend(fontsize=8)
    fig.suptitle(f"BERT L{num_layers} H{hidden_size} from scratch: bert_tf and "
                 "Hugging Face on the same instances")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(args):
    if args.report:
        report(args.out, args.plot, args.peer_out, args.num_layers, args.hidden_size)
        return
    # As under absl's app.run: the Trainer's progress shows on stderr.
    logging.set_verbosity(logging.INFO)
    records, arrays = prepare_data(args)
    if args.bert_tf_seed is not None:
        train_bert_tf(args, args.bert_tf_seed, args.bias_correction, records)
        return
    for seed in args.seeds:
        for run in args.runs:
            impl, bias_correction, _ = RUNS[run]
            if impl == "hf":
                run_hf(args, run, int(seed), arrays)
                continue
            # A process of its own, as the peer's: no state carries from run to run.
            subprocess.run([sys.executable, "-m", "bench.pretraining_quality", *sys.argv[1:],
                            f"--bert_tf_seed={seed}", f"--bias_correction={bias_correction}"],
                           check=True)


if __name__ == "__main__":
    main(parse_args())
