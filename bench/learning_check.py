"""Learning check: pretrain a small BERT on real text; held-out MLM and NSP accuracy over time.

Builds pretraining data from a corpus (one sentence per line, blank lines
between documents), holding out every --heldout_every-th document
(bench/pretraining_corpus.py says why so), pretrains with bert_tf's Trainer,
and evaluates on the held-out instances (and, to show over-fitting, on as
many training instances) every --eval_every steps. Prints one JSON line per
evaluation, and the unigram baseline (always predicting the most frequent
masked token of the training data) for comparison, each line with where it
ran (machine.describe()); --out appends them to a file too. With --plot,
draws the curves (needs matplotlib, which bert_tf itself does not).
bench/pretraining_quality.py runs the same beside a Hugging Face peer.

Example, from the repository root:
  .venv/bin/python -m bench.learning_check \\
      --corpus=../shared/data/corpus/gutenberg_11books.txt \\
      --work_dir=/tmp/learning_check --num_train_steps=3000 --plot=docs/learning_curve.png
"""

import argparse
import functools
import os
import time

import tensorflow as tf
from absl import logging

from bench import machine, minilm, pretraining_corpus
from bert_tf import configs
from bert_tf.model.config import BertConfig
from bert_tf.records import input_pipeline
from bert_tf.runtime import precision, run_setup
from bert_tf.tasks import PretrainingTask
from bert_tf.training import training_loop


def parse_args(argv=None):
    """Parses the command line (argv: the arguments after the program; default sys.argv's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    pretraining_corpus.add_arguments(parser, work_dir="/tmp/learning_check")
    parser.add_argument("--eval_batches", type=int, default=50,
                        help="Held-out batches of 32 per evaluation.")
    parser.add_argument("--mixed_precision", default="auto", choices=list(precision.PRECISIONS),
                        help="As run_pretraining.py's flag; XLA is chosen as there "
                        "(--jit_compile=auto).")
    parser.add_argument("--plot", default=None, help="Write the curves to this PNG.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    args = parser.parse_args(argv)
    if args.corpus is None:
        parser.error("the following arguments are required: --corpus")
    return args


def main(args):
    # As under absl's app.run: the Trainer's progress shows on stderr.
    logging.set_verbosity(logging.INFO)
    os.makedirs(args.work_dir, exist_ok=True)
    vocab_file = args.vocab_file or minilm.vocab_file()
    records = pretraining_corpus.build_records(
        args.corpus, args.heldout_every, args.work_dir, vocab_file, args.max_seq_length,
        args.max_predictions_per_seq, args.dupe_factor, args.out)
    token, baseline = pretraining_corpus.unigram_baseline(
        records["train"], records["heldout"], args.max_seq_length,
        args.max_predictions_per_seq)
    machine.emit({"unigram_baseline_token": token,
                  "unigram_baseline_accuracy": round(baseline, 4), **machine.describe()},
                 args.out)

    bert_config = BertConfig(
        vocab_size=30522, hidden_size=args.hidden_size, num_hidden_layers=args.num_layers,
        num_attention_heads=args.hidden_size // 64, intermediate_size=4 * args.hidden_size,
        max_position_embeddings=512, type_vocab_size=2)
    strategy = tf.distribute.get_strategy()
    runtime = run_setup.Runtime.resolve(strategy, args.mixed_precision)
    policy = runtime.policy
    trainer = training_loop.Trainer(
        PretrainingTask(args.max_seq_length, args.max_predictions_per_seq), bert_config,
        runtime, configs.TrainingConfig(
            os.path.join(args.work_dir, "model"), num_train_steps=args.num_train_steps,
            num_warmup_steps=args.num_train_steps // 10,
            optimizer=configs.OptimizerSettings(learning_rate=args.learning_rate),
            cadence=configs.CadenceSettings(iterations_per_loop=100,
                                            save_checkpoints_steps=args.eval_every)))
    trainer.restore()

    def dataset_fn(path, batch_size, is_training, input_context):
        return input_pipeline.pretraining_dataset(
            path, batch_size, args.max_seq_length, args.max_predictions_per_seq,
            is_training, input_context=input_context, seed=1)

    points = []
    start = time.time()
    for step in range(trainer.global_step + args.eval_every, args.num_train_steps + 1,
                      args.eval_every):
        history = trainer.train(functools.partial(
            dataset_fn, records["train"], args.train_batch_size, True), step,
            args.train_batch_size)
        point = {"step": step, "train_loss": history[-1]["loss"]}
        for name in ("heldout", "train"):
            results = trainer.evaluate(
                functools.partial(dataset_fn, records[name], 32, False),
                max_steps=args.eval_batches)
            for metric in ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy"):
                point[f"{name}_{metric}"] = round(results[metric], 4)
        point.update(unigram_baseline_accuracy=round(baseline, 4), precision=policy,
                     elapsed_s=round(time.time() - start, 1))
        points.append(point)
        machine.emit({**point, **machine.describe()}, args.out)

    if args.plot and points:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        steps = [p["step"] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        left.plot(steps, [p["train_loss"] for p in points], label="train loss (MLM + NSP)")
        left.plot(steps, [p["heldout_masked_lm_loss"] for p in points], label="held-out MLM loss")
        left.set_xlabel("step")
        left.legend()
        right.plot(steps, [p["heldout_masked_lm_accuracy"] for p in points],
                   label="held-out MLM accuracy")
        right.plot(steps, [p["heldout_next_sentence_accuracy"] for p in points],
                   label="held-out NSP accuracy")
        right.plot(steps, [p["train_next_sentence_accuracy"] for p in points],
                   linestyle="--", label="training-set NSP accuracy")
        right.axhline(baseline, linestyle="--", color="gray", label="unigram baseline (MLM)")
        right.axhline(0.5, linestyle=":", color="gray", label="chance (NSP)")
        right.set_xlabel("step")
        right.set_ylim(0, 1)
        right.legend()
        fig.suptitle(f"BERT L{args.num_layers} H{args.hidden_size} pretraining on "
                     f"{os.path.basename(args.corpus)}")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


if __name__ == "__main__":
    main(parse_args())
