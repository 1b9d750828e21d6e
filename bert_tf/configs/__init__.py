"""Typed configs: the parts every training run shares, and each job's config.

A job's config is the parts it uses plus its own settings; every field a user
sets is a setting() (bert_tf/settings.py), declared once, from which the scripts'
flags are generated (bert_tf/cli/config_flags.py). Python callers and the
notebook build the same configs directly:

  config = configs.FinetuneConfig(
      run=configs.RunSettings(output_dir="/tmp/mrpc", do_train=True, do_eval=True),
      model=configs.ModelSettings(init_checkpoint=checkpoint, max_seq_length=128),
      optimizer=configs.OptimizerSettings(learning_rate=2e-5))

  parts.py   RunSettings, ModelSettings, VocabSettings, BatchSizes,
             OptimizerSettings, CadenceSettings, RuntimeSettings, TpuConfig
  jobs.py    PretrainingConfig (PretrainingData, DynamicMasking),
             FinetuneConfig (ExportSettings, PaddingSettings), and
             TrainingConfig, the Trainer's, which each job's config makes
"""

from bert_tf.configs.jobs import (
    DynamicMasking,
    ExportSettings,
    FinetuneConfig,
    PaddingSettings,
    PretrainingConfig,
    PretrainingData,
    TrainingConfig,
)
from bert_tf.configs.parts import (
    BatchSizes,
    CadenceSettings,
    ModelSettings,
    OptimizerSettings,
    RunSettings,
    RuntimeSettings,
    TpuConfig,
    VocabSettings,
)
from bert_tf.settings import setting

__all__ = ["BatchSizes", "CadenceSettings", "DynamicMasking", "ExportSettings",
           "FinetuneConfig", "ModelSettings", "OptimizerSettings", "PaddingSettings",
           "PretrainingConfig", "PretrainingData", "RunSettings", "RuntimeSettings",
           "TpuConfig", "TrainingConfig", "VocabSettings", "setting"]
