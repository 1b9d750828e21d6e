"""Makes tests/fixtures/seqeval_reference.json: seqeval's entity scores of random tag sequences.

tests/unit/data/conll/test_metrics.py scores the same sequences with bert_tf's
conlleval rules and compares with what seqeval (default, lenient mode, which
follows conlleval) gave. seqeval needs scikit-learn, which the tests do not
install: Keras imports scikit-learn in every process where it is installed,
about a second each. Run this tool in an environment of its own:

  python -m venv /tmp/seqeval && /tmp/seqeval/bin/pip install seqeval numpy
  /tmp/seqeval/bin/python -m tools.make_seqeval_reference
"""

import argparse
import importlib.metadata
import json
import os

import numpy as np
from seqeval import metrics
from seqeval.metrics.sequence_labeling import get_entities

TYPES = ("PER", "LOC", "ORG", "MISC")
FIXTURE = os.path.join("tests", "fixtures", "seqeval_reference.json")


def random_tags(rng, length):
    """A random tag sequence, often with I- after O or after another type."""
    tags = ["O"] + [f"{prefix}-{type_}" for type_ in TYPES for prefix in "BI"]
    # "O" half of the time, the eight entity tags share the rest.
    return [str(tag) for tag in rng.choice(tags, size=length, p=[0.5] + [0.0625] * 8)]


def perturbed(rng, tags):
    """tags with each tag replaced by a random one with probability 0.3."""
    replacements = random_tags(rng, len(tags))
    return [new if rng.rand() < 0.3 else old for old, new in zip(tags, replacements, strict=True)]


def batches(seed=1234, num_batches=20, batch_size=10):
    """Pairs of (true, predicted) sentence batches.

    Scored per batch, so that types missing from one side of a batch occur
    too; most predictions are perturbed truths, some wholly random.
    """
    rng = np.random.RandomState(seed)
    for _ in range(num_batches):
        true = [random_tags(rng, rng.randint(0, 16)) for _ in range(batch_size)]
        pred = [perturbed(rng, tags) if rng.rand() < 0.7 else random_tags(rng, len(tags))
                for tags in true]
        yield true, pred


def reference(true, pred):
    """seqeval's scores of one batch, and the entity spans of each sequence (end exclusive)."""
    report = metrics.classification_report(true, pred, output_dict=True, zero_division=0)
    return {
        "true": true,
        "pred": pred,
        "precision": metrics.precision_score(true, pred, zero_division=0),
        "recall": metrics.recall_score(true, pred, zero_division=0),
        "f1": metrics.f1_score(true, pred, zero_division=0),
        "token_accuracy": metrics.accuracy_score(true, pred),
        "types": {type_: {"precision": scores["precision"], "recall": scores["recall"],
                          "f1": scores["f1-score"], "support": int(scores["support"])}
                  for type_, scores in report.items() if not type_.endswith(" avg")},
        # seqeval's end is inclusive; bert_tf's, as Python's slices, is not.
        "spans": [[[type_, start, end + 1] for type_, start, end in get_entities(tags)]
                  for tags in true + pred],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=FIXTURE)
    args = parser.parse_args()
    fixture = {"seqeval": importlib.metadata.version("seqeval"),
               "batches": [reference(true, pred) for true, pred in batches()]}
    # One batch a line: a readable diff when seqeval changes its mind on one.
    lines = [json.dumps(batch) for batch in fixture["batches"]]
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(f'{{"seqeval": "{fixture["seqeval"]}", "batches": [\n')
        f.write(",\n".join(lines))
        f.write("\n]}\n")
    print(f"wrote {args.output}: {len(fixture['batches'])} batches, seqeval "
          f"{fixture['seqeval']}")


if __name__ == "__main__":
    main()
