"""Fine-tuning, as every task script and the notebook do it.

run() takes a configs.FinetuneConfig, a task (tasks/) and its data (a
protocol.FinetuneData) through the phases every training job goes
through (runner.run): check, prepare, train with evaluations, choose the
model, evaluate, predict, export, with the results files and the log lines;
start() comes before it. It returns a FinetuneResult, and can report a
TrainingProgress after each chunk of training (the notebook's progress bar
and curves). A script is its flags (script_flags.finetuning_flags(), whose
config() is the FinetuneConfig), start(), the task, the data and run(); the
notebook and Python callers build the FinetuneConfig directly.

The modules, by phase, each importing only those above it:
  checks.py   what is refused before any work (FinetuneError, check_actions,
              check_config, check_lengths) and what a run counts
              (splits_to_read, train_steps);
  start.py    what comes before the first step: the model's files and the
              runtime (start, setup), the task's Trainer (create_trainer),
              a fine-tuned run's head refused for other labels
              (check_loaded_head) and its folder (init_run_folder);
  splits.py   each split's records and predictions, made once (SplitCache;
              predict, evaluate);
  job.py      the phases (FinetuneJob) and run().

Nothing here depends on which task runs: the task (tasks/) and its data
(glue/, ...) supply the rest, the data scoring the task's predictions and
writing the output files, and serving/ exporting the task. Errors in the
user's input raise FinetuneError (a ValueError) with a message that names
the flag or file.
"""

from bert_tf.finetune.checks import (
    FinetuneError,
    check_actions,
    check_config,
    check_lengths,
    splits_to_read,
    train_steps,
)
from bert_tf.finetune.job import FinetuneJob, FinetuneResult, TrainingProgress, run
from bert_tf.finetune.splits import SplitCache, evaluate, predict
from bert_tf.finetune.start import (
    check_loaded_head,
    create_trainer,
    init_run_folder,
    setup,
    start,
)

__all__ = ["FinetuneError", "FinetuneJob", "FinetuneResult", "SplitCache", "TrainingProgress",
           "check_actions", "check_config", "check_lengths", "check_loaded_head",
           "create_trainer", "evaluate", "init_run_folder", "predict", "run", "setup",
           "splits_to_read", "start", "train_steps"]
