"""GLUE examples -> classification TFRecords, as the original run_classifier.py wrote them.

Each example becomes one tf.train.Example with input_ids, input_mask,
segment_ids, label_ids and is_real_example (input_pipeline.py's
classification contract, which input_pipeline.classification_dataset reads).
Files are written to output_dir like the original's train.tf_record, so that
a TPU reads them from GCS.

Eval and predict sets are padded with dummy examples (is_real_example = 0) to
a multiple of the batch size: TPUs need every batch full, and the padding
counts in no metric and in no prediction file.
"""

import os
import uuid

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import glue, tokenization


class ClassifierDataError(ValueError):
    """An example that cannot be turned into features."""


def convert_example(example, label_map, max_seq_length, tokenizer, is_regression):
    """Tokenizes and packs one InputExample.

    Args:
      example: A glue.InputExample. A None label (test sets) becomes id 0.
      label_map: {label string: id}; unused for regression.
      max_seq_length: Length of every packed sequence.
      tokenizer: A tokenization.FullTokenizer.
      is_regression: Whether the label is a float.

    Returns:
      A dict of input_ids, input_mask, segment_ids (lists), label_ids (int or
      float) and is_real_example (1).

    Raises:
      ClassifierDataError: for a label that is not in label_map.
    """
    ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_a))
    ids_b = None
    if example.text_b is not None:
        ids_b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_b))
    features = tokenization.pack_ids(
        ids_a, ids_b, max_seq_length=max_seq_length,
        cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
    if is_regression:
        features["label_ids"] = float(example.label) if example.label is not None else 0.0
    elif example.label is None:
        features["label_ids"] = 0
    elif example.label in label_map:
        features["label_ids"] = label_map[example.label]
    else:
        raise ClassifierDataError(
            f"example {example.guid}: unknown label {example.label!r}; "
            f"known: {', '.join(label_map)}")
    features["is_real_example"] = 1
    return features


def _padding_features(max_seq_length, is_regression):
    """A dummy example that makes a batch full; it counts in nothing."""
    zeros = [0] * max_seq_length
    return {"input_ids": zeros, "input_mask": zeros, "segment_ids": zeros,
            "label_ids": 0.0 if is_regression else 0, "is_real_example": 0}


def _serialize(features):
    """One tf.train.Example's bytes."""
    def feature(values):
        values = np.atleast_1d(values)
        if values.dtype.kind == "f":
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(
        feature={name: feature(value) for name, value in features.items()})).SerializeToString()


def write_tfrecord(path, examples, label_list, max_seq_length, tokenizer,
                   is_regression=False, pad_to_multiple_of=None):
    """Converts examples and writes them to one TFRecord file, atomically.

    Args:
      path: Output file (local or gs://).
      examples: A list of glue.InputExample.
      label_list: The task's labels, in id order (empty for regression).
      max_seq_length: Sequence length.
      tokenizer: A tokenization.FullTokenizer.
      is_regression: Whether labels are floats.
      pad_to_multiple_of: Add padding examples up to a multiple of this.

    Returns:
      The number of records written, padding included.

    Raises:
      ClassifierDataError: for an unknown label; nothing is written then.
    """
    label_map = {label: i for i, label in enumerate(label_list)}
    # Every example is converted before the file is opened, so that a bad one
    # fails before anything is written.
    records = [convert_example(e, label_map, max_seq_length, tokenizer, is_regression)
               for e in examples]
    if pad_to_multiple_of:
        while len(records) % pad_to_multiple_of:
            records.append(_padding_features(max_seq_length, is_regression))
    # A hidden name of its own: a crash never leaves a truncated file under a
    # name that looks like a record file, and workers that write the same
    # path at once (multi-worker training) never write into one temporary file.
    directory, base = os.path.split(path)
    tmp = os.path.join(directory, f".{base}.{uuid.uuid4().hex}.tmp")
    try:
        with tf.io.TFRecordWriter(tmp) as writer:
            for record in records:
                writer.write(_serialize(record))
        tf.io.gfile.rename(tmp, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)
        raise
    logging.info("Wrote %d records (%d real) to %s", len(records), len(examples), path)
    return len(records)


def evaluation_metrics(task_name, predictions, labels, is_regression):
    """eval_loss, eval_accuracy (classification) and the task's GLUE metrics.

    Args:
      task_name: The GLUE task.
      predictions: [n, num_labels] probabilities, or [n] (or [n, 1])
        regression scores.
      labels: [n] class ids, or float scores for regression.
      is_regression: Which of the two.

    Returns:
      A dict of floats. The loss is the mean cross-entropy (or squared
      error) that training minimizes.
    """
    predictions = np.asarray(predictions, np.float64)
    labels = np.asarray(labels)
    if is_regression:
        # [n, 1] scores (the head's logits) would broadcast against [n] labels.
        predictions = predictions.reshape(labels.shape)
        results = {"eval_loss": float(np.mean((predictions - labels) ** 2))}
    else:
        chosen = predictions[np.arange(len(labels)), labels]
        results = {"eval_loss": float(-np.mean(np.log(np.maximum(chosen, 1e-12)))),
                   "eval_accuracy": float(np.mean(predictions.argmax(-1) == labels))}
    results.update(glue.compute_metrics(task_name, predictions, labels))
    return results
