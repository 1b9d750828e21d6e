"""The scripts' shared flags and the typed configs they become (bert_tf/cli/script_flags.py)."""

import dataclasses

import pytest
import tensorflow as tf
from absl import flags

from bert_tf import finetune
from bert_tf.cli import script_flags
from bert_tf.training import distribution, run_setup


def _finetune_flags(*argv, padding=True):
    """A fine-tuning script's shared flags, parsed from argv."""
    values = flags.FlagValues()
    script_flags.define_finetuning_script_flags(padding, values)
    values(["prog", *argv])
    return values


def test_a_fine_tuning_command_line_becomes_its_config():
    config = script_flags.finetune_config(_finetune_flags(
        "--output_dir=/tmp/run", "--init_checkpoint=/models/bert", "--do_train", "--do_eval",
        "--max_seq_length=256", "--train_batch_size=12", "--learning_rate=3e-5",
        "--num_train_epochs=2.5", "--decay_after_warmup", "--noadam_bias_correction",
        "--jit_compile=false", "--seed=7", "--dynamic_padding", "--tpu_zone=us-central1-b",
        "--export_dir=/tmp/export", "--export_shapes=static"))
    assert config == finetune.FinetuneConfig(
        output_dir="/tmp/run", init_checkpoint="/models/bert", do_train=True, do_eval=True,
        max_seq_length=256, train_batch_size=12, learning_rate=3e-5, num_train_epochs=2.5,
        decay_after_warmup=True, adam_bias_correction=False, jit_compile=False, seed=7,
        dynamic_padding=True, tpu=distribution.TpuConfig(tpu_zone="us-central1-b"),
        export_dir="/tmp/export", export_shapes="static")


def test_flags_left_unset_leave_the_choice_to_the_library():
    """The cadence is the device's and the casing the checkpoint's, unless given."""
    unset = script_flags.finetune_config(_finetune_flags("--output_dir=/tmp/run"))
    assert (unset.do_lower_case, unset.iterations_per_loop, unset.save_checkpoints_steps,
            unset.log_every_secs, unset.save_checkpoints_secs) == (None,) * 5
    given = script_flags.finetune_config(_finetune_flags(
        "--output_dir=/tmp/run", "--nodo_lower_case", "--iterations_per_loop=1000",
        "--save_checkpoints_secs=60"))
    assert (given.do_lower_case, given.iterations_per_loop, given.save_checkpoints_secs) == (
        False, 1000, 60.0)
    training_config = given.training_config(10, 1, tf.distribute.get_strategy())
    # --iterations_per_loop given: the original's fixed loops, no time-sized ones.
    assert (training_config.iterations_per_loop, training_config.log_every_secs) == (1000, None)


def test_every_config_default_is_its_flags_default():
    """One default per setting: the flag's, whichever way a run is started."""
    values = _finetune_flags("--output_dir=/tmp/run")
    # Unset, these are None in the config: the library picks (see the test above).
    chosen_by_library = {"do_lower_case", "iterations_per_loop", "save_checkpoints_steps",
                         "log_every_secs", "save_checkpoints_secs"}
    for field in dataclasses.fields(finetune.FinetuneConfig):
        if field.name in chosen_by_library | {"output_dir", "tpu", "jit_compile"}:
            continue
        assert field.default == values[field.name].default, field.name
    assert finetune.FinetuneConfig.jit_compile is None  # --jit_compile=auto
    assert values.jit_compile == "auto"
    tpu_defaults = distribution.TpuConfig()
    for field in dataclasses.fields(distribution.TpuConfig):
        assert getattr(tpu_defaults, field.name) == values[field.name].default, field.name
    # The cadence the library picks off a TPU is what the flags' help shows.
    cadence = run_setup.TrainingConfig.for_strategy(
        tf.distribute.get_strategy(), output_dir="/tmp/run", num_train_steps=1)
    for name in chosen_by_library - {"do_lower_case"}:
        assert getattr(cadence, name) == values[name].default, name


def test_a_script_without_the_padding_flags_trains_without_padding():
    config = script_flags.finetune_config(_finetune_flags("--output_dir=/tmp/run",
                                                          padding=False))
    assert (config.dynamic_padding, config.group_by_length) == (False, False)


def test_group_by_length_without_dynamic_padding_is_refused():
    config = script_flags.finetune_config(_finetune_flags("--output_dir=/tmp/run",
                                                          "--group_by_length"))
    with pytest.raises(finetune.FinetuneError, match="only saves work with --dynamic_padding"):
        finetune.check_config(config)


def test_run_pretraining_flags_become_its_training_config():
    values = flags.FlagValues()
    script_flags.define_pretraining_script_flags(values)
    values(["prog", "--input_file=/tmp/records", "--output_dir=/tmp/pretrain",
            "--learning_rate=1e-4", "--optimizer=lamb", "--gradient_accumulation_steps=2",
            "--save_checkpoints_steps=500", "--num_train_steps=10000", "--num_warmup_steps=100"])
    config = script_flags.pretraining_config(values).training_config(
        tf.distribute.get_strategy())
    assert config == run_setup.TrainingConfig(
        output_dir="/tmp/pretrain", num_train_steps=10000, num_warmup_steps=100,
        learning_rate=1e-4, optimizer="lamb", gradient_accumulation_steps=2,
        save_checkpoints_steps=500, log_every_secs=30.0, save_checkpoints_secs=None)


def test_the_original_tpu_flags_are_defined_and_read():
    values = flags.FlagValues()
    script_flags.define_tpu_flags(values)
    values(["prog", "--num_tpu_cores=8", "--tpu_zone=us-central1-b"])
    assert {"tpu", "use_tpu", "tpu_name", "tpu_zone", "gcp_project", "master",
            "num_tpu_cores"} <= set(values)
    config = script_flags.tpu_config(values)
    assert config == distribution.TpuConfig(tpu_zone="us-central1-b")
    assert config.resolve_strategy().num_replicas_in_sync == 1
