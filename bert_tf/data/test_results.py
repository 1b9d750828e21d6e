"""The original run_classifier.py's test_results.tsv: one line of class probabilities per example.

GLUE's data and the CSV data of one's own write their predictions in it
alike. Padding examples, which fill the last batch, are dropped first
(real_rows, which GLUE's submission files use too); the file is written
through bert_tf.io_utils.atomic_write, so it appears only once complete.
"""

import numpy as np

from bert_tf import io_utils


def real_rows(rows, is_real_example):
    """The rows that are not padding, after checking the mask's length.

    Args:
      rows: A sized sequence of predictions, one per example.
      is_real_example: [len(rows)] 0/1 mask, or None: every row is real.

    Returns:
      The rows whose mask is 1, in order.

    Raises:
      ValueError: the mask has another length or other values.
    """
    if is_real_example is None:
        return list(rows)
    mask = np.asarray(is_real_example)
    if mask.shape != (len(rows),) or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"is_real_example must be {len(rows)} values of 0 and 1, "
                         f"got shape {mask.shape}")
    return [row for row, real in zip(rows, mask, strict=True) if real]


def write_test_results(path, probabilities, is_real_example=None):
    """Writes test_results.tsv as the original does: one line of class probabilities per example.

    Args:
      path: The output file.
      probabilities: [n, num_labels] class probabilities, or [n] / [n, 1]
        scores for a regression task; a sized sequence of rows.
      is_real_example: Optional [n] 0/1 mask; padding rows (0) are not written.

    Returns:
      The number of lines written.

    Raises:
      ValueError: Rows differ in width; `path` is left as it was.
    """
    rows = real_rows(probabilities, is_real_example)
    width = None
    with io_utils.atomic_write(path) as f:
        for number, row in enumerate(rows, start=1):
            values = np.atleast_1d(np.asarray(row))
            width = width or values.size
            if values.ndim != 1 or values.size != width:
                raise ValueError(f"row {number} has shape {values.shape}; rows before it have "
                                 f"{width} values")
            # str() of a numpy float is its shortest round-tripping form.
            f.write("\t".join(str(value) for value in values) + "\n")
    return len(rows)
