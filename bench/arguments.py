"""The argument types every bench script shares (argparse, the standard library).

Every script in bench/ parses its command line with argparse: the peers run
in a venv with only torch and transformers, so the convention is the one
both venvs have. The flag spellings are those of bert_tf's own scripts
(absl): lists are comma-separated (--seeds=1,2,3) and a boolean flag is
given as --name, --noname or --name=true|false.
"""

import argparse

# --hf_python's default: the venv with torch and transformers that the peers
# run in (bench/README.md).
HF_PYTHON = "/tmp/hfvenv/bin/python"

_TRUE = ("true", "t", "1", "yes")
_FALSE = ("false", "f", "0", "no")


def comma_list(text):
    """--name=a,b,c as ["a", "b", "c"]; an empty value is an empty list."""
    return [item for item in text.split(",") if item]


def _boolean(text):
    """A boolean flag's value: true/false, t/f, 1/0 or yes/no, in any case."""
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean: use true or false")


def add_boolean(parser, name, default, help):
    """Adds a boolean flag that reads as bert_tf's scripts' do.

    --name sets it, --noname clears it, --name=true|false sets either.

    Args:
      parser: The argparse.ArgumentParser.
      name: The flag's name, without dashes.
      default: Its value when not given (True, False or None).
      help: The help text.
    """
    parser.add_argument(f"--{name}", dest=name, nargs="?", const=True, default=default,
                        type=_boolean, help=f"{help} (--no{name} to turn it off)")
    parser.add_argument(f"--no{name}", dest=name, action="store_false",
                        help=argparse.SUPPRESS)
