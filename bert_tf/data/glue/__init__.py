"""GLUE and XNLI for fine-tuning: examples from TSV or TFDS, metrics, submission files.

Each task has a processor that turns the TSV files of the standard GLUE
download (`download_glue_data.py`) into `InputExample`s, with the original
repository's column choices and guid formats, and checks them: a bad row is
an error that gives `path:line`. `examples_from_tfds` reads the same tasks
from TensorFlow Datasets. `compute_metrics` scores predictions with the
metrics GLUE reports for the task, in numpy only, and `evaluation_metrics`
gives the numbers of run_classifier.py's eval_results.txt. `write_test_results`
and `write_submission` write the original's test_results.tsv and a GLUE
submission file, each only once it is complete. `GlueData` gives
finetune.run a task's splits as classification records (`convert_example`).

The modules, each importing only those above it and, from bert_tf/data/,
metrics.py (accuracy, F1, Matthews and Pearson/Spearman correlations) and
test_results.py (write_test_results):
  reading.py: TSV files -> rows with line numbers (GlueDataError);
  base.py: InputExample, and DataProcessor, which reads and checks a split;
  processors.py: every task's processor, PROCESSORS and get_processor;
  tfds.py: examples_from_tfds;
  splits.py: read_split, from the TSV files or TFDS;
  scoring.py: compute_metrics and evaluation_metrics;
  outputs.py: write_submission;
  records.py: examples -> classification records; GlueData and GlueReferences.

Everything public is re-exported here: `from bert_tf.data import glue` and
`glue.get_processor("MRPC")`.
"""

from bert_tf.data.glue.base import DataProcessor, InputExample, SplitFile
from bert_tf.data.glue.outputs import write_submission
from bert_tf.data.glue.processors import (
    PROCESSORS,
    AxProcessor,
    ColaProcessor,
    MnliProcessor,
    MrpcProcessor,
    QnliProcessor,
    QqpProcessor,
    RteProcessor,
    Sst2Processor,
    StsbProcessor,
    WnliProcessor,
    XnliProcessor,
    get_processor,
)
from bert_tf.data.glue.reading import GlueDataError, read_tsv
from bert_tf.data.glue.records import GlueData, GlueReferences, convert_example
from bert_tf.data.glue.scoring import compute_metrics, evaluation_metrics, main_metric
from bert_tf.data.glue.splits import read_split
from bert_tf.data.glue.tfds import examples_from_tfds
from bert_tf.data.metrics import (
    accuracy,
    f1_score,
    matthews_corrcoef,
    pearson_corrcoef,
    spearman_corrcoef,
)
from bert_tf.data.test_results import write_test_results

__all__ = [
    "PROCESSORS",
    "AxProcessor",
    "ColaProcessor",
    "DataProcessor",
    "GlueData",
    "GlueDataError",
    "GlueReferences",
    "InputExample",
    "MnliProcessor",
    "MrpcProcessor",
    "QnliProcessor",
    "QqpProcessor",
    "RteProcessor",
    "SplitFile",
    "Sst2Processor",
    "StsbProcessor",
    "WnliProcessor",
    "XnliProcessor",
    "accuracy",
    "compute_metrics",
    "convert_example",
    "evaluation_metrics",
    "examples_from_tfds",
    "f1_score",
    "get_processor",
    "main_metric",
    "matthews_corrcoef",
    "pearson_corrcoef",
    "read_split",
    "read_tsv",
    "spearman_corrcoef",
    "write_submission",
    "write_test_results",
]
