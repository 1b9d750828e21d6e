"""Keeps TensorFlow's start-up notes from burying a script's own lines.

On a machine without a GPU, importing TensorFlow and finding its devices
prints about a dozen lines before a script's first: notes on oneDNN, on the
CPU's instructions and on missing CUDA drivers, absl's note that its logging
is not initialized (twice), and an E-level "failed call to cuInit" although
no GPU was ever there to use. Most are printed before TensorFlow reads
TF_CPP_MIN_LOG_LEVEL, so that variable cannot hide them.

When the user has not set TF_CPP_MIN_LOG_LEVEL, configure() (which
bert_tf/__init__.py calls before any TensorFlow import) makes the first
`import tensorflow` quiet:

- TensorFlow loads with TF_CPP_MIN_LOG_LEVEL=1: its INFO lines off for the
  whole run, its warnings and errors on. (TensorFlow reads the variable
  once, at import; it is then removed again, so that a script's
  subprocesses start as the user's own environment says.)
- The import and the first look at the devices run with the process's
  standard error captured; then every captured line is written back except
  startup_notes() drops: INFO lines, absl's note, and the failed cuInit of
  a machine where TensorFlow found no CUDA driver at all. Warnings, errors
  and anything else come through.

With TF_CPP_MIN_LOG_LEVEL set, to any value, nothing is changed or
filtered: TF_CPP_MIN_LOG_LEVEL=0 shows TensorFlow's full log.
This module imports no TensorFlow.
"""

import contextlib
import importlib.abc
import importlib.util
import os
import re
import sys
import tempfile

VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
# INFO: TensorFlow's own C++ lines are hidden from here on.
QUIET_LEVEL = "1"

# An INFO line of absl's format (I0000 00:00:...) or TensorFlow's older one
# (2026-11-29 07:35:37.359101: I ...).
_INFO_LINE = re.compile(r"^(I\d{4} |\d{4}-\d\d-\d\d [\d:.]+: I )")
_ABSL_NOTE = ("WARNING: All log messages before absl::InitializeLog() is called are written "
              "to STDERR")
_NO_CUDA_DRIVER = "Could not find cuda drivers on your machine"
_FAILED_CUINIT = "failed call to cuInit"


def startup_notes(lines):
    """The lines of TensorFlow's start-up output that are notes, not news.

    Args:
      lines: What TensorFlow printed while it was imported and found its
        devices, one string per line.

    Returns:
      The set of indices of lines to drop: INFO lines, absl's note that its
      logging is not initialized, and "failed call to cuInit" when
      TensorFlow also said it found no CUDA driver (a machine without a GPU).
    """
    no_driver = any(_NO_CUDA_DRIVER in line for line in lines)
    return {i for i, line in enumerate(lines)
            if _INFO_LINE.match(line) or line == _ABSL_NOTE
            or (no_driver and _FAILED_CUINIT in line)}


@contextlib.contextmanager
def _stderr_without_startup_notes():
    """Captures file descriptor 2, then writes back what startup_notes() keeps."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        # No standard error to capture.
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = captured.read().decode("utf-8", "replace").splitlines()
            dropped = startup_notes(lines)
            kept = [line for i, line in enumerate(lines) if i not in dropped]
            if kept:
                os.write(2, ("\n".join(kept) + "\n").encode("utf-8"))


class _QuietLoader(importlib.abc.Loader):
    """TensorFlow's own loader, run with its start-up notes filtered out."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        os.environ[VARIABLE] = QUIET_LEVEL
        try:
            with _stderr_without_startup_notes():
                self._loader.exec_module(module)
                # The devices are found once per process: here, where CUDA's
                # start-up lines are caught, rather than at the script's first op.
                module.config.list_physical_devices()
        finally:
            del os.environ[VARIABLE]
            module.__loader__ = module.__spec__.loader = self._loader


class _QuietImportFinder(importlib.abc.MetaPathFinder):
    """Hands the first `import tensorflow` a _QuietLoader, then steps aside."""

    def find_spec(self, name, path, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _QuietLoader(spec.loader)
        return spec


def configure():
    """Makes the first TensorFlow import quiet, unless the user set TF_CPP_MIN_LOG_LEVEL.

    Returns:
      Whether the import will be quiet: False when the user set the
      variable, or when TensorFlow is already imported.
    """
    if VARIABLE in os.environ or "tensorflow" in sys.modules:
        return False
    if not any(isinstance(finder, _QuietImportFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _QuietImportFinder())
    return True
