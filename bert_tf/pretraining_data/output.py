"""Output files and progress: where a run's records go, and how it reports.

`OutputFiles` deals records round-robin to the output files, which appear
under their names only when the run succeeds; `Progress` logs a line every
few seconds.

The files are local and written with plain Python, as the data builder must
not import TensorFlow.
"""

import glob
import os
import time

import numpy as np
from absl import logging

from bert_tf.pretraining_data.config import PretrainingDataError

# Records joined into one write to an output file.
_RECORDS_PER_WRITE = 4096

# Seconds between progress lines.
_PROGRESS_INTERVAL_S = 10.0


def remove_stale_files(path):
    """Removes the temporary files of path that runs killed before commit() left behind.

    Each run names its temporary file <path>.incomplete-<its process id>;
    a file whose process no longer exists will never be completed.

    Args:
      path: An output file.
    """
    for stale in glob.glob(f"{glob.escape(path)}.incomplete-*"):
        pid = stale.rsplit("-", 1)[1]
        if pid.isdigit() and not _running(int(pid)):
            logging.info("Removing %s, left by a run that was killed", stale)
            os.remove(stale)


def _running(pid):
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class OutputFiles:
    """Writes records round-robin to files that appear only when complete.

    Records go to temporary files next to their destinations, which are
    renamed over the destinations by commit(); close() without commit()
    deletes them.
    """

    def __init__(self, paths):
        """Creates the temporary files.

        Args:
          paths: the output files.

        Raises:
          PretrainingDataError: if a file cannot be created.
        """
        if len(set(paths)) != len(paths):
            raise PretrainingDataError(f"an output file is named twice: {paths}")
        self.paths = list(paths)
        self._files = []
        self._written = 0
        try:
            for path in self.paths:
                if os.path.isdir(path):
                    raise IsADirectoryError("it is a directory")
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
                remove_stale_files(path)
                self._files.append(open(f"{path}.incomplete-{os.getpid()}", "wb"))
        except OSError as e:
            self.close()
            raise PretrainingDataError(f"cannot write output file {path}: {e}") from e

    def write(self, blocks, order):
        """Appends records, dealing them to the files in turn.

        Args:
          blocks: a list of (data, lengths): framed records back to back, and
            each one's size.
          order: the order in which to write the records, indices into the
            records of all blocks.
        """
        # Views into the blocks spare copying a window's records again.
        records = []
        for data, lengths in blocks:
            view, ends = memoryview(data), np.cumsum(lengths).tolist()
            records += [view[start:end] for start, end in zip([0, *ends[:-1]], ends,
                                                              strict=True)]
        records = [records[i] for i in order]
        count = len(self._files)
        for k, f in enumerate(self._files):
            mine = records[(k - self._written) % count::count]
            # Joining a few thousand records per write is much faster than
            # writing each, and needs only a few megabytes.
            for first in range(0, len(mine), _RECORDS_PER_WRITE):
                f.write(b"".join(mine[first:first + _RECORDS_PER_WRITE]))
        self._written += len(records)

    def commit(self):
        """Closes the files and renames them to their final names."""
        for f, path in zip(self._files, self.paths, strict=True):
            f.close()
            os.replace(f.name, path)
        self._files = []

    def close(self):
        """Deletes whatever commit() did not rename."""
        for f in self._files:
            f.close()
            os.remove(f.name)
        self._files = []


class Progress:
    """Logs documents, instances and instances/s every few seconds."""

    def __init__(self):
        """Starts the clock."""
        self.start = time.monotonic()
        self._last = self.start

    def update(self, summary, windows, force=False):
        """Logs a progress line if it is time to.

        Args:
          summary: the PretrainingDataSummary so far.
          windows: windows done so far.
          force: log even if the last line was recent.
        """
        now = time.monotonic()
        if force or now - self._last >= _PROGRESS_INTERVAL_S:
            self._last = now
            rate = summary.instances / max(1e-9, now - self.start)
            logging.info("%d windows, %d documents, %d instances, %.0f instances/s",
                         windows, summary.documents, summary.instances, rate)
