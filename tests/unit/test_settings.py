"""A config field that is also a flag (bert_tf/settings.py), and the flags made of it
(bert_tf/cli/config_flags.py)."""

import dataclasses

import pytest
from absl import flags

from bert_tf import settings
from bert_tf.cli import config_flags


@dataclasses.dataclass(frozen=True)
class Inner:
    depth: int = settings.setting(2, "How deep.", lower_bound=1)
    names: tuple | None = settings.setting(
        None, "Some names.", parse=lambda values: tuple(values) if values else None)


@dataclasses.dataclass(frozen=True)
class Outer:
    path: str = settings.required_setting("Where.")
    mode: str = settings.setting("fast", "How.", choices=("fast", "slow"))
    rate: float | None = settings.setting(None, "Chosen by the library unless given.",
                                          flag_default=0.5)
    # The caller's: no flag.
    length: int = 128
    inner: Inner = Inner()


def test_settings_of_walks_the_parts_and_skips_the_callers_fields():
    fields = list(settings.settings_of(Outer))
    assert [(field.name, field.path, field.value_type) for field in fields] == [
        ("path", (), str), ("mode", (), str), ("rate", (), float),
        ("depth", ("inner",), int), ("names", ("inner",), tuple)]
    assert [field.name for field in settings.settings_of(Outer, leave_out=(Inner,))] == [
        "path", "mode", "rate"]


def test_build_fills_the_parts_from_flat_values():
    built = settings.build(Outer, {"path": "/x", "depth": 3}, length=64)
    assert built == Outer(path="/x", length=64, inner=Inner(depth=3))


def _parse(*argv, **define):
    values = flags.FlagValues()
    defined = config_flags.define(Outer, flag_values=values, **define)
    values(["prog", *argv])
    return defined


def test_each_setting_is_a_flag_of_its_type_default_and_bounds():
    defined = _parse("--path=/x")
    values = defined.flag_values
    assert values["mode"].flag_type() == "string enum"
    assert values["depth"].flag_type() == "int" and values["depth"].default == 2
    assert "list" in values["names"].flag_type()
    # The library's choice is what the flag shows, and None in the config unless given.
    assert values["rate"].default == 0.5
    assert defined.config(length=64) == Outer(path="/x", length=64)
    with pytest.raises(flags.IllegalFlagValueError, match="depth"):
        _parse("--path=/x", "--depth=0")
    with pytest.raises(flags.IllegalFlagValueError, match="mode"):
        _parse("--path=/x", "--mode=medium")


def test_given_flags_reach_the_config_parsed():
    config = _parse("--path=/x", "--mode=slow", "--rate=0.5", "--depth=4",
                    "--names=a,b").config()
    assert config == Outer(path="/x", mode="slow", rate=0.5,
                           inner=Inner(depth=4, names=("a", "b")))


def test_only_some_settings_and_another_default():
    defined = _parse("--path=/x", only=("path", "depth"), defaults={"depth": 7})
    assert "mode" not in defined.flag_values
    assert defined.config() == Outer(path="/x", inner=Inner(depth=7))
