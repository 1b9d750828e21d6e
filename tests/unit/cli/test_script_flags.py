"""The scripts' flags, generated from the typed configs, and the configs they become
(bert_tf/cli/script_flags.py, bert_tf/cli/config_flags.py)."""

import dataclasses
import json

import pytest
import tensorflow as tf
from absl import app, flags

from bert_tf import configs, finetune, settings
from bert_tf.cli import config_flags, labelled_data_flags, script_flags
from bert_tf.data import squad
from bert_tf.runtime import distribution


def _finetune_flags(*argv, padding=True):
    """A fine-tuning script's shared flags, parsed from argv; their ConfigFlags."""
    values = flags.FlagValues()
    defined = script_flags.finetuning_flags(padding, flag_values=values)
    values(["prog", *argv])
    return defined


def test_a_fine_tuning_command_line_becomes_its_config():
    config = _finetune_flags(
        "--output_dir=/tmp/run", "--init_checkpoint=/models/bert", "--do_train", "--do_eval",
        "--max_seq_length=256", "--train_batch_size=12", "--learning_rate=3e-5",
        "--num_train_epochs=2.5", "--decay_after_warmup", "--noadam_bias_correction",
        "--jit_compile=false", "--seed=7", "--dynamic_padding", "--tpu_zone=us-central1-b",
        "--export_dir=/tmp/export", "--export_shapes=static").config()
    assert config == configs.FinetuneConfig(
        run=configs.RunSettings(output_dir="/tmp/run", do_train=True, do_eval=True),
        model=configs.ModelSettings(init_checkpoint="/models/bert", max_seq_length=256),
        batches=configs.BatchSizes(train_batch_size=12),
        optimizer=configs.OptimizerSettings(learning_rate=3e-5, decay_after_warmup=True,
                                          adam_bias_correction=False),
        num_train_epochs=2.5,
        runtime=configs.RuntimeSettings(jit_compile=False, seed=7,
                                      tpu=configs.TpuConfig(tpu_zone="us-central1-b")),
        padding=configs.PaddingSettings(dynamic_padding=True),
        export=configs.ExportSettings(export_dir="/tmp/export", export_shapes="static"))


def test_flags_left_unset_leave_the_choice_to_the_library():
    """The cadence is the device's and the casing the checkpoint's, unless given."""
    unset = _finetune_flags("--output_dir=/tmp/run").config()
    assert (unset.vocab.do_lower_case, unset.cadence.iterations_per_loop,
            unset.cadence.save_checkpoints_steps, unset.cadence.log_every_secs,
            unset.cadence.save_checkpoints_secs) == (None,) * 5
    given = _finetune_flags(
        "--output_dir=/tmp/run", "--nodo_lower_case", "--iterations_per_loop=1000",
        "--save_checkpoints_secs=60").config()
    assert (given.vocab.do_lower_case, given.cadence.iterations_per_loop,
            given.cadence.save_checkpoints_secs) == (False, 1000, 60.0)
    training_config = given.training_config(10, 1, tf.distribute.get_strategy())
    # --iterations_per_loop given: the original's fixed loops, no time-sized ones.
    assert (training_config.cadence.iterations_per_loop,
            training_config.cadence.log_every_secs) == (1000, None)


def test_every_config_default_is_its_flags_default():
    """One default per setting: the flag's, whichever way a run is started."""
    defined = _finetune_flags("--output_dir=/tmp/run")
    values = defined.flag_values
    # Unset, these are None in the config: the library picks (see the test above).
    chosen_by_library = {"do_lower_case", "iterations_per_loop", "save_checkpoints_steps",
                         "log_every_secs", "save_checkpoints_secs"}
    for field in settings.settings_of(configs.FinetuneConfig):
        if field.name in chosen_by_library | {"output_dir", "jit_compile"}:
            continue
        assert field.default == values[field.name].default, field.name
    assert configs.RuntimeSettings.jit_compile is None  # --jit_compile=auto
    assert values.jit_compile == "auto"
    tpu_defaults = configs.TpuConfig()
    for field in dataclasses.fields(configs.TpuConfig):
        assert getattr(tpu_defaults, field.name) == values[field.name].default, field.name
    # The cadence the library picks off a TPU is what the flags' help shows.
    cadence = configs.CadenceSettings().for_strategy(tf.distribute.get_strategy())
    for name in chosen_by_library - {"do_lower_case"}:
        assert getattr(cadence, name) == values[name].default, name


