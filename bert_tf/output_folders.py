"""The one rule for an output folder that a tool replaces whole: it never deletes a user's file.

A raw-text SavedModel (--export_dir), TF Hub's encoder and preprocessor and
a keras-hub preset are folders that a tool writes beside their final place
and then puts in place whole (io_utils.atomic_directory), which deletes what
the folder held before. That is allowed only where nothing of a user's is
lost: the folder is missing, empty, or holds an earlier output of the same
kind. An earlier output is recognised by its layout (LAYOUTS): the files
that make one are there, and nothing else is. Any other folder is refused,
naming it, what it holds and what to do, as the most trusted tools refuse
to write into a folder they did not make rather than empty it.

This module imports no TensorFlow, so that cli's path checks apply the rule
before any work (path_flags.py); io_utils.atomic_directory applies it again
where the folder is written, with TensorFlow's file functions for remote
paths.
"""

import dataclasses
import fnmatch
import os


@dataclasses.dataclass(frozen=True)
class Layout:
    """The files an output folder of one kind is made of.

    Attributes:
      kind: What the output is, for messages ("SavedModel").
      required: Files (relative paths) that every such output holds.
      allowed: Patterns (fnmatch, "*" crossing "/") of every file such an
        output may hold; a file matching none is a user's.
    """

    kind: str
    required: tuple
    allowed: tuple


# tf.saved_model.save's files, and assets.extra/, the place for files that
# serving does not load (export.py writes its info file there).
SAVED_MODEL = Layout(
    "SavedModel", required=("saved_model.pb",),
    allowed=("saved_model.pb", "fingerprint.pb", "variables/variables.index",
             "variables/variables.data-*", "assets/*", "assets.extra/*"))
# keras-hub's save_to_preset: a backbone's, a tokenizer's, a task's files.
KERAS_HUB_PRESET = Layout(
    "keras-hub preset", required=("config.json", "model.weights.h5"),
    allowed=("config.json", "model.weights.h5", "metadata.json", "tokenizer.json",
             "preprocessor.json", "task.json", "task.weights.h5", "assets/*"))

LAYOUTS = (SAVED_MODEL, KERAS_HUB_PRESET)

# How many of a folder's foreign files a message names.
_NAMED_FILES = 3


class OutputFolderError(ValueError):
    """An output folder that holds files the tool did not write; names it and what to do."""


def _files(folder, walk):
    """The relative paths of every file under folder, sorted."""
    found = []
    for directory, _, names in walk(folder):
        relative = os.path.relpath(directory, folder)
        found += [name if relative == "." else os.path.join(relative, name) for name in names]
    return sorted(path.replace(os.sep, "/") for path in found)


def foreign_files(folder, layout, walk=os.walk):
    """The files of an existing folder that stop a tool from replacing it.

    Args:
      folder: An existing folder.
      layout: The Layout of the output that would replace it.
      walk: os.walk, or a function like it (tf.io.gfile.walk for remote paths).

    Returns:
      [] for an empty folder or an earlier output of the layout; else every
      file that is no part of one, or, when all are, the required files that
      are missing (a folder of a layout's names alone is not yet an output).
    """
    files = _files(folder, walk)
    if not files:
        return []
    foreign = [path for path in files
               if not any(fnmatch.fnmatchcase(path, pattern) for pattern in layout.allowed)]
    if foreign:
        return foreign
    return [] if all(name in files for name in layout.required) else files


def check_replaceable(folder, layout, flag=None, exists=os.path.isdir, walk=os.walk):
    """Refuses to replace a folder that holds anything but an earlier output of the layout.

    Args:
      folder: Where the output goes.
      layout: Its Layout.
      flag: The flag that named the folder ("--export_dir"), for the message;
        None names the folder alone.
      exists: os.path.isdir, or a function like it (tf.io.gfile.isdir).
      walk: os.walk, or a function like it (tf.io.gfile.walk).

    Raises:
      OutputFolderError: naming the folder, up to three of its files and what
        to do.
    """
    if not exists(folder):
        return
    foreign = foreign_files(folder, layout, walk)
    if not foreign:
        return
    named = ", ".join(foreign[:_NAMED_FILES])
    more = f" and {len(foreign) - _NAMED_FILES} more" if len(foreign) > _NAMED_FILES else ""
    where = f"--{flag.lstrip('-')}={folder}" if flag else folder
    raise OutputFolderError(
        f"{where} holds files that are no part of an earlier {layout.kind} ({named}{more}), "
        f"which writing the {layout.kind} there would delete: give a new or empty folder")
