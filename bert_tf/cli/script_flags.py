"""The training scripts' flags: each job's config as flags (config_flags), with the checks
that span several flags.

run_pretraining.py defines pretraining_flags(), each fine-tuning script
finetuning_flags(); their config() is the job's config (a fine-tuning
script's, once the flags not given took a finished run's settings:
run_folder_flags.py). Every flag keeps the original repository's name and
default where it had one. Nothing else in
bert_tf reads a flag, so the notebook and Python callers build the same
configs directly.
"""

import dataclasses

from absl import flags

from bert_tf import configs, pretrain
from bert_tf.cli import config_flags, run_folder_flags


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
      A FinetuningFlags; its config() is the run's FinetuneConfig.
    """
    leave_out = () if padding else (configs.PaddingSettings,)
    defined = config_flags.define(configs.FinetuneConfig, leave_out=leave_out,
                                  defaults=defaults, flag_values=flag_values)
    return FinetuningFlags(defined.config_type, defined.leave_out, defined.only,
                           defined.flag_values)


@dataclasses.dataclass(frozen=True)
class FinetuningFlags(config_flags.ConfigFlags):
    """A fine-tuning script's shared flags, which take a finished run's settings first."""

    def config(self, **given):
        """The run's FinetuneConfig, once the flags not given took the settings of a
        finished run in --output_dir (run_folder_flags.take_finished_run).

        Call it before the script reads its other flags or configs: they may
        be among those taken (--max_seq_length, --doc_stride, --task_name).

        Args:
          **given: As config_flags.ConfigFlags.config takes them.

        Returns:
          A FinetuneConfig.

        Raises:
          app.UsageError: an export whose flags contradict the run's.
        """
        run_folder_flags.take_finished_run(self.flag_values)
        return super().config(**given)


def _validator(check):
    """An absl flags validator of a pretrain check that raises PretrainingError."""
    def validate(values):
        try:
            check(values)
        except pretrain.PretrainingError as e:
            raise flags.ValidationError(str(e)) from e
        return True
    return validate
