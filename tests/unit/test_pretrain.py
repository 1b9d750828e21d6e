"""Pretraining from Python through configs.PretrainingConfig, with no absl flag defined.

The program runs in a fresh Python, as a notebook or a user's script would:
it writes records with the data builder's Python API, pretrains a tiny model
for a few steps with evaluation, then asks for more steps in the same
output_dir, which resumes from the saved step. It ends by printing what
the runs returned and which of the scripts' flags exist (none may).
"""

import json
import os
import subprocess
import sys

import pytest
from absl import flags

from bert_tf import configs
from bert_tf.cli import script_flags
from tests import helpers

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

PROGRAM = """
import dataclasses, json, math, os

from absl import flags
import tensorflow as tf

from bert_tf import configs, pretrain, pretraining_data
from bert_tf.model.config import BertConfig

folder = {folder!r}
records = os.path.join(folder, "records.tfrecord")
pretraining_data.create_pretraining_data(
    {corpus!r}, records, pretraining_data.PretrainingDataConfig(
        vocab_file={vocab!r}, max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2))
bert_config = os.path.join(folder, "bert_config.json")
BertConfig(vocab_size={vocab_size}, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
           intermediate_size=64, max_position_embeddings=32).to_json_file(bert_config)
config = configs.PretrainingConfig(
    run=configs.RunSettings(output_dir=os.path.join(folder, "output"), do_train=True,
                            do_eval=True),
    data=configs.PretrainingData(input_file=records, max_predictions_per_seq=5,
                                 max_eval_steps=2),
    model=configs.ModelSettings(bert_config_file=bert_config, max_seq_length=32),
    batches=configs.BatchSizes(train_batch_size=8, eval_batch_size=8),
    num_train_steps=4, num_warmup_steps=1,
    optimizer=configs.OptimizerSettings(learning_rate=1e-3),
    cadence=configs.CadenceSettings(iterations_per_loop=2, save_checkpoints_steps=2),
    runtime=configs.RuntimeSettings(mixed_precision="float32", jit_compile=False, seed=1))
first = pretrain.run(config)
checkpoint = tf.train.latest_checkpoint(config.run.output_dir)
longer = pretrain.run(dataclasses.replace(config, num_train_steps=6))
script_flags = {{"input_file", "output_dir", "num_train_steps", "max_predictions_per_seq",
                "learning_rate", "tpu", "jit_compile", "verbose"}}
print(json.dumps({{
    "first_steps": [h["step"] for h in first.history],
    "first_losses": [h["loss"] for h in first.history],
    "first_eval": first.eval_results,
    "checkpoint": checkpoint,
    "longer_steps": [h["step"] for h in longer.history],
    "longer_global_step": longer.trainer.global_step,
    "flags": sorted(script_flags & set(flags.FLAGS)),
}}))
"""


@pytest.mark.slow
def test_pretraining_runs_and_resumes_from_python_with_no_flag_defined(tmp_path):
    vocab = os.path.join(FIXTURES, "pretraining_vocab.txt")
    with open(vocab, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    program = PROGRAM.format(folder=str(tmp_path), vocab=vocab, vocab_size=vocab_size,
                             corpus=os.path.join(FIXTURES, "pretraining_corpus.txt"))
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["flags"] == []
    assert outcome["first_steps"] == [2, 4]
    assert all(loss == loss and 0 < loss < 100 for loss in outcome["first_losses"])
    assert outcome["checkpoint"] and outcome["checkpoint"].endswith("-4")
    evaluated = outcome["first_eval"]
    assert evaluated["global_step"] == 4
    assert 0.0 <= evaluated["masked_lm_accuracy"] <= 1.0
    assert 0 < evaluated["loss"] < 100
    with open(tmp_path / "output" / "eval_results.txt", encoding="utf-8") as f:
        written = dict(line.strip().split(" = ") for line in f)
    # The second run's results replaced the first's: it evaluated at step 6.
    assert int(written["global_step"]) == 6
    # The longer run resumed at step 4: it trained steps 5 and 6 only.
    assert outcome["longer_steps"] == [6]
    assert outcome["longer_global_step"] == 6


def test_every_pretraining_config_default_is_its_flags_default():
    """One default per setting, whichever way a run is started."""
    values = flags.FlagValues()
    defined = script_flags.pretraining_flags(values)
    values(["prog", "--input_file=/tmp/records", "--output_dir=/tmp/run"])
    config = defined.config()
    # Unset, the cadence is None in the config: the library picks by device.
    chosen_by_library = {"iterations_per_loop", "save_checkpoints_steps", "log_every_secs",
                         "save_checkpoints_secs"}
    assert config == configs.PretrainingConfig(
        run=configs.RunSettings(output_dir="/tmp/run"),
        data=configs.PretrainingData(input_file="/tmp/records"))
    chosen = {"max_predictions_per_seq": config.data.max_predictions_per_seq,
              "masked_lm_prob": config.masking.masked_lm_prob,
              "num_train_steps": config.num_train_steps,
              "max_seq_length": config.model.max_seq_length,
              "learning_rate": config.optimizer.learning_rate,
              "train_batch_size": config.batches.train_batch_size}
    for name, value in chosen.items():
        assert value == values[name].default, name
    assert all(getattr(config.cadence, name) is None for name in chosen_by_library)
    # The data builder's defaults are the trainer's, for the settings they share.
    assert (configs.PretrainingData.max_predictions_per_seq,
            configs.DynamicMasking.masked_lm_prob) == (20, 0.15)
