"""SQuAD questions -> windows -> records, as the original run_squad.py's FeatureWriter wrote them.

A window's record follows record_specs.question_answering_features: unique_ids, input_ids,
input_mask, segment_ids, in training start_positions and end_positions, and
is_real_example; finetune_data.write_records writes them, padding a
prediction set to full batches with records whose results are dropped before
postprocessing (data.py's SquadData gives finetune.run the records).
"""


def window_record(window, max_seq_length, is_training):
    """The record of one window.

    Args:
      window: A windows.InputFeatures.
      max_seq_length: Tokens per record.
      is_training: Whether to add start_positions and end_positions.

    Returns:
      A feature dict of record_specs.question_answering_features' layout.

    Raises:
      ValueError: for a window of another length, or a training window
        without answer positions.
    """
    if len(window.input_ids) != max_seq_length:
        raise ValueError(f"window {window.unique_id} has {len(window.input_ids)} tokens, "
                         f"not max_seq_length={max_seq_length}")
    record = {
        "unique_ids": window.unique_id,
        "input_ids": window.input_ids,
        "input_mask": window.input_mask,
        "segment_ids": window.segment_ids,
        "is_real_example": 1,
    }
    if is_training:
        if window.start_position is None or window.end_position is None:
            raise ValueError(f"window {window.unique_id} has no answer positions: convert "
                             "the examples with is_training=True")
        record["start_positions"] = window.start_position
        record["end_positions"] = window.end_position
    return record
