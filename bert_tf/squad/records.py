"""InputFeatures -> SQuAD TFRecords, as the original run_squad.py's FeatureWriter wrote them.

The records follow features.squad_features: unique_ids, input_ids,
input_mask, segment_ids, in training start_positions and end_positions, and
is_real_example. Prediction sets are padded with dummy records
(is_real_example = 0, unique_ids = 0) to a multiple of the batch size, as
classifier_data pads them, since a TPU needs every batch full; their results
are dropped before postprocessing. The file appears only once complete.
"""

from absl import logging

from bert_tf import features as feature_contracts
from bert_tf import io_utils, tfrecord


def _record(feature, is_training):
    """The feature dict of one window."""
    record = {
        "unique_ids": feature.unique_id,
        "input_ids": feature.input_ids,
        "input_mask": feature.input_mask,
        "segment_ids": feature.segment_ids,
        "is_real_example": 1,
    }
    if is_training:
        record["start_positions"] = feature.start_position
        record["end_positions"] = feature.end_position
    return record


def _padding_record(max_seq_length, is_training):
    """A dummy record that makes a batch full; it counts in nothing."""
    zeros = [0] * max_seq_length
    record = {"unique_ids": 0, "input_ids": zeros, "input_mask": zeros, "segment_ids": zeros,
              "is_real_example": 0}
    if is_training:
        record["start_positions"] = record["end_positions"] = 0
    return record


def write_tfrecord(path, features, max_seq_length, is_training, pad_to_multiple_of=None):
    """Writes windows to one TFRecord file, atomically.

    Args:
      path: the output file (local or gs://).
      features: a list of windows.InputFeatures, each with max_seq_length
        input_ids, input_mask and segment_ids (and, in training, positions).
      max_seq_length: tokens per record.
      is_training: whether to write start_positions and end_positions.
      pad_to_multiple_of: add padding records up to a multiple of this.

    Returns:
      The number of real records (windows), padding excluded.

    Raises:
      ValueError: for a window of another length, or a training window
        without positions; nothing is written then.
    """
    records = []
    for feature in features:
        if len(feature.input_ids) != max_seq_length:
            raise ValueError(f"window {feature.unique_id} has {len(feature.input_ids)} tokens, "
                             f"not max_seq_length={max_seq_length}")
        if is_training and (feature.start_position is None or feature.end_position is None):
            raise ValueError(f"window {feature.unique_id} has no answer positions: convert "
                             "the examples with is_training=True")
        records.append(_record(feature, is_training))
    num_windows = len(records)
    if pad_to_multiple_of:
        while len(records) % pad_to_multiple_of:
            records.append(_padding_record(max_seq_length, is_training))
    specs = feature_contracts.squad_features(max_seq_length, is_training)
    with io_utils.atomic_write(path, "wb") as f:
        tfrecord.write_examples(f, records, specs)
    logging.info("Wrote %d windows (%d records with padding) to %s", num_windows,
                 len(records), path)
    return num_windows
