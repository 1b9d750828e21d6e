"""Pretraining from Python through configs.PretrainingConfig, and its checks at start-up.

The first test's program runs in a fresh Python, as a notebook or a user's script would:
it writes records with the data builder's Python API, pretrains a tiny model
for a few steps with evaluation, then asks for more steps in the same
output_dir, which resumes from the saved step. It ends by printing what
the runs returned and which of the scripts' flags exist (none may). The
others run pretrain.run() in this process on settings it refuses before any
model is built.
"""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import pytest
from absl import flags

from bert_tf import configs, pretrain
from bert_tf.cli import script_flags
from bert_tf.model.config import BertConfig
from bert_tf.training import run_dir
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


def _config(tmp_path, vocab_size, vocab_file=None, **masking):
    """A PretrainingConfig on the original's records, with a config of vocab_size."""
    bert_config = str(tmp_path / "model" / "bert_config.json")
    os.makedirs(os.path.dirname(bert_config), exist_ok=True)
    BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=32).to_json_file(bert_config)
    return configs.PretrainingConfig(
        run=configs.RunSettings(output_dir=str(tmp_path / "output"), do_train=True),
        data=configs.PretrainingData(
            input_file=os.path.join(FIXTURES, "pretraining_original.tfrecord"),
            max_predictions_per_seq=5),
        model=configs.ModelSettings(bert_config_file=bert_config, max_seq_length=32),
        masking=configs.DynamicMasking(vocab_file=vocab_file, **masking),
        num_train_steps=2, num_warmup_steps=0,
        runtime=configs.RuntimeSettings(mixed_precision="float32", jit_compile=False))


def test_a_masked_lm_prob_without_dynamic_masking_is_refused_not_ignored():
    with pytest.raises(pretrain.PretrainingError,
                       match="--masked_lm_prob=0.5 applies only with --dynamic_masking"):
        pretrain.check_masking(False, None, 0.5)
    # The default share changes nothing, given or not.
    pretrain.check_masking(False, None, configs.DynamicMasking.masked_lm_prob)


@pytest.mark.parametrize("where", ["flag", "beside the config"])
def test_a_vocab_of_another_size_is_refused_before_the_model_is_built(tmp_path, where):
    # learn_vocab.py may write fewer tokens than asked for (992 of 1000).
    vocab = os.path.join(FIXTURES, "pretraining_vocab.txt")
    if where == "flag":
        config = _config(tmp_path, 400, vocab_file=vocab)
    else:
        config = _config(tmp_path, 400)
        shutil.copy(vocab, tmp_path / "model" / "vocab.txt")
        vocab = str(tmp_path / "model" / "vocab.txt")
    with pytest.raises(pretrain.PretrainingError,
                       match=f"{vocab}: the vocab file has 393 tokens but the model's "
                             "vocab_size is 400; set vocab_size to 393 in the model's "
                             "bert_config.json"):
        pretrain.run(config)
    assert not os.path.exists(config.run.output_dir)


def test_dynamic_masking_with_a_vocab_larger_than_the_model_is_refused_at_start(tmp_path):
    config = _config(tmp_path, 100, vocab_file=os.path.join(FIXTURES, "pretraining_vocab.txt"),
                     dynamic_masking=True)
    with pytest.raises(pretrain.PretrainingError, match="has 393 tokens but the model's "
                                                        "vocab_size is 100"):
        pretrain.run(config)


def test_records_with_ids_past_the_model_are_refused_at_start(tmp_path):
    with pytest.raises(ValueError, match="--input_file: .* holds token id .* but the model's "
                                         "vocab_size is 100"):
        pretrain.run(_config(tmp_path, 100))
    assert not os.path.exists(tmp_path / "output" / "checkpoint")


def test_resuming_with_another_model_shape_names_the_keys_and_the_flag(tmp_path):
    config = _config(tmp_path, 393)
    config = dataclasses.replace(
        config, num_train_steps=1,
        batches=configs.BatchSizes(train_batch_size=4),
        cadence=configs.CadenceSettings(iterations_per_loop=1, save_checkpoints_steps=1))
    pretrain.run(config)
    wider = str(tmp_path / "wider_config.json")
    BertConfig(vocab_size=393, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=32).to_json_file(wider)
    with pytest.raises(run_dir.RunDirError) as error:
        pretrain.run(dataclasses.replace(
            config, num_train_steps=2,
            model=dataclasses.replace(config.model, bert_config_file=wider)))
    message = str(error.value)
    assert message.startswith(f"--bert_config_file={wider}: {config.run.output_dir} holds a "
                              "run with other model settings (bert_config.hidden_size: 32 "
                              "there, 64 now; ")
    # The first differences spelled out, the rest counted: no config printed whole.
    assert message.count(" there, ") == 4
    assert "more): give another --output_dir" in message
