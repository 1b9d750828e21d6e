"""Reading a dataset's files imports no training code: bert_tf/data/ stands on its own."""

import subprocess
import sys

from tests import helpers

DATASETS = ("glue", "squad", "conll", "swag", "csv", "pretraining")
# What a dataset must not pull in: the training loop and its runs, the model and its
# checkpoints, the tasks, the fine-tuning and pretraining jobs, the exports.
TRAINING_CODE = ("bert_tf.training", "bert_tf.model", "bert_tf.checkpoints", "bert_tf.tasks",
                 "bert_tf.finetune", "bert_tf.pretrain", "bert_tf.serving")

CHECK = """
import importlib, sys
for dataset in {datasets!r}:
    importlib.import_module("bert_tf.data." + dataset)
    loaded = sorted(m for m in sys.modules if m.startswith({training_code!r}))
    assert not loaded, f"bert_tf.data.{{dataset}} imports {{loaded}}"
"""


def test_the_datasets_import_no_training_code():
    root = helpers.ROOT
    check = CHECK.format(datasets=DATASETS, training_code=TRAINING_CODE)
    result = subprocess.run([sys.executable, "-c", check], cwd=root, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
