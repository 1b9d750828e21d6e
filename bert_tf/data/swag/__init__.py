"""SWAG for fine-tuning: its CSV files, multiple-choice records and the predictions file.

The modules, each importing only those above it:
  settings.py: SwagSettings, what the run's task and its data share;
  reading.py: CSV files -> SwagExamples, every row checked (SwagDataError
    names path:line); second_segments, the text each choice is packed with;
  scoring.py: choice_scores, the accuracy and the loss;
  outputs.py: write_predictions, predictions.csv;
  records.py: examples -> multiple-choice records (convert_example);
    SwagData and SwagReferences for finetune.run (scores and
    predictions.csv).

Everything public is re-exported here: `from bert_tf.data import swag`.
"""

from bert_tf.data.swag.outputs import PREDICTIONS_FILE, write_predictions
from bert_tf.data.swag.reading import SwagDataError, SwagExample, read_examples, second_segments
from bert_tf.data.swag.records import SPLIT_FILES, SwagData, SwagReferences, convert_example
from bert_tf.data.swag.scoring import choice_scores
from bert_tf.data.swag.settings import SwagSettings

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
