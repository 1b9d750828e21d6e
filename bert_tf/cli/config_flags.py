"""Flags generated from the configs, and the configs built back from the parsed flags.

A script asks for the configs it runs (bert_tf/configs/): define() gives
every setting of a config, and of its parts, a flag of the same name, type,
default, help, bounds and choices, and returns a ConfigFlags whose config()
builds the config from the parsed flags, once, in main(). So a setting is
declared once, in the config, whether a run starts from the command line,
the notebook or Python; a script's flags are the parts its config holds plus
its own. Where a setting's None means "the library chooses" (the cadence by
device, the casing by checkpoint), the flag shows the default the library
would pick, and the config gets None unless the flag is given.
"""

import dataclasses

from absl import flags

from bert_tf import settings


@dataclasses.dataclass(frozen=True)
class ConfigFlags:
    """The flags define() made for a config, and the way back to the config.

    Attributes:
      config_type: The config class.
      leave_out: Its parts that have no flags here (built with defaults).
      only: The settings that have flags, when not all of them do; None: all.
      flag_values: The absl FlagValues the flags are in.
    """

    config_type: type
    leave_out: tuple = ()
    only: tuple | None = None
    flag_values: flags.FlagValues = flags.FLAGS

    def fields(self):
        """The config's settings that are flags here (settings.Field objects)."""
        return [field for field in settings.settings_of(self.config_type, self.leave_out)
                if self.only is None or field.name in self.only]

    def values(self):
        """{setting name: value} of the parsed flags, as the config holds them.

        Returns:
          A value for each setting that has a flag here: the flag's, parsed
          (--jit_compile=auto -> None); None for a setting the library
          chooses, unless the flag was given.
        """
        values = {}
        for field in self.fields():
            flag = self.flag_values[field.name]
            if field.setting.flag_default is not None and not flag.present:
                values[field.name] = field.default
            elif field.setting.parse is not None:
                values[field.name] = field.setting.parse(flag.value)
            else:
                values[field.name] = flag.value
        return values

    def config(self, **given):
        """The config of the parsed flags; a setting without a flag here keeps its default.

        Args:
          **given: Values of the config's fields that are not settings (which
            have no flag), e.g. SquadSettings' max_seq_length, the model's.

        Returns:
          A config_type.
        """
        return settings.build(self.config_type, self.values(), self.leave_out, **given)


def define(config_type, leave_out=(), only=None, defaults=None, flag_values=flags.FLAGS):
    """Defines a flag for every setting of a config and of its parts.

    Args:
      config_type: A config class (bert_tf/configs/).
      leave_out: Part classes whose settings get no flag (run_squad.py has no
        padding flags).
      only: The names of the settings to define, when not all; None: all.
      defaults: {setting name: default} where this script's default is not
        the config's (run_squad.py's max_seq_length is 384).
      flag_values: The absl FlagValues to define them in.

    Returns:
      A ConfigFlags, whose config() builds the config once the flags are parsed.

    Raises:
      ValueError: for a default given for a setting that is not defined.
    """
    config_flags = ConfigFlags(config_type, tuple(leave_out),
                               None if only is None else tuple(only), flag_values)
    defaults = dict(defaults or {})
    for field in config_flags.fields():
        _define_flag(field, defaults.pop(field.name, _shown_default(field)), flag_values)
    if defaults:
        raise ValueError(f"no such flag in {config_type.__name__}: {', '.join(defaults)}")
    return config_flags


def _shown_default(field):
    """The default a setting's flag shows: the library's choice where the field's is None."""
    if field.setting.flag_default is not None:
        return field.setting.flag_default
    return None if field.default is dataclasses.MISSING else field.default


def _define_flag(field, default, flag_values):
    """Defines one setting's flag, by its type.

    Args:
      field: A settings.Field.
      default: The flag's default.
      flag_values: The absl FlagValues to define it in.
    """
    setting = field.setting
    common = {"flag_values": flag_values}
    if setting.choices is not None:
        flags.DEFINE_enum(field.name, default, list(setting.choices), setting.help,
                          case_sensitive=setting.case_sensitive, **common)
    elif field.value_type is bool:
        flags.DEFINE_bool(field.name, default, setting.help, **common)
    elif field.value_type is int:
        flags.DEFINE_integer(field.name, default, setting.help, lower_bound=setting.lower_bound,
                             upper_bound=setting.upper_bound, **common)
    elif field.value_type is float:
        flags.DEFINE_float(field.name, default, setting.help, lower_bound=setting.lower_bound,
                           upper_bound=setting.upper_bound, **common)
    elif field.value_type is str:
        flags.DEFINE_string(field.name, default, setting.help, **common)
    elif field.value_type is tuple:
        flags.DEFINE_list(field.name, default, setting.help, **common)
    else:
        raise TypeError(f"setting {field.name}: no flag type for {field.value_type}")
    if setting.check is not None:
        flags.register_validator(field.name, setting.check, setting.check_message,
                                 flag_values=flag_values)
