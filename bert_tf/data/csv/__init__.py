"""Fine-tuning on labelled CSV or TSV files of one's own: single-label, multi-label, regression.

run_classifier.py reads them when given --train_file, --eval_file or
--predict_file instead of a GLUE --task_name. A header row names the
columns; flags (or default header names) pick the text(s) and the label.

The modules, each importing only those above it:
  settings.py: LabelledDataConfig, the problem types and the default column names;
  reading.py: a CSV or TSV file -> header and rows with line numbers
    (LabelledDataError);
  labels.py: the label list (flag, file, training data, label_list.txt) and
    label cells;
  scoring.py: eval_results.txt's metrics, per label;
  outputs.py: test_results.tsv and the predictions file, with label names;
  records.py: rows -> classification records; LabelledData and
    LabelledReferences.

Everything public is re-exported here.
"""

from bert_tf.data.csv.labels import LABEL_FILE
from bert_tf.data.csv.outputs import write_outputs
from bert_tf.data.csv.reading import LabelledDataError, read_table
from bert_tf.data.csv.records import Example, LabelledData, LabelledReferences
from bert_tf.data.csv.scoring import MAIN_METRICS, score
from bert_tf.data.csv.settings import (
    HF_PROBLEM_TYPES,
    MULTI_LABEL,
    PROBLEM_TYPES,
    REGRESSION,
    SINGLE_LABEL,
    LabelledDataConfig,
)

__all__ = [
    "HF_PROBLEM_TYPES",
    "LABEL_FILE",
    "MAIN_METRICS",
    "MULTI_LABEL",
    "PROBLEM_TYPES",
    "REGRESSION",
    "SINGLE_LABEL",
    "Example",
    "LabelledData",
    "LabelledDataConfig",
    "LabelledDataError",
    "LabelledReferences",
    "read_table",
    "score",
    "write_outputs",
]
