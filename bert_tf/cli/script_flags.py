"""The training scripts' flags: each job's config as flags (config_flags), with the checks
that span several flags.

run_pretraining.py defines pretraining_flags(), each fine-tuning script
finetuning_flags(); their config() is the job's config. Every flag keeps the
original repository's name and default where it had one. Nothing else in
bert_tf reads a flag, so the notebook and Python callers build the same
configs directly.
"""

from absl import flags

from bert_tf import configs, pretrain
from bert_tf.cli import config_flags


def pretraining_flags(flag_values=flags.FLAGS):
    """Defines run_pretraining.py's flags: every setting of a PretrainingConfig.

    The settings that must agree with each other are checked when the flags
    are parsed, before any work, by the functions that check a Python
    caller's config (pretrain.check_lengths, pretrain.check_masking).

    Args:
      flag_values: The absl FlagValues to define them in.

    Returns:
      A config_flags.ConfigFlags; its config() is the run's PretrainingConfig.
    """
    defined = config_flags.define(configs.PretrainingConfig, flag_values=flag_values)
    flags.register_multi_flags_validator(
        ["max_predictions_per_seq", "max_seq_length"],
        _validator(lambda f: pretrain.check_lengths(f["max_seq_length"],
                                                    f["max_predictions_per_seq"])),
        flag_values=flag_values)
    flags.register_multi_flags_validator(
        ["dynamic_masking", "vocab_file", "masked_lm_prob"],
        _validator(lambda f: pretrain.check_masking(f["dynamic_masking"], f["vocab_file"],
                                                    f["masked_lm_prob"])),
        flag_values=flag_values)
    return defined


def finetuning_flags(padding=True, defaults=None, flag_values=flags.FLAGS):
    """Defines a fine-tuning script's shared flags: every setting of a FinetuneConfig.

    The script defines its dataset's flags beside them, and calls
    flags.adopt_module_key_flags(config_flags) to show these in its --help.

    Args:
      padding: Whether the script's reader trims batches (--dynamic_padding
        and --group_by_length); run_squad.py's does not.
      defaults: {setting: default} where the script's default differs from
        the config's (run_squad.py's max_seq_length).
      flag_values: The absl FlagValues to define them in.

    Returns:
      A config_flags.ConfigFlags; its config() is the run's FinetuneConfig.
    """
    leave_out = () if padding else (configs.PaddingSettings,)
    return config_flags.define(configs.FinetuneConfig, leave_out=leave_out, defaults=defaults,
                               flag_values=flag_values)


def _validator(check):
    """An absl flags validator of a pretrain check that raises PretrainingError."""
    def validate(values):
        try:
            check(values)
        except pretrain.PretrainingError as e:
            raise flags.ValidationError(str(e)) from e
        return True
    return validate
