"""The feature contracts of bert_tf's TFRecords, without TensorFlow.

This is the one place where each record layout is defined, shared by the
writers (the data builder, `bert_tf.pretraining_data`) and the readers
(`input_pipeline`, the tasks): both take the feature names, lengths and types
from here, so they cannot drift apart.

The pretraining contract is the original repository's: create_pretraining_data
writes these features and run_pretraining reads them, so files from either
implementation work with the other.

It imports no TensorFlow: the data builder must start in a fraction of a
second and stay small in memory, which importing TensorFlow (seconds, half a
gigabyte) would defeat. `input_pipeline.parsing_spec` turns a contract into
TensorFlow's parsing spec.
"""

import dataclasses
import math

INT64 = "int64"
FLOAT32 = "float32"


@dataclasses.dataclass(frozen=True)
class FeatureSpec:
    """One fixed-shape feature of a tf.train.Example.

    Attributes:
      name: the feature's key in the Example.
      length: the last axis: tokens for a sequence feature, else values.
      dtype: INT64 (an Int64List) or FLOAT32 (a FloatList).
      leading_shape: axes before length, e.g. (num_choices,) for the
        [choices, seq] input_ids of a multiple-choice record; () for most.
        The Example stores the values flat, row after row; the reader gives
        each record back its shape.
    """

    name: str
    length: int
    dtype: str
    leading_shape: tuple = ()

    @property
    def shape(self):
        """The feature's shape in one record: (*leading_shape, length)."""
        return (*self.leading_shape, self.length)

    @property
    def size(self):
        """How many values one record stores."""
        return math.prod(self.shape)


def pretraining_features(max_seq_length, max_predictions_per_seq):
    """The features of a masked-LM and next-sentence pretraining record.

    The order is the one in which the writer stores them; readers look
    features up by name.

    Args:
      max_seq_length: tokens per sequence, [CLS] and [SEP]s included.
      max_predictions_per_seq: masked positions stored per sequence.

    Returns:
      A tuple of FeatureSpec:
        input_ids, input_mask, segment_ids: [max_seq_length] int64, zero-padded;
        masked_lm_positions, masked_lm_ids: [max_predictions_per_seq] int64;
        masked_lm_weights: [max_predictions_per_seq] float32, 1.0 for a real
          prediction and 0.0 for padding;
        next_sentence_labels: [1] int64, 0 when segment B is the actual next
          text and 1 when it is a random span.
    """
    return (
        FeatureSpec("input_ids", max_seq_length, INT64),
        FeatureSpec("input_mask", max_seq_length, INT64),
        FeatureSpec("segment_ids", max_seq_length, INT64),
        FeatureSpec("masked_lm_positions", max_predictions_per_seq, INT64),
        FeatureSpec("masked_lm_ids", max_predictions_per_seq, INT64),
        FeatureSpec("masked_lm_weights", max_predictions_per_seq, FLOAT32),
        FeatureSpec("next_sentence_labels", 1, INT64),
    )


def classification_features(max_seq_length, is_regression=False):
    """The features of a sentence (pair) classification record.

    These are the original run_classifier.py's; glue.convert_example
    makes them.

    Args:
      max_seq_length: tokens per sequence, [CLS] and [SEP]s included.
      is_regression: whether label_ids holds a float score (STS-B).

    Returns:
      A tuple of FeatureSpec:
        input_ids, input_mask, segment_ids: [max_seq_length] int64;
        label_ids: [1] int64, or float32 for regression;
        is_real_example: [1] int64, 0 for the padding examples that fill the
          last eval or predict batch.
    """
    return (
        FeatureSpec("input_ids", max_seq_length, INT64),
        FeatureSpec("input_mask", max_seq_length, INT64),
        FeatureSpec("segment_ids", max_seq_length, INT64),
        FeatureSpec("label_ids", 1, FLOAT32 if is_regression else INT64),
        FeatureSpec("is_real_example", 1, INT64),
    )


