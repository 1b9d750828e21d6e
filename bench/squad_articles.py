"""SQuAD predictions scored per article, and the lengths of predicted and gold answers.

Reads one dev file (v1.1 layout: every question answerable) and any number of
predictions files in run_squad.py's predictions.json layout (question id to
text; bench/peers/hf_squad_finetune.py --predictions_out writes the same), each
named, e.g. bert_tf_seed1=/tmp/.../predictions.json. Scores them with the
official v1.1 rules (exact match and F1 of normalized answers, the best over
a question's gold answers), overall and per article, and measures answer
length in normalized words: the mean predicted length, the mean length of the
gold answer nearest to it (the one that gives the best F1), the share of each
in length bins (1, 2, 3, 4, 5, 6-10, 11+ words; an empty prediction counts as
1), and how often the prediction is longer than every gold answer, contains
a gold answer with more words around it, or shares no word with any.

Prints one JSON line per predictions file (overall figures, the length
figures and a per-article dict) and, with --table, a Markdown table of
per-article F1 with one column per run (files named NAME_seedN are one run at
several seeds: mean [min, max]); --plot draws each run's EM and F1, a dot per
seed; --out appends the lines to a file.

  .venv/bin/python -m bench.squad_articles --dev_file=/tmp/squad41/dev-v1.1.json \\
      --predictions=bert_tf_seed1=/tmp/sq/bert_tf_seed1/predictions.json,hf_seed1=/tmp/sq/hf.json \\
      --table --out=bench/results/squad_articles-$(date +%F).jsonl
"""

import argparse
import collections
import json
import re
import statistics

from bench import arguments, machine
from bert_tf.data.squad.scoring import normalize_answer

# Answer lengths, in normalized words, counted in these bins (the last open).
LENGTH_BINS = (1, 2, 3, 4, 5, 6, 11)


def f1_score(prediction_words, gold_words):
    """The official v1.1 F1 of two normalized word lists (no shared word, empty ones
    included, is 0); on lists, since judge() measures their lengths too."""
    common = collections.Counter(prediction_words) & collections.Counter(gold_words)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction_words), same / len(gold_words)
    return 2 * precision * recall / (precision + recall)


def read_questions(path):
    """(article title, question id, gold answer texts) of every question in a v1.1 file."""
    with open(path, encoding="utf-8") as f:
        squad = json.load(f)
    return [(article["title"], qa["id"], [answer["text"] for answer in qa["answers"]])
            for article in squad["data"]
            for paragraph in article["paragraphs"]
            for qa in paragraph["qas"]]


def judge(prediction, golds):
    """One question's figures.

    Args:
      prediction: The predicted text.
      golds: The gold answer texts.

    Returns:
      A dict: exact (0 or 1), f1, predicted and gold (the length in words of the
      prediction and of its best-matching gold answer), longer (longer than every
      gold answer), contains (not exact, and a gold answer inside it with more
      words around it) and disjoint (no word in common with any gold answer).
    """
    predicted = normalize_answer(prediction).split()
    gold_words = [normalize_answer(gold).split() for gold in golds]
    scores = [f1_score(predicted, words) for words in gold_words]
    best = max(range(len(golds)), key=lambda i: (scores[i], -len(gold_words[i])))
    text = " " + " ".join(predicted) + " "
    exact = any(predicted == words for words in gold_words)
    return {
        "exact": float(exact),
        "f1": scores[best],
        "predicted": len(predicted),
        "gold": len(gold_words[best]),
        "longer": float(all(len(predicted) > len(words) for words in gold_words)),
        "contains": float(not exact and any(words and len(predicted) > len(words)
                                            and " " + " ".join(words) + " " in text
                                            for words in gold_words)),
        "disjoint": float(max(scores) == 0.0),
    }


def length_shares(lengths):
    """{bin: share of the lengths in it}, the bins of LENGTH_BINS ("6-10", "11+", ...)."""
    bounded = zip(LENGTH_BINS[:-1], LENGTH_BINS[1:], strict=True)
    names = [f"{low}" if high == low + 1 else f"{low}-{high - 1}" for low, high in bounded]
    names.append(f"{LENGTH_BINS[-1]}+")
    counts = collections.Counter()
    for length in lengths:
        index = sum(length >= low for low in LENGTH_BINS) - 1
        counts[names[max(index, 0)]] += 1
    return {name: round(counts[name] / len(lengths), 4) for name in names}


