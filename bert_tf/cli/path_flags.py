"""The rules every script's path flags follow, applied by cli.run before main().

- "~" expands in every path flag, in each comma-separated part (globs
  included), when the flags are parsed: `--output_file=~/feat.jsonl` from a
  notebook or a quoted argument means the home folder, as the shell would
  have made it, not a folder named "~" in the working directory.
- Outputs never overwrite inputs: an output flag that names one of the
  run's input files (or a file a glob of one matches, or a file of an input
  folder), an output folder that is an input file (a run's folder may be its
  own --init_checkpoint: a run only adds to it), or a folder that an
  output replaces whole (--export_dir) and that holds an input or the run's
  --output_dir, is refused before any work, in one line naming both flags.
- Output paths are checked before any work: an existing folder given as an
  output file, an existing file given as an output folder, a parent that is
  a file or that cannot be written, and a folder that an output replaces
  whole but that holds files other than an earlier SavedModel's
  (output_folders.py's rule: a user's files are never deleted).

What a flag is comes from its name (ROLES): --input_file, --data_dir,
--init_checkpoint, ... are inputs; --output_file is an output file;
--output_dir an output folder that a run adds to; --export_dir a folder an
output replaces whole; --output a checkpoint prefix or a folder. A script
whose flag of a known name means something else says so with set_role()
(predict_text.py's --export_dir is the model it reads). Paths on remote
filesystems (gs://) are compared by name only.

This module imports no TensorFlow, as cli/__init__.py.
"""

import glob
import os

from absl import flags

from bert_tf import output_folders

INPUT = "input"
OUTPUT_FILE = "output file"
OUTPUT_DIR = "output folder"
REPLACED_DIR = "replaced folder"
# A file prefix or a folder, as another flag says (convert_checkpoint.py's --output).
OUTPUT_PATH = "output file or folder"

# Every path flag of the scripts, by name, and what it is by default.
ROLES = {
    "input_file": INPUT,
    "eval_input_file": INPUT,
    "data_dir": INPUT,
    "train_file": INPUT,
    "predict_file": INPUT,
    "init_checkpoint": INPUT,
    "bert_config_file": INPUT,
    "vocab_file": INPUT,
    "input": INPUT,
    "output_file": OUTPUT_FILE,
    "output": OUTPUT_PATH,
    "output_dir": OUTPUT_DIR,
    "export_dir": REPLACED_DIR,
}

# The value of --input_file that reads stdin (text_input.STDIN).
STDIN = "-"


class PathFlagError(ValueError):
    """A path flag that breaks one of the rules; the message names the flag(s)."""


class PathParser(flags.ArgumentParser):
    """A string flag's parser that expands a leading "~" in each comma-separated part."""

    def parse(self, argument):
        """Returns the argument with "~" and "~user" expanded in each part.

        Args:
          argument: The flag's value as given.

        Returns:
          The value with each part's leading "~" expanded.
        """
        argument = super().parse(argument)
        return ",".join(_expand_part(part) for part in argument.split(","))


def _expand_part(part):
    """os.path.expanduser() of one part, keeping the spaces before it."""
    stripped = part.lstrip()
    return part[:len(part) - len(stripped)] + os.path.expanduser(stripped)


def set_role(name, role, flag_values=flags.FLAGS):
    """Says what a path flag is in this script, where it differs from ROLES.

    Args:
      name: The flag's name.
      role: INPUT, OUTPUT_FILE, OUTPUT_DIR, REPLACED_DIR or OUTPUT_PATH.
      flag_values: The FlagValues that hold it.
    """
    flag_values[name].path_role = role


def role(flag):
    """What an absl Flag is: one of the roles, or None for a flag that is no path.

    Args:
      flag: An absl Flag.

    Returns:
      Its role, or None.
    """
    return getattr(flag, "path_role", ROLES.get(flag.name))


def path_flags(flag_values):
    """The path flags defined in flag_values.

    Args:
      flag_values: An absl FlagValues.

    Returns:
      {name: role} of the flags ROLES or set_role() name.
    """
    roles = {}
    for name in flag_values:
        flag = flag_values[name]
        if flag.name == name and role(flag) is not None:
            roles[name] = role(flag)
    return roles


def expand_home(flag_values=flags.FLAGS):
    """Makes every path flag expand "~" when it is parsed; call before parsing.

    Args:
      flag_values: The FlagValues, not parsed yet.
    """
    for name in path_flags(flag_values):
        flag_values[name].parser = PathParser()


def _is_remote(path):
    return "://" in path


def _key(path):
    """How two local paths are compared: resolved, so that a/../b and b match."""
    return path if _is_remote(path) else os.path.realpath(path)


