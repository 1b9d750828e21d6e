"""A config field that is also a script's flag: its help, bounds and choices, declared once.

The configs (bert_tf/configs/: a job's parts; a dataset's settings, such as
squad.SquadSettings) are frozen dataclasses. Each of their fields that a
user sets is a setting(): the field's default is the flag's, and its metadata
holds what the flag needs besides (its help, bounds, choices, and how a
flag's value becomes the field's). A field whose type is itself a config (a
part: the optimizer, the cadence, the TPU) holds more settings. The
scripts' flags are generated from these (bert_tf/cli/config_flags.py), as
Hugging Face's HfArgumentParser generates its scripts' arguments, so that a
setting's name, default and meaning are written in one place whether a run is
started from the command line, the notebook or Python. Nothing here imports
TensorFlow or absl, so that a dataset's settings can be read without them.
"""

import dataclasses
import types
import typing
from collections.abc import Callable

# The metadata key of a setting()'s Setting.
_METADATA_KEY = "bert_tf.setting"


@dataclasses.dataclass(frozen=True)
class Setting:
    """What a config field's flag needs besides its name, type and default.

    Attributes:
      help: The flag's help text.
      lower_bound, upper_bound: A number flag's bounds, checked when parsed.
      choices: The values a string flag takes (an enum flag), or None.
      case_sensitive: Whether the choices are matched case-sensitively.
      flag_default: The default the flag shows, where the field's is None
        because the library chooses when the user says nothing (the loop
        cadence by device, the casing by checkpoint): the field is then None
        unless the flag is given on the command line. None: the field's own
        default is the flag's.
      parse: Turns the flag's value into the field's (--jit_compile=auto ->
        None), or None when they are the same.
      check: A predicate of the flag's value, checked when the flags are
        parsed, with check_message when it fails; None checks nothing.
      check_message: The one line a failed check prints.
    """

    help: str
    lower_bound: float | None = None
    upper_bound: float | None = None
    choices: tuple[str, ...] | None = None
    case_sensitive: bool = True
    flag_default: object = None
    parse: Callable | None = None
    check: Callable | None = None
    check_message: str | None = None


def setting(default, help, **flag):
    """A config field that a script's flag of the same name sets.

    Args:
      default: The field's default, and the flag's (see Setting.flag_default
        for a field whose None means "the library chooses").
      help: The flag's help text.
      **flag: Setting's other attributes.

    Returns:
      A dataclasses.field with the Setting in its metadata.
    """
    return dataclasses.field(default=default, metadata={_METADATA_KEY: Setting(help, **flag)})


def required_setting(help, **flag):
    """A config field without a default, that a script's flag sets.

    Args:
      help: The flag's help text.
      **flag: Setting's other attributes.

    Returns:
      A dataclasses.field without a default, with the Setting in its metadata.
    """
    return dataclasses.field(metadata={_METADATA_KEY: Setting(help, **flag)})


@dataclasses.dataclass(frozen=True)
class Field:
    """One setting of a config, found by settings_of().

    Attributes:
      name: The field's name, which is its flag's.
      value_type: The flag's type: bool, int, float or str (None removed).
      default: The field's default (dataclasses.MISSING when it has none).
      setting: Its Setting.
      path: The names of the parts that lead to it from the config,
        e.g. ("optimizer",) for FinetuneConfig.optimizer.learning_rate.
    """

    name: str
    value_type: type
    default: object
    setting: Setting
    path: tuple[str, ...] = ()


def is_config(value_type):
    """Whether a type is a config (a dataclass whose fields may hold settings)."""
    return isinstance(value_type, type) and dataclasses.is_dataclass(value_type)


def _value_type(annotation):
    """The type a field holds, None removed: `int | None` -> int."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (value_type,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return value_type
    return annotation


def settings_of(config_type, leave_out=(), path=()):
    """Every setting of a config and of its parts, in field order.

    Args:
      config_type: A config class.
      leave_out: Part classes whose settings are left out (a script that has
        no such flags: run_squad.py has no padding flags).
      path: The parts that lead to config_type (for the recursion).

    Yields:
      Field objects. A field that is neither a setting() nor a part is the
      caller's to give (SquadSettings.max_seq_length, which the model's
      settings hold), and has no flag.
    """
    for field in dataclasses.fields(config_type):
        value_type = _value_type(field.type)
        if is_config(value_type):
            if value_type not in leave_out:
                yield from settings_of(value_type, leave_out, (*path, field.name))
        elif _METADATA_KEY in field.metadata:
            yield Field(field.name, value_type, field.default, field.metadata[_METADATA_KEY],
                        path)


def build(config_type, values, leave_out=(), **given):
    """A config from {setting name: value}, its parts built alike.

    Args:
      config_type: A config class.
      values: A value for every setting of config_type that is not in a
        part left out (and not defaulted).
      leave_out: Part classes built with their defaults.
      **given: Values of config_type's own fields that are not settings.

    Returns:
      A config_type.
    """
    kwargs = dict(given)
    for field in dataclasses.fields(config_type):
        value_type = _value_type(field.type)
        if is_config(value_type):
            if value_type not in leave_out:
                kwargs[field.name] = build(value_type, values, leave_out)
        elif field.name in values:
            kwargs[field.name] = values[field.name]
    return config_type(**kwargs)
