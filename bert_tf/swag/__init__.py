"""SWAG for fine-tuning: its CSV files, multiple-choice records and the predictions file.

The modules, each importing only those above it:
  reading.py: CSV files -> SwagExamples, every row checked (SwagDataError
    names path:line); second_segments, the text each choice is packed with;
  records.py: examples -> multiple-choice records (convert_example);
    SwagData and SwagReferences for finetune.run; write_predictions.

Everything public is re-exported here: `from bert_tf import swag`.
"""

from bert_tf.swag.reading import SwagDataError, SwagExample, read_examples, second_segments
from bert_tf.swag.records import (
    PREDICTIONS_FILE,
    SPLIT_FILES,
    SwagData,
    SwagReferences,
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
    "convert_example",
    "read_examples",
    "second_segments",
    "write_predictions",
]