def summarize(judgements):
    """Percent exact match and F1, mean lengths and shares over a list of judge()'s dicts."""
    def mean(key):
        return statistics.fmean(j[key] for j in judgements)

    return {"questions": len(judgements), "exact_match": round(100 * mean("exact"), 2),
            "f1": round(100 * mean("f1"), 2),
            "mean_predicted_words": round(mean("predicted"), 3),
            "mean_gold_words": round(mean("gold"), 3),
            "longer_than_every_gold": round(mean("longer"), 4),
            "contains_gold_and_more": round(mean("contains"), 4),
            "no_word_in_common": round(mean("disjoint"), 4),
            "predicted_length_shares": length_shares([j["predicted"] for j in judgements]),
            "gold_length_shares": length_shares([j["gold"] for j in judgements])}


def score_file(questions, path):
    """Overall and per-article figures of one predictions file."""
    with open(path, encoding="utf-8") as f:
        predictions = json.load(f)
    missing = [qid for _, qid, _ in questions if qid not in predictions]
    if missing:
        raise SystemExit(f"{path}: no prediction for {len(missing)} of the dev file's "
                         f"questions (e.g. {missing[0]}): was it made on another dev file?")
    by_article = collections.defaultdict(list)
    for title, qid, golds in questions:
        by_article[title].append(judge(predictions[qid], golds))
    everything = [j for judgements in by_article.values() for j in judgements]
    return {**summarize(everything),
            "articles": {title: {"questions": len(judgements),
                                 "exact_match": summarize(judgements)["exact_match"],
                                 "f1": summarize(judgements)["f1"]}
                         for title, judgements in by_article.items()}}


def by_run(lines):
    """The lines grouped by run: their names without a trailing _seedN, in order."""
    runs = collections.defaultdict(list)
    for line in lines:
        runs[re.sub(r"_seed\d+$", "", line["name"])].append(line)
    return runs


def spread(values):
    """One figure, or the mean and [min, max] of several, to one decimal."""
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.mean(values):.1f} [{min(values):.1f}, {max(values):.1f}]"


def table(lines):
    """Markdown: one row per article (then EM and F1 over all), one column per run.

    Lines named NAME_seed1, NAME_seed2, ... are one run at several seeds: their
    column gives the mean and [min, max] over the seeds.
    """
    runs = by_run(lines)
    header = [name if len(seeds) == 1 else f"{name} ({len(seeds)} seeds)"
              for name, seeds in runs.items()]
    rows = ["| article | questions | " + " | ".join(header) + " |",
            "|---|---|" + "---|" * len(runs)]
    for title, figures in lines[0]["articles"].items():
        rows.append(f"| {title} | {figures['questions']} | " + " | ".join(
            spread([line["articles"][title]["f1"] for line in seeds])
            for seeds in runs.values()) + " |")
    for metric in ("exact_match", "f1"):
        rows.append(f"| all, {metric} | {lines[0]['questions']} | " + " | ".join(
            spread([line[metric] for line in seeds]) for seeds in runs.values()) + " |")
    return "\n".join(rows)


def plot(lines, path):
    """A strip chart: each run's overall EM and F1, one dot per seed, its mean a bar.

    Needs matplotlib (bert_tf itself does not).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = by_run(lines)
    fig, axes = plt.subplots(1, 2, figsize=(2 + 2.6 * len(runs), 4.8))
    for ax, metric, label in zip(axes, ("exact_match", "f1"), ("exact match", "F1"),
                                 strict=True):
        for x, seeds in enumerate(runs.values()):
            values = [line[metric] for line in seeds]
            ax.scatter([x] * len(values), values, alpha=0.7)
            ax.hlines(statistics.mean(values), x - 0.25, x + 0.25, color="black")
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([f"{name}\n({len(seeds)} seeds)" for name, seeds in runs.items()],
                           rotation=20, ha="right")
        ax.set_xlim(-0.6, len(runs) - 0.4)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"SQuAD v1.1 metric on {lines[0]['questions']} dev questions "
                 "(a dot per seed, a bar at the mean)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def parse_args(argv=None):
    """The command line's flags (sys.argv's when argv is None)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev_file", required=True,
                        help="SQuAD v1.1 dev json the predictions were made on.")
    parser.add_argument("--predictions", type=arguments.comma_list, default=[],
                        help="name=path of each predictions.json, comma-separated.")
    arguments.add_boolean(parser, "table", False,
                          "Also print a Markdown table of F1 per article.")
    parser.add_argument("--plot", default=None,
                        help="Also draw each run's EM and F1, a dot per seed, to this PNG.")
    parser.add_argument("--out", default=None, help="Also append the JSON lines to this file.")
    return parser.parse_args(argv)


def main(args):
    questions = read_questions(args.dev_file)
    lines = []
    for item in args.predictions:
        name, _, path = item.partition("=")
        line = {"name": name, "predictions": path, "dev_file": args.dev_file,
                **score_file(questions, path), **machine.describe()}
        machine.emit(line, args.out)
        lines.append(line)
    if args.table and lines:
        print(table(lines))
    if args.plot and lines:
        plot(lines, args.plot)


if __name__ == "__main__":
    main(parse_args())
