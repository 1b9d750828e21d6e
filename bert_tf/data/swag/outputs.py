"""SWAG's predictions file: each question's chosen ending, with every ending's probability."""

import csv

from bert_tf import io_utils

PREDICTIONS_FILE = "predictions.csv"


def write_predictions(path, examples, probabilities):
    """Writes the chosen ending of each question, with every ending's probability.

    A CSV file, written only once complete: id (the row's index), the chosen
    ending's number and text, and probability0 .. probability<n-1>, in input
    order.

    Args:
      path: The output file.
      examples: The SwagExamples predicted.
      probabilities: float [examples, choices], in the same order.
    """
    num_choices = len(examples[0].endings) if examples else 0
    with io_utils.atomic_write(path, "w") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["id", "prediction", "ending",
                         *(f"probability{i}" for i in range(num_choices))])
        for example, row in zip(examples, probabilities, strict=True):
            chosen = int(row.argmax())
            writer.writerow([example.example_id, chosen, example.endings[chosen],
                             *(f"{p:.6f}" for p in row)])
