"""Pretraining's data: the record files that create_pretraining_data.py wrote.

The modules:
  records.py: PretrainingData, the TrainingData of a pretraining run: reads
    and checks the files of each split before any model is built, gives
    their input pipelines, and says what the training records are;
    masking_config, the dynamic masking of a vocab.

Everything public is re-exported here: `from bert_tf.data import pretraining`.
"""

from bert_tf.data.pretraining.records import (
    PretrainingData,
    PretrainingRecordsError,
    masking_config,
)

__all__ = ["PretrainingData", "PretrainingRecordsError", "masking_config"]
