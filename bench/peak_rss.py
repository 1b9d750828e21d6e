"""Peak memory of fine-tuning: bert_tf's run_*.py scripts against their Hugging Face peers.

Each run is one process started here; its peak resident memory (RSS) is the
kernel's own count for that process (ru_maxrss from wait4), so no short peak
falls between two samples. Every run trains for --steps updates on real data
and then evaluates or predicts, with the same settings for both libraries:
- classification: run_classifier.py on GLUE MRPC against
  bench/peers/hf_glue_finetune.py: max_seq_length 128, batch 32, full padding;
- tagging: run_ner.py on CoNLL-2003 against
  bench/peers/hf_token_classification.py: max_seq_length 128, batch 32, each
  batch cut to its longest sentence;
- question_answering: run_squad.py on the answerable questions of the shared
  SQuAD files against bench/peers/hf_squad_finetune.py: max_seq_length 256, batch
  32, doc_stride 128, all-MiniLM-L6-v2, the workload of issue 26;
- question_answering_base (--bert_base): the same at the original README's
  BERT-Base settings, max_seq_length 384 and batch 12, from one randomly
  initialized BERT-Base folder (memory does not depend on the weights' values).
bert_tf runs as a user runs it: --mixed_precision and --jit_compile are left at
auto unless --bert_tf_flags says otherwise; the peers run in float32.

Each run is given --seed, one run per seed in --seeds (default 1), so that
the training batches are reproducible. A peak still varies from run to run:
three of bert_tf's float32 tagging runs at seed 1 ranged from 1,856 to 2,051 MB on an
AMD EPYC. Compare the two libraries over several seeds, with the ranges.

Prints one JSON line per run (workload, impl, seed, peak_rss_mb, wall_s, cpu_s, minor_faults, and
where it ran; for bert_tf also its training examples/s and the TF_ONEDNN_USE_SYSTEM_ALLOCATOR it
saw), then one line per workload with the median and range of each library's peaks over the seeds
and the ratio of the medians, bert_tf's over the peer's.

The peers run as `-m bench.peers.<name>` from this repository's root; the
bert_tf scripts from --bert_tf_root, with it as their working folder.

Example, from the repository root:
  .venv/bin/python -m bench.peak_rss --hf_python=/tmp/hfvenv/bin/python --bert_base \\
      --out=bench/results/peak_rss-$(date +%F).jsonl
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from bench import arguments, machine, minilm
from bench.squad_files import answerable_only

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
WORKLOADS = ("classification", "tagging", "question_answering")


def run_and_measure(command, log_path, cwd=None):
    """Runs a command to its end; returns its peak RSS, wall time, CPU time and page faults.

    Args:
      command: The argv list.
      log_path: Where its stdout and stderr go.
      cwd: Its working folder.

    Returns:
      (peak_rss_bytes, wall_seconds, cpu_seconds, minor_faults): CPU time is
      user plus system time of the whole process; it and the page faults
      (each a page the kernel mapped in, and zeroed, on first touch) depend
      far less on other work on the machine than the wall time does.

    Raises:
      RuntimeError: It failed; the message ends with its log's tail.
    """
    with open(log_path, "w", encoding="utf-8") as log:
        start = time.time()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
        # wait4 gives this one child's own peak, where getrusage(RUSAGE_CHILDREN)
        # would give the largest of every child so far.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.time() - start
    if process.returncode:
        # The script's path, or the module's name after -m.
        name = command[2] if command[1] == "-m" else command[1]
        with open(log_path, encoding="utf-8") as f:
            raise RuntimeError(f"{name} failed:\n{f.read()[-3000:]}")
    return (usage.ru_maxrss * 1024, wall, usage.ru_utime + usage.ru_stime,
            usage.ru_minflt)


def count_conll_sentences(path):
    """Sentences (blocks between blank lines, -DOCSTART- blocks left out) of a CoNLL file."""
    count, in_sentence = 0, False
    with open(path, encoding="utf-8") as f:
        for line in list(f) + ["\n"]:
            if line.strip() and not line.startswith("-DOCSTART-"):
                in_sentence = True
            elif not line.strip():
                count, in_sentence = count + in_sentence, False
    return count


def epochs_for(steps, batch_size, num_examples):
    """The fractional epochs whose int(num_examples * epochs / batch_size) is steps."""
    return (steps + 0.5) * batch_size / num_examples


def write_bert_base_folder(folder, hf_python):
    """Writes a randomly initialized BERT-Base in Hugging Face's layout, with the vocab.

    Args:
      folder: Where it goes; left as it is when it holds a model already.
      hf_python: The Python of a venv with transformers.
    """
    if os.path.isfile(os.path.join(folder, "model.safetensors")):
        return
    # BertModel, with its pooler: the layout of a released encoder, which both
    # libraries start a question-answering model from.
    program = ("import shutil, sys\n"
               "from transformers import BertConfig, BertModel\n"
               "BertModel(BertConfig()).save_pretrained(sys.argv[1])\n"
               "shutil.copy(sys.argv[2], sys.argv[1])\n")
    subprocess.run([hf_python, "-c", program, folder, minilm.vocab_file()], check=True)


def commands(workload, impl, scratch, args):
    """The command line of one run, without its --seed, and its settings for the JSON line.

    Args:
      workload: One of WORKLOADS, or "question_answering_base".
      impl: "bert_tf" or "hf".
      scratch: The run's own folder (bert_tf's --output_dir).
      args: The parsed command line.

    Returns:
      (argv, settings): settings is a dict for the JSON line.
    """
    model = minilm.model_dir()
    bert_tf = [sys.executable]
    if workload == "classification":
        data_dir = os.path.join(args.glue_dir, "MRPC")
        with open(os.path.join(data_dir, "train.tsv"), encoding="utf-8") as f:
            num_examples = sum(1 for _ in f) - 1
        settings = {"max_seq_length": 128, "batch_size": 32,
                    "epochs": round(epochs_for(args.steps, 32, num_examples), 5)}
        if impl == "bert_tf":
            return bert_tf + [
                os.path.join(args.bert_tf_root, "run_classifier.py"), "--task_name=MRPC",
                "--do_train", "--do_eval", f"--data_dir={data_dir}",
                f"--init_checkpoint={model}", "--max_seq_length=128",
                "--train_batch_size=32", "--eval_batch_size=32",
                f"--num_train_epochs={settings['epochs']}", f"--output_dir={scratch}",
                *args.bert_tf_flags], settings
        return [args.hf_python, "-m", "bench.peers.hf_glue_finetune", "--task=mrpc",
                f"--data_dir={data_dir}", f"--model_dir={model}", "--max_seq_length=128",
                "--train_batch_size=32", "--eval_batch_size=32",
                f"--num_train_epochs={settings['epochs']}"], settings
    if workload == "tagging":
        num_examples = count_conll_sentences(os.path.join(args.conll_dir, "train.txt"))
        settings = {"max_seq_length": 128, "batch_size": 32, "dynamic_padding": True,
                    "epochs": round(epochs_for(args.steps, 32, num_examples), 5)}
        if impl == "bert_tf":
            return bert_tf + [
                os.path.join(args.bert_tf_root, "run_ner.py"), f"--data_dir={args.conll_dir}",
                f"--init_checkpoint={model}", "--do_train", "--do_eval",
                "--max_seq_length=128", "--train_batch_size=32", "--eval_batch_size=32",
                f"--num_train_epochs={settings['epochs']}", "--dynamic_padding",
                f"--output_dir={scratch}", *args.bert_tf_flags], settings
        return [args.hf_python, "-m", "bench.peers.hf_token_classification",
                f"--train_file={os.path.join(args.conll_dir, 'train.txt')}",
                f"--valid_file={os.path.join(args.conll_dir, 'valid.txt')}",
                f"--model_dir={model}", "--max_seq_length=128", "--batch_size=32",
                "--eval_batch_size=32", f"--epochs={settings['epochs']}"], settings
    train_file = os.path.join(args.work_dir, "train-v1.1.json")
    predict_file = os.path.join(args.work_dir, "dev-v1.1.json")
    num_questions = answerable_only(args.squad_train_file, train_file)
    answerable_only(args.squad_predict_file, predict_file)
    if workload == "question_answering":
        seq, batch, steps = 256, 32, args.steps
    else:
        seq, batch, steps = 384, 12, args.base_steps
        model = os.path.join(args.work_dir, "bert_base_random")
        write_bert_base_folder(model, args.hf_python)
    settings = {"max_seq_length": seq, "batch_size": batch, "doc_stride": 128,
                "epochs": round(epochs_for(steps, batch, num_questions), 5)}
    if impl == "bert_tf":
        return bert_tf + [
            os.path.join(args.bert_tf_root, "run_squad.py"), f"--init_checkpoint={model}",
            f"--train_file={train_file}", f"--predict_file={predict_file}", "--do_train",
            "--do_predict", f"--max_seq_length={seq}", "--doc_stride=128",
            f"--train_batch_size={batch}", f"--predict_batch_size={batch}",
            f"--num_train_epochs={settings['epochs']}", f"--output_dir={scratch}",
            *args.bert_tf_flags], settings
    return [args.hf_python, "-m", "bench.peers.hf_squad_finetune",
            f"--train_file={train_file}", f"--predict_file={predict_file}",
            f"--model_dir={model}", f"--max_seq_length={seq}", "--overlap=128",
            f"--batch_size={batch}", f"--updates={steps}"], settings


def parse_args(argv=None):
    """Parses the command line (argv, or sys.argv[1:] when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=arguments.comma_list, default=list(WORKLOADS),
                        help="Which workloads to run.")
    parser.add_argument("--impls", type=arguments.comma_list, default=["bert_tf", "hf"],
                        help="Which implementations to run.")
    arguments.add_boolean(parser, "bert_base", False,
                          "Also run question_answering_base: BERT-Base at max_seq_length 384, "
                          "batch 12 (needs --hf_python to write its folder).")
    parser.add_argument("--steps", type=int, default=30, help="Training updates per run.")
    parser.add_argument("--seeds", type=arguments.comma_list, default=["1"],
                        help="One run of each workload and library per seed, e.g. 1,2,3.")
    parser.add_argument("--base_steps", type=int, default=4,
                        help="Training updates per question_answering_base run.")
    parser.add_argument("--glue_dir", default=os.path.join(SHARED, "glue"),
                        help="GLUE folder (holds MRPC/).")
    parser.add_argument("--conll_dir", default=os.path.join(SHARED, "conll2003"),
                        help="Folder with CoNLL-2003 train.txt and valid.txt.")
    parser.add_argument("--squad_train_file",
                        default=os.path.join(SHARED, "squad", "train-v2.0-first10.json"),
                        help="SQuAD json to train on (its answerable questions).")
    parser.add_argument("--squad_predict_file",
                        default=os.path.join(SHARED, "squad", "dev-v2.0-first2.json"),
                        help="SQuAD json to predict on (its answerable questions).")
    parser.add_argument("--hf_python", default=arguments.HF_PYTHON,
                        help="Python of a venv with torch, transformers and seqeval.")
    parser.add_argument("--bert_tf_root", default=ROOT, help="The checkout whose scripts run.")
    parser.add_argument("--bert_tf_flags", type=arguments.comma_list, default=[],
                        help="Extra flags for every bert_tf script, e.g. "
                        "--bert_tf_flags=--jit_compile=false")
    parser.add_argument("--work_dir", default="/tmp/peak_rss", help="Scratch folder.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def bert_tf_speed_and_allocator(log_path):
    """A bert_tf run's training speed, from its log, and the allocator it was given.

    Returns:
      {"train_examples_per_s": the median of the logged rates after the
      first (which includes compiling), or None; "system_allocator": the
      TF_ONEDNN_USE_SYSTEM_ALLOCATOR the run was given, None when it was
      unset and bert_tf chose (malloc where XLA compiles on a CPU,
      bert_tf/runtime/memory.py)}.
    """
    with open(log_path, encoding="utf-8") as f:
        rates = [float(m.group(1)) for m in re.finditer(r"([\d.]+) examples/s", f.read())][1:]
    return {"train_examples_per_s": statistics.median(rates) if rates else None,
            "system_allocator": os.environ.get("TF_ONEDNN_USE_SYSTEM_ALLOCATOR")}


def peak_range(peaks):
    """{"median", "min", "max"} of a list of peaks, in MB."""
    return {"median": round(statistics.median(peaks)), "min": min(peaks), "max": max(peaks)}


def main(args):
    """Runs every workload with every implementation and seed, and prints their lines."""
    os.makedirs(args.work_dir, exist_ok=True)
    where = machine.describe()
    workloads = list(args.workloads) + (["question_answering_base"] if args.bert_base else [])
    peaks = {}
    for workload in workloads:
        for seed in args.seeds:
            for impl in args.impls:
                # A fresh folder even when another invocation shares work_dir.
                scratch = tempfile.mkdtemp(prefix=f"{workload}_{impl}_{seed}_", dir=args.work_dir)
                command, settings = commands(workload, impl, scratch, args)
                # Both libraries' scripts take --seed.
                command.append(f"--seed={seed}")
                # The peers are modules of this checkout: they run from its root.
                peak, wall, cpu, faults = run_and_measure(
                    command, os.path.join(scratch, "log.txt"),
                    cwd=args.bert_tf_root if impl == "bert_tf" else ROOT)
                line = {"workload": workload, "impl": impl, "seed": int(seed),
                        "peak_rss_mb": round(peak / 2**20), "wall_s": round(wall, 1),
                        "cpu_s": round(cpu, 1), "minor_faults": faults, "settings": settings,
                        "bert_tf_flags": args.bert_tf_flags if impl == "bert_tf" else None,
                        **where}
                if impl == "bert_tf":
                    line.update(bert_tf_speed_and_allocator(os.path.join(scratch, "log.txt")))
                peaks.setdefault((workload, impl), []).append(line["peak_rss_mb"])
                machine.emit(line, args.out)
    for workload in workloads:
        if (workload, "bert_tf") in peaks and (workload, "hf") in peaks:
            bert_tf, hf = peak_range(peaks[workload, "bert_tf"]), peak_range(peaks[workload, "hf"])
            machine.emit({"workload": workload, "summary": "bert_tf over hf",
                          "seeds": [int(seed) for seed in args.seeds],
                          "bert_tf_peak_mb": bert_tf, "hf_peak_mb": hf,
                          "peak_rss_ratio": round(bert_tf["median"] / hf["median"], 3),
                          **where}, args.out)


if __name__ == "__main__":
    main(parse_args())
