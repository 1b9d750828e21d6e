"""Helpers shared by the tests of tf.data pipelines."""

import collections

import numpy as np


def read_all(dataset, batches=None):
    """Concatenates a dataset's batches into numpy arrays.

    Args:
      dataset: A tf.data.Dataset of dicts of tensors.
      batches: Read only this many batches; all when None.

    Returns:
      A dict from feature name to one numpy array over all batches read.
    """
    if batches is not None:
        dataset = dataset.take(batches)
    parts = collections.defaultdict(list)
    for batch in dataset:
        for name, tensor in batch.items():
            parts[name].append(tensor.numpy())
    return {name: np.concatenate(arrays) for name, arrays in parts.items()}
