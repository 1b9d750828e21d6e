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
  python bench/learning_check.py --corpus=../shared/data/corpus/gutenberg_11books.txt \\
      --work_dir=/tmp/learning_check --num_train_steps=3000 --plot=docs/learning_curve.png
"""

import functools
import os
import time

import machine
import minilm
import pretraining_corpus
import tensorflow as tf
from absl import app, flags

from bert_tf import input_pipeline, precision, training
from bert_tf.config import BertConfig
from bert_tf.tasks import PretrainingTask

FLAGS = flags.FLAGS
pretraining_corpus.define_flags(work_dir="/tmp/learning_check")
flags.DEFINE_integer("eval_batches", 50, "Held-out batches of 32 per evaluation.")
flags.DEFINE_enum("mixed_precision", "auto", list(precision.PRECISIONS),
                  "As run_pretraining.py's flag; XLA is chosen as there (--jit_compile=auto).")
flags.DEFINE_string("plot", None, "Write the curves to this PNG.")
flags.DEFINE_string("out", None, "Also append the JSON lines to this file.")
flags.mark_flag_as_required("corpus")


def main(_):
    os.makedirs(FLAGS.work_dir, exist_ok=True)
    vocab_file = FLAGS.vocab_file or minilm.vocab_file()
    records = pretraining_corpus.build_records(
        FLAGS.corpus, FLAGS.heldout_every, FLAGS.work_dir, vocab_file, FLAGS.max_seq_length,
        FLAGS.max_predictions_per_seq, FLAGS.dupe_factor, FLAGS.out)
    token, baseline = pretraining_corpus.unigram_baseline(
        records["train"], records["heldout"], FLAGS.max_seq_length,
        FLAGS.max_predictions_per_seq)
    machine.emit({"unigram_baseline_token": token,
                  "unigram_baseline_accuracy": round(baseline, 4), **machine.describe()},
                 FLAGS.out)

    bert_config = BertConfig(
        vocab_size=30522, hidden_size=FLAGS.hidden_size, num_hidden_layers=FLAGS.num_layers,
        num_attention_heads=FLAGS.hidden_size // 64, intermediate_size=4 * FLAGS.hidden_size,
        max_position_embeddings=512, type_vocab_size=2)
    strategy = tf.distribute.get_strategy()
    policy = precision.set_precision_policy(FLAGS.mixed_precision, strategy)
    trainer = training.Trainer(
        PretrainingTask(FLAGS.max_seq_length, FLAGS.max_predictions_per_seq), bert_config,
        strategy, training.TrainingConfig(
            os.path.join(FLAGS.work_dir, "model"), num_train_steps=FLAGS.num_train_steps,
            num_warmup_steps=FLAGS.num_train_steps // 10, learning_rate=FLAGS.learning_rate,
            iterations_per_loop=100, save_checkpoints_steps=FLAGS.eval_every))
    trainer.restore()

    def dataset_fn(path, batch_size, is_training, input_context):
        return input_pipeline.pretraining_dataset(
            path, batch_size, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
            is_training, input_context=input_context, seed=1)

    points = []
    start = time.time()
    for step in range(trainer.global_step + FLAGS.eval_every, FLAGS.num_train_steps + 1,
                      FLAGS.eval_every):
        history = trainer.train(functools.partial(
            dataset_fn, records["train"], FLAGS.train_batch_size, True), step,
            FLAGS.train_batch_size)
        point = {"step": step, "train_loss": history[-1]["loss"]}
        for name in ("heldout", "train"):
            results = trainer.evaluate(
                functools.partial(dataset_fn, records[name], 32, False),
                max_steps=FLAGS.eval_batches)
            for metric in ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy"):
                point[f"{name}_{metric}"] = round(results[metric], 4)
        point.update(unigram_baseline_accuracy=round(baseline, 4), precision=policy,
                     elapsed_s=round(time.time() - start, 1))
        points.append(point)
        machine.emit({**point, **machine.describe()}, FLAGS.out)

    if FLAGS.plot and points:
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
        fig.suptitle(f"BERT L{FLAGS.num_layers} H{FLAGS.hidden_size} pretraining on "
                     f"{os.path.basename(FLAGS.corpus)}")
        fig.tight_layout()
        fig.savefig(FLAGS.plot, dpi=100)


if __name__ == "__main__":
    app.run(main)
