"""Output files that appear only when complete.

Every result bert_tf writes (records, eval_results.txt, prediction files,
extracted features, SavedModels) goes through one of these helpers, so that a
run killed at any point leaves either the previous file or the new, complete
one, never a truncated file under the final name. Paths may be local or on
any filesystem tf.io.gfile knows (gs:// on Cloud TPUs).

Each helper creates the folders its output lies in, when they are missing,
before the caller's work starts; a folder replaced whole (atomic_directory)
is first checked to hold nothing a user put there (output_folders.py).

The data builder (bert_tf.pretraining_data) writes its shards with its own
writer: it must not import TensorFlow, and it deals records to several files
at once.
"""

import contextlib
import os
import shutil
import sys
import uuid

import tensorflow as tf

from bert_tf import output_folders


def _temporary_name(path):
    """A hidden name beside path, unique to this call.

    Unique, so that workers writing the same path at once (multi-worker
    training writes every split on every worker) never share a temporary file.
    """
    directory, base = os.path.split(path.rstrip("/"))
    return os.path.join(directory, f".{base}.{uuid.uuid4().hex}.tmp")


def _make_parent(path):
    """Creates the folder that path lies in, when it is missing.

    Created before any work, so that an output in a new folder is not
    refused after the work it holds was done.

    Returns:
      The outermost folder created, to remove when the output fails; None
      when none was, or the path is remote (gs://, where a folder is a part
      of its files' names, there when they are).
    """
    if "://" in path:
        return None
    created = None
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        created, parent = parent, os.path.dirname(parent)
    if created:
        os.makedirs(os.path.dirname(os.path.abspath(path)))
    return created


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path beside `path`; renames it over `path` at the end.

    For writers that open their file by name (tf.io.TFRecordWriter). The
    folder of `path` is created first when it is missing. If the body
    raises, the temporary file, and the folders this call created, are
    removed and `path` is left as it was.

    Args:
      path: The final file, local or any tf.io.gfile filesystem.

    Yields:
      The temporary file's path, to write.
    """
    created = _make_parent(path)
    temporary = _temporary_name(path)
    try:
        yield temporary
        tf.io.gfile.rename(temporary, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.remove(temporary)
        if created:
            shutil.rmtree(created, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_write(path, mode="w"):
    """Opens a temporary file beside `path`; renames it over `path` at the end.

    atomic_path, with the file opened. If the body raises, the temporary file
    is removed and `path` is left as it was.

    Args:
      path: The final file, local or any tf.io.gfile filesystem.
      mode: "w" for text, "wb" for bytes.

    Yields:
      The writable file.
    """
    with atomic_path(path) as temporary, tf.io.gfile.GFile(temporary, mode) as f:
        yield f


@contextlib.contextmanager
def atomic_write_or_stdout(path):
    """atomic_write(path), or stdout (left open) when path is None.

    For scripts whose --output_file defaults to printing.

    Args:
      path: The final file, or None.

    Yields:
      The writable text file.
    """
    if path is None:
        yield sys.stdout
        return
    with atomic_write(path) as f:
        yield f


@contextlib.contextmanager
def atomic_directory(path, layout=None):
    """Yields a temporary folder beside `path`; it replaces `path` at the end.

    For outputs that are a folder (a SavedModel). If the body raises, the
    temporary folder is removed and an earlier `path` is left as it was.

    Args:
      path: The final folder.
      layout: The output's output_folders.Layout: an existing `path` is
        replaced only if it is empty or an earlier output of the layout,
        checked before the body runs. None for a folder that only the
        caller writes (a run's best/ in its output_dir).

    Yields:
      The temporary folder's path, to write into.

    Raises:
      output_folders.OutputFolderError: `path` holds files that are no part
        of an earlier output of the layout (nothing is written).
    """
    if layout is not None:
        output_folders.check_replaceable(path, layout, exists=tf.io.gfile.isdir,
                                         walk=tf.io.gfile.walk)
    temporary = _temporary_name(path)
    try:
        yield temporary
        if tf.io.gfile.exists(path):
            tf.io.gfile.rmtree(path)
        tf.io.gfile.rename(temporary, path)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.rmtree(temporary)
        raise


@contextlib.contextmanager
def atomic_files(folder, last=()):
    """Yields a temporary folder beside `folder`; moves its files into `folder` at the end.

    For an output of several files that must appear together (a checkpoint's
    data, index and config) in a folder that may hold other files. Local
    paths only. If the body raises, the temporary folder is removed and
    `folder` is left as it was (not even created).

    Args:
      folder: The final folder.
      last: Names of files to move after all others: those whose presence
        makes the output look complete (a checkpoint's .index, config.json).

    Yields:
      The temporary folder's path, to write into.
    """
    temporary = _temporary_name(os.path.abspath(folder))
    # The outermost folder this call creates (for the temporary one): it goes
    # too if the body fails.
    created = _make_parent(temporary)
    os.makedirs(temporary)
    try:
        yield temporary
        os.makedirs(folder, exist_ok=True)
        names = sorted(os.listdir(temporary), key=lambda name: (name in last, name))
        for name in names:
            os.replace(os.path.join(temporary, name), os.path.join(folder, name))
    except BaseException:
        if created:
            shutil.rmtree(created, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def write_results(path, results):
    """Writes "key = value" lines, sorted by key, as the original's eval_results.txt.

    Args:
      path: The output file.
      results: A dict of scalars.
    """
    with atomic_write(path) as f:
        for key in sorted(results):
            f.write(f"{key} = {results[key]}\n")