def test_a_script_without_the_padding_flags_trains_without_padding():
    defined = _finetune_flags("--output_dir=/tmp/run", padding=False)
    config = defined.config()
    assert (config.padding.dynamic_padding, config.padding.group_by_length) == (False, False)
    assert "dynamic_padding" not in defined.flag_values


def test_group_by_length_without_dynamic_padding_is_refused():
    config = _finetune_flags("--output_dir=/tmp/run", "--group_by_length").config()
    with pytest.raises(finetune.FinetuneError, match="only saves work with --dynamic_padding"):
        finetune.check_config(config)


def test_run_pretraining_flags_become_its_training_config():
    values = flags.FlagValues()
    defined = script_flags.pretraining_flags(values)
    values(["prog", "--input_file=/tmp/records", "--output_dir=/tmp/pretrain",
            "--learning_rate=1e-4", "--optimizer=lamb", "--gradient_accumulation_steps=2",
            "--save_checkpoints_steps=500", "--num_train_steps=10000", "--num_warmup_steps=100"])
    config = defined.config().training_config(tf.distribute.get_strategy())
    assert config == configs.TrainingConfig(
        output_dir="/tmp/pretrain", num_train_steps=10000, num_warmup_steps=100,
        optimizer=configs.OptimizerSettings(learning_rate=1e-4, optimizer="lamb",
                                          gradient_accumulation_steps=2),
        cadence=configs.CadenceSettings(
            iterations_per_loop=1000, save_checkpoints_steps=500, log_every_secs=30.0,
            save_checkpoints_secs=None))


def test_the_original_tpu_flags_are_defined_and_read():
    values = flags.FlagValues()
    defined = config_flags.define(configs.TpuConfig, flag_values=values)
    values(["prog", "--num_tpu_cores=8", "--tpu_zone=us-central1-b"])
    assert {"tpu", "use_tpu", "tpu_name", "tpu_zone", "gcp_project", "master",
            "num_tpu_cores"} <= set(values)
    config = defined.config()
    assert config == configs.TpuConfig(tpu_zone="us-central1-b")
    strategy = distribution.resolve_strategy(**dataclasses.asdict(config))
    assert strategy.num_replicas_in_sync == 1


def test_a_script_default_other_than_the_configs_is_the_flags_and_the_configs():
    """run_squad.py's max_seq_length: 384 in its --help and in the config it builds."""
    values = flags.FlagValues()
    defined = script_flags.finetuning_flags(padding=False, defaults={"max_seq_length": 384},
                                            flag_values=values)
    values(["prog", "--output_dir=/tmp/run"])
    assert values["max_seq_length"].default == 384
    assert defined.config().model.max_seq_length == 384


def test_a_default_for_a_setting_the_config_lacks_is_refused():
    with pytest.raises(ValueError, match="no such flag in FinetuneConfig: max_seq_len"):
        script_flags.finetuning_flags(defaults={"max_seq_len": 384},
                                      flag_values=flags.FlagValues())


def test_every_setting_is_declared_once_across_a_jobs_parts():
    """A flag name names one setting: no part repeats another's."""
    for config_type in (configs.FinetuneConfig, configs.PretrainingConfig):
        names = [field.name for field in settings.settings_of(config_type)]
        assert len(names) == len(set(names)), config_type.__name__


