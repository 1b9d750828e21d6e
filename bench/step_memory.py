"""How much memory a training step's gradients take, by sequence length.

Builds all-MiniLM-L6-v2 with a token-tagging head (the run_ner.py model) as
the scripts do (run_setup.prepare: the precision, XLA and the CPU allocator
that --mixed_precision=auto and --jit_compile=auto choose here), then
computes the loss's gradients on batches of --batch_size sequences of each
length in --lengths, in that order, and prints after each the process's
resident memory (VmRSS) and how much it grew since the model was built. On a
CPU the memory that a step's tensors took stays with the process (TensorFlow's
pool, or malloc's free lists), so each line shows the most that any step so far
needed. Where TensorFlow pools its CPU memory, each line also has the most
that step itself held at once (allocator_peak_mb), which the order in which
the executor runs the step's ops decides, and the step's seconds (a step
that traces the function includes the tracing). Run it from the root of the checkout
to measure, for example a worktree of an older commit, to compare two
versions.

Example, from the repository root:
  .venv/bin/python -m bench.step_memory --lengths=48,90,128 \\
      --out=bench/results/step_memory-$(date +%F).jsonl
"""

import argparse
import os
import time

from bench import arguments, machine, minilm

# CoNLL-2003's tags: the head's width, as run_ner.py builds it.
CONLL_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")


def resident_mb():
    """The process's resident memory now, in MB (2^20 bytes)."""
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def allocator_peak_mb(tf):
    """The most TensorFlow's CPU allocator held at once since the last call, in MB.

    TensorFlow counts this for its pooled allocator (the one it uses with
    oneDNN on CPUs with AVX512_VNNI, AVX512_BF16 or AMX): the step's own
    tensors, without the pool's free space or the C heap's. Each call starts
    the next count.

    Returns:
      The peak in MB, or None where TensorFlow does not count it.
    """
    try:
        peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    except ValueError:
        return None
    tf.config.experimental.reset_memory_stats("CPU:0")
    # malloc, TensorFlow's other CPU allocator, reports 0.
    return peak >> 20 if peak else None


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=arguments.comma_list, default=["48", "90", "128"],
                        help="Sequence lengths, in the order they are fed.")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--mixed_precision", default="auto")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    import tensorflow as tf

    from bert_tf import configs
    from bert_tf.checkpoints import model_files
    from bert_tf.data import conll
    from bert_tf.model.modeling import BertModel
    from bert_tf.runtime import precision, run_setup
    from bert_tf.tasks import TaggingTask

    lengths = [int(length) for length in args.lengths]
    files = model_files.find(minilm.model_dir(), max_seq_length=max(lengths))
    runtime = run_setup.prepare(
        configs.RuntimeSettings(mixed_precision=args.mixed_precision, seed=1))
    jit_compile = runtime.jit_compile
    task = TaggingTask(CONLL_TAGS, conll.ConllSettings(max(lengths)))
    with precision.building_under(runtime.policy):
        encoder = BertModel(files.bert_config)
        heads = task.create_heads(encoder)
    variables = encoder.trainable_variables + heads["classifier"].trainable_variables

    @tf.function(jit_compile=jit_compile, reduce_retracing=True)
    def gradients(features):
        with tf.GradientTape() as tape:
            outputs = task.forward(encoder, heads, features, training=True)
            loss = task.losses(features, outputs)["loss"]
        return tape.gradient(loss, variables)

    built = resident_mb()
    allocator_peak_mb(tf)
    for length in lengths:
        shape = [args.batch_size, length]
        features = {name: tf.ones(shape, tf.int32) for name in
                    ("input_ids", "input_mask", "label_ids", "word_ids")}
        features["segment_ids"] = tf.zeros(shape, tf.int32)
        features["label_weights"] = tf.ones(shape, tf.float32)
        for name in ("sentence_index", "is_real_example"):
            features[name] = tf.ones([args.batch_size, 1], tf.int32)
        start = time.perf_counter()
        # .numpy() waits for the step's last kernel. (The pooler, unused
        # by the tagger, has None gradients.)
        for tensor in tf.nest.flatten(gradients(features), expand_composites=True):
            if tensor is not None:
                tensor.numpy()
        seconds = time.perf_counter() - start
        resident = resident_mb()
        machine.emit({"check": "step_memory", "batch_size": args.batch_size,
                      "seq_length": length, "seconds": round(seconds, 3), "rss_mb": resident,
                      "growth_mb": resident - built, "built_mb": built,
                      "allocator_peak_mb": allocator_peak_mb(tf),
                      "jit_compile": jit_compile,
                      "policy": runtime.policy,
                      "checkout": os.getcwd(), **machine.describe()}, args.out)


if __name__ == "__main__":
    main(parse_args())