def multi_label_features(max_seq_length, num_labels):
    """The features of a multi-label classification record (labelled_data, MultiLabelTask).

    Args:
      max_seq_length: tokens per sequence, [CLS] and [SEP]s included.
      num_labels: the labels an example may have any number of.

    Returns:
      A tuple of FeatureSpec: classification_features()' input_ids,
      input_mask, segment_ids and is_real_example, and label_ids: [num_labels,
      1] float32, 1.0 for each label the example has (multi-hot). The labels
      are a leading axis, not the length, so that --dynamic_padding, which
      cuts every feature as long as input_ids, never cuts them.
    """
    return (
        FeatureSpec("input_ids", max_seq_length, INT64),
        FeatureSpec("input_mask", max_seq_length, INT64),
        FeatureSpec("segment_ids", max_seq_length, INT64),
        FeatureSpec("label_ids", 1, FLOAT32, leading_shape=(num_labels,)),
        FeatureSpec("is_real_example", 1, INT64),
    )


def tagging_features(max_seq_length):
    """The features of a token tagging record: one window of one sentence (run_ner.py).

    A sentence longer than a window is split into overlapping windows; each
    word is scored in exactly one of them, at its first word piece.

    Args:
      max_seq_length: tokens per window, [CLS] and [SEP] included.

    Returns:
      A tuple of FeatureSpec:
        input_ids, input_mask, segment_ids: [max_seq_length] int64;
        label_ids: [max_seq_length] int64, the word's tag id at each scored
          position, 0 elsewhere;
        label_weights: [max_seq_length] float32, 1.0 at the scored positions
          (the first piece of each word this window scores), 0.0 elsewhere
          (later pieces, [CLS], [SEP], padding, words scored in another
          window);
        word_ids: [max_seq_length] int64, the index in its sentence of the
          word scored at each scored position, 0 elsewhere;
        sentence_index: [1] int64, the sentence's index in its file;
        is_real_example: [1] int64, 0 for the padding records that fill the
          last eval or predict batch.
    """
    return (
        FeatureSpec("input_ids", max_seq_length, INT64),
        FeatureSpec("input_mask", max_seq_length, INT64),
        FeatureSpec("segment_ids", max_seq_length, INT64),
        FeatureSpec("label_ids", max_seq_length, INT64),
        FeatureSpec("label_weights", max_seq_length, FLOAT32),
        FeatureSpec("word_ids", max_seq_length, INT64),
        FeatureSpec("sentence_index", 1, INT64),
        FeatureSpec("is_real_example", 1, INT64),
    )


def question_answering_features(max_seq_length, is_training):
    """The features of a SQuAD record: one window of one question (run_squad.py).

    The names are the original run_squad.py's; squad.window_record makes
    them.

    Args:
      max_seq_length: tokens per window, [CLS] and [SEP]s included.
      is_training: whether the record holds the answer's positions.

    Returns:
      A tuple of FeatureSpec:
        input_ids, input_mask, segment_ids: [max_seq_length] int64;
        unique_ids: [1] int64, the window's id, which ties its logits back to
          its question (0 for padding records);
        start_positions, end_positions: [1] int64, only when is_training: the
          answer's first and last token in the window, 0 ([CLS]) when the
          window does not hold it or the question has no answer;
        is_real_example: [1] int64, 0 for the padding records that fill the
          last predict batch.
    """
    specs = [
        FeatureSpec("unique_ids", 1, INT64),
        FeatureSpec("input_ids", max_seq_length, INT64),
        FeatureSpec("input_mask", max_seq_length, INT64),
        FeatureSpec("segment_ids", max_seq_length, INT64),
    ]
    if is_training:
        specs += [FeatureSpec("start_positions", 1, INT64), FeatureSpec("end_positions", 1, INT64)]
    specs.append(FeatureSpec("is_real_example", 1, INT64))
    return tuple(specs)


def multiple_choice_features(num_choices, max_seq_length):
    """The features of a multiple-choice record: one question, num_choices sequences.

    Args:
      num_choices: The sequences of a record, [CLS] context [SEP] ending [SEP]
        each.
      max_seq_length: Tokens per sequence, [CLS] and [SEP]s included.

    Returns:
      A tuple of FeatureSpec:
        input_ids, input_mask, segment_ids: [num_choices, max_seq_length] int64;
        label_ids: [1] int64, the right choice;
        is_real_example: [1] int64, 0 for padding records.
    """
    choices = (num_choices,)
    return (
        FeatureSpec("input_ids", max_seq_length, INT64, choices),
        FeatureSpec("input_mask", max_seq_length, INT64, choices),
        FeatureSpec("segment_ids", max_seq_length, INT64, choices),
        FeatureSpec("label_ids", 1, INT64),
        FeatureSpec("is_real_example", 1, INT64),
    )