def test_flag_bounds_and_checks_come_from_the_settings():
    values = flags.FlagValues()
    script_flags.finetuning_flags(flag_values=values)
    with pytest.raises(flags.IllegalFlagValueError, match="--learning_rate must not be negative"):
        values(["prog", "--output_dir=/tmp/run", "--learning_rate=-1"])
    values = flags.FlagValues()
    script_flags.finetuning_flags(flag_values=values)
    with pytest.raises(flags.IllegalFlagValueError, match="train_batch_size"):
        values(["prog", "--output_dir=/tmp/run", "--train_batch_size=0"])


@pytest.mark.parametrize("threshold", ["0", "1.0", "-0.1", "1.5"])
def test_a_multi_label_threshold_outside_0_and_1_is_refused(threshold):
    values = flags.FlagValues()
    labelled_data_flags.define_flags(values)
    with pytest.raises(flags.IllegalFlagValueError, match="--threshold must be strictly "
                       "between 0 and 1: at 0 every label is predicted for every row"):
        values(["prog", f"--threshold={threshold}"])
    values = flags.FlagValues()
    defined = labelled_data_flags.define_flags(values)
    values(["prog", "--threshold=0.3", "--problem_type=multi_label"])
    assert labelled_data_flags.config(defined).threshold == 0.3


def _finished_run(folder):
    """A run folder as a SQuAD fine-tuning run leaves it: model files and run_settings.json."""
    for name in ("bert_config.json", "vocab.txt"):
        (folder / name).write_text("{}\n")
    (folder / "run_settings.json").write_text(json.dumps({
        "task": {"task": "QuestionAnsweringTask", "do_lower_case": False,
                 "version_2_with_negative": True},
        "training data": {"train_data": {}, "max_seq_length": 48, "doc_stride": 16,
                          "doc_stride_means": "step", "max_query_length": 8}}))
    return str(folder)


def _squad_flags(*argv):
    """run_squad.py's shared and SQuAD flags, parsed from argv: (FinetuningFlags, SQuAD's)."""
    values = flags.FlagValues()
    defined = script_flags.finetuning_flags(padding=False, flag_values=values,
                                            defaults={"max_seq_length": 384})
    squad_flags = config_flags.define(squad.SquadSettings, flag_values=values)
    values(["prog", *argv])
    return defined, squad_flags


def test_a_command_that_does_not_train_takes_the_finished_runs_settings(tmp_path):
    folder = _finished_run(tmp_path)
    defined, squad_flags = _squad_flags(f"--output_dir={folder}", "--export_dir=/tmp/export")
    config = defined.config()
    assert (config.model.max_seq_length, config.model.bert_config_file, config.vocab.vocab_file,
            config.vocab.do_lower_case) == (48, f"{folder}/bert_config.json",
                                             f"{folder}/vocab.txt", False)
    squad_settings = squad_flags.config(max_seq_length=config.model.max_seq_length)
    assert (squad_settings.doc_stride, squad_settings.max_query_length,
            squad_settings.version_2_with_negative) == (16, 8, True)
    # Training takes nothing: the run checks its own settings against the folder's.
    assert _squad_flags(f"--output_dir={folder}", "--do_train")[0].config().model == (
        configs.ModelSettings(max_seq_length=384))


@pytest.mark.parametrize("flag", ["--max_seq_length=384", "--doc_stride=128"])
def test_an_export_refuses_a_length_that_contradicts_the_finished_run(tmp_path, flag):
    folder = _finished_run(tmp_path)
    defined, _ = _squad_flags(f"--output_dir={folder}", "--export_dir=/tmp/export", flag)
    name, value = flag[2:].split("=")
    recorded = {"max_seq_length": 48, "doc_stride": 16}[name]
    with pytest.raises(app.UsageError, match=(
            f"^--{name}={value}: {folder}'s model was trained with --{name}={recorded}, and an "
            "export keeps it: drop the flag$")):
        defined.config()
    # Evaluation and prediction may read at another length.
    defined, _ = _squad_flags(f"--output_dir={folder}", "--do_predict", flag)
    assert defined.config().model.max_seq_length == (384 if name == "max_seq_length" else 48)
