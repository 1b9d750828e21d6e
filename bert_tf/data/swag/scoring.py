"""SWAG's scores: the accuracy of the chosen endings and the loss of the right ones."""

import numpy as np


def choice_scores(probabilities, labels):
    """Accuracy of the most probable choice, and the cross-entropy of the right one.

    Args:
      probabilities: float [questions, choices].
      labels: The right choice of each question.

    Returns:
      {"eval_accuracy": float, "eval_loss": float}.
    """
    probabilities = np.asarray(probabilities, np.float64)
    labels = np.asarray(labels)
    chosen = probabilities.argmax(-1)
    right = probabilities[np.arange(len(labels)), labels]
    return {"eval_accuracy": float(np.mean(chosen == labels)),
            "eval_loss": float(-np.mean(np.log(np.maximum(right, 1e-30))))}
