"""SWAG for fine-tuning: its CSV files, multiple-choice records and the predictions file.

The modules, each importing only those above it:
  reading.py: CSV files -> SwagExamples, every row checked (SwagDataError
    names path:line); second_segments, the text each choice is packed with;
  records.py: examples -> multiple-choice records (convert_example);
    SwagSettings, SwagData and SwagReferences for finetune.run (scores
    and predictions.csv); write_predictions.

Everything public is re-exported here: `from bert_tf.data import swag`.
"""

from bert_tf.data.swag.reading import SwagDataError, SwagExample, read_examples, second_segments
from bert_tf.data.swag.records import (
    PREDICTIONS_FILE,
    SPLIT_FILES,
    SwagData,
    SwagReferences,
    SwagSettings,
    choice_scores,
    convert_example,
    write_predictions,
)

__all__ = [
    "PREDICTIONS_FILE",
    "SPLIT_FILES",
    "SwagData",
    "SwagDataError",
    "SwagExample",
    "SwagReferences",
    "SwagSettings",
    "choice_scores",
    "convert_example",
    "read_examples",
    "second_segments",
    "write_predictions",
]