def _parts(value):
    """The paths a flag's value names: itself, and each comma-separated part."""
    parts = [part.strip() for part in value.split(",")]
    return [value] + [part for part in parts if part and part != value]


def _input_paths(value):
    """The paths an input flag's value reads: its parts, their glob matches and, for a
    folder, the files in it.

    Returns:
      {comparison key: path as given or found}.
    """
    paths = {}
    for part in _parts(value):
        if part == STDIN:
            continue
        found = [part]
        if not _is_remote(part):
            if glob.has_magic(part):
                found += glob.glob(part)
            elif os.path.isdir(part):
                found += [os.path.join(part, name) for name in os.listdir(part)]
        paths.update({_key(path): path for path in found})
    return paths


def _inside(path, folder):
    """Whether path is folder or lies under it (both resolved keys)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_outputs_spare_inputs(flag_values=flags.FLAGS):
    """Refuses an output flag that would overwrite or delete one of the run's inputs.

    Args:
      flag_values: The parsed FlagValues.

    Raises:
      PathFlagError: naming the output flag and the input flag.
    """
    roles = path_flags(flag_values)
    given = {name: flag_values[name].value for name in roles if flag_values[name].value}
    inputs = {name: _input_paths(value) for name, value in given.items()
              if roles[name] == INPUT}
    for output, value in given.items():
        kind = roles[output]
        if kind == INPUT:
            continue
        for part in _parts(value)[1:] if "," in value and kind == OUTPUT_FILE else [value]:
            key = _key(part)
            for name, paths in inputs.items():
                if kind in (REPLACED_DIR, OUTPUT_PATH):
                    hit = next((p for k, p in paths.items() if _inside(k, key)), None)
                    verb = "would delete" if kind == REPLACED_DIR else "would overwrite"
                else:
                    hit = paths.get(key)
                    # A run adds to its folder: one that is also an input folder
                    # (a run's own folder as its --init_checkpoint) loses nothing.
                    if kind == OUTPUT_DIR and hit is not None and os.path.isdir(hit):
                        hit = None
                    verb = "would overwrite"
                if hit is not None:
                    what = "" if hit == flag_values[name].value else f" ({hit})"
                    raise PathFlagError(
                        f"--{output}={part} {verb} the input --{name}={flag_values[name].value}"
                        f"{what}: give another --{output}")
        if kind == REPLACED_DIR:
            for other, other_value in given.items():
                if roles[other] == OUTPUT_DIR and _inside(_key(other_value), _key(value)):
                    raise PathFlagError(
                        f"--{output}={value} would delete --{other}={other_value}, which it "
                        f"replaces whole: give another --{output}")


def _nearest_existing(path):
    """The path's closest ancestor that exists (or path itself)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


def check_output_paths(flag_values=flags.FLAGS):
    """Refuses output paths that cannot be written, before any work.

    Args:
      flag_values: The parsed FlagValues.

    Raises:
      PathFlagError: naming the flag: a folder where a file is to be written,
        a file where a folder is, or a parent that is a file or read-only.
      output_folders.OutputFolderError: naming the flag, for a folder to be
        replaced whole that holds a user's files.
    """
    for name, kind in path_flags(flag_values).items():
        value = flag_values[name].value
        if kind == INPUT or not value:
            continue
        for path in _parts(value)[1:] if "," in value and kind == OUTPUT_FILE else [value]:
            if _is_remote(path):
                continue
            if kind == OUTPUT_FILE and os.path.isdir(path):
                raise PathFlagError(
                    f"--{name}={path} is a folder; give the name of a file to write, e.g. "
                    f"--{name}={os.path.join(path, 'output')}")
            if kind in (OUTPUT_DIR, REPLACED_DIR) and os.path.isfile(path):
                raise PathFlagError(f"--{name}={path}: {path} is not a directory, but a file")
            if kind == REPLACED_DIR:
                output_folders.check_replaceable(path, output_folders.SAVED_MODEL, name)
            ancestor = _nearest_existing(os.path.dirname(os.path.abspath(path)) or ".")
            if not os.path.isdir(ancestor):
                raise PathFlagError(
                    f"cannot write {path}: {ancestor} is a file, not a folder (--{name})")
            if not os.access(ancestor, os.W_OK | os.X_OK):
                raise PathFlagError(
                    f"cannot write {path}: the folder {ancestor} is not writable (--{name})")


def check(flag_values=flags.FLAGS):
    """Applies the rules on parsed flags: outputs spare inputs, outputs can be written.

    Args:
      flag_values: The parsed FlagValues.

    Raises:
      PathFlagError: naming the flag(s).
    """
    check_outputs_spare_inputs(flag_values)
    check_output_paths(flag_values)
