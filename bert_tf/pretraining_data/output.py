"""Output files and progress: where a run's records go, and how it reports.

`OutputFiles` collects each window's shuffled records in a spill file and,
at the end, interleaves the windows at random and deals the records
round-robin to the output files, which appear under their names only when
the run succeeds; `Progress` logs a line every few seconds.

The files are local and written with plain Python, as the data builder must
not import TensorFlow.
"""

import glob
import itertools
import os
import struct
import time

import numpy as np
from absl import logging

from bert_tf.pretraining_data.config import MERGE_STREAM, PretrainingDataError

# Records joined into one write to an output file.
_RECORDS_PER_WRITE = 4096

# Records whose windows are drawn at a time while interleaving.
_RECORDS_PER_DRAW = 1 << 16

# Bytes read from a window's part of the spill file at a time.
_READ_BYTES = 1 << 16

# A TFRecord's framing: an 8-byte length and a 4-byte checksum before the
# data, a 4-byte checksum after it.
_HEADER_BYTES, _FOOTER_BYTES = 12, 4

# Seconds between progress lines.
_PROGRESS_INTERVAL_S = 10.0


def remove_stale_files(path):
    """Removes the temporary files of path that runs killed before commit() left behind.

    Each run names its temporary files <path>.incomplete-<its process id>
    and, beside the first output file, <path>.incomplete-windows-<its
    process id>; a file whose process no longer exists will never be
    completed.

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


class _WindowReader:
    """Reads one window's framed records back from the spill file, in order."""

    def __init__(self, fd, start, end):
        """Args: the spill file's descriptor, and the window's byte range in it."""
        self._fd = fd
        self._next = start  # the file offset of the first byte not yet read
        self._end = end
        self._buffer = b""
        self._position = 0

    def _read_more(self, needed):
        """Keeps the buffer's unread bytes and reads at least `needed` more."""
        size = min(max(needed, _READ_BYTES), self._end - self._next)
        self._buffer = self._buffer[self._position:] + os.pread(self._fd, size, self._next)
        self._next += size
        self._position = 0

    def next_record(self):
        """The next framed record (header, data and footer), as bytes."""
        if len(self._buffer) - self._position < _HEADER_BYTES:
            self._read_more(_HEADER_BYTES)
        (length,) = struct.unpack_from("<Q", self._buffer, self._position)
        size = _HEADER_BYTES + length + _FOOTER_BYTES
        if len(self._buffer) - self._position < size:
            self._read_more(size - (len(self._buffer) - self._position))
        record = self._buffer[self._position:self._position + size]
        self._position += size
        return record


def interleave_windows(readers, counts, rng, records_per_draw=_RECORDS_PER_DRAW):
    """Yields the records of every window, the windows interleaved uniformly at random.

    Each window's records come in their own (already shuffled) order; which
    window gives the next record is drawn so that every interleaving is
    equally likely. Shuffled windows, so interleaved, are a uniform random
    permutation of all the records, as if the whole corpus had been shuffled
    at once, which is what the original's in-memory shuffle did. The draws go
    records_per_draw records at a time: how many of them each window gives
    (a multivariate hypergeometric draw from what each has left), in a random
    order.

    Args:
      readers: one object per window whose next_record() returns its next record.
      counts: how many records each window holds.
      rng: a numpy Generator.
      records_per_draw: how many records' windows to draw at once.

    Yields:
      The records, as bytes.
    """
    remaining = np.asarray(counts, np.int64)
    while remaining.sum():
        draw = rng.multivariate_hypergeometric(
            remaining, min(records_per_draw, int(remaining.sum())))
        windows = np.repeat(np.arange(len(remaining)), draw)
        rng.shuffle(windows)
        for window in windows.tolist():
            yield readers[window].next_record()
        remaining -= draw


class OutputFiles:
    """Writes records, shuffled across windows, round-robin to files that appear only when complete.

    Each window's records wait in a spill file beside the first output file,
    so that memory stays bounded by one window; commit() interleaves the
    windows at random into temporary files next to the destinations and
    renames them over the destinations. close() without commit() deletes
    every file it made. The spill file takes as much disk as the output.
    """

    def __init__(self, paths, random_seed):
        """Creates the temporary files.

        Args:
          paths: the output files.
          random_seed: the run's seed, from which the interleaving is drawn.

        Raises:
          PretrainingDataError: if a file cannot be created.
        """
        if len(set(paths)) != len(paths):
            raise PretrainingDataError(f"an output file is named twice: {paths}")
        self.paths = list(paths)
        self._rng = np.random.default_rng(
            np.random.SeedSequence([MERGE_STREAM, random_seed % (1 << 64)]))
        self._files = []
        self._spill = None
        self._window_ends = [0]  # the spill file's offset at the end of each window
        self._window_counts = []
        try:
            for path in self.paths:
                if os.path.isdir(path):
                    raise IsADirectoryError("it is a directory")
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
                remove_stale_files(path)
                self._files.append(open(f"{path}.incomplete-{os.getpid()}", "wb"))
            path = self.paths[0]
            self._spill = open(f"{path}.incomplete-windows-{os.getpid()}", "w+b")
        except OSError as e:
            self.close()
            raise PretrainingDataError(f"cannot write output file {path}: {e}") from e

    def add_window(self, blocks, order):
        """Appends one window's records, in the given order, to the spill file.

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
        # Joining a few thousand records per write is much faster than
        # writing each, and needs only a few megabytes.
        for first in range(0, len(records), _RECORDS_PER_WRITE):
            self._spill.write(b"".join(records[first:first + _RECORDS_PER_WRITE]))
        self._window_ends.append(self._spill.tell())
        self._window_counts.append(len(records))

    def commit(self):
        """Interleaves the windows into the files, closes them and renames them."""
        self._spill.flush()
        fd = self._spill.fileno()
        readers = [_WindowReader(fd, start, end)
                   for start, end in itertools.pairwise(self._window_ends)]
        if len(readers) > 1:
            logging.info("Interleaving the records of %d windows into %s", len(readers),
                         ", ".join(self.paths))
        pending = [[] for _ in self._files]
        for i, record in enumerate(interleave_windows(readers, self._window_counts,
                                                      self._rng)):
            mine = pending[i % len(self._files)]
            mine.append(record)
            if len(mine) == _RECORDS_PER_WRITE:
                self._files[i % len(self._files)].write(b"".join(mine))
                mine.clear()
        for f, mine, path in zip(self._files, pending, self.paths, strict=True):
            f.write(b"".join(mine))
            f.close()
            os.replace(f.name, path)
        self._files = []
        self._remove_spill()

    def close(self):
        """Deletes whatever commit() did not rename, and the spill file."""
        for f in self._files:
            f.close()
            os.remove(f.name)
        self._files = []
        self._remove_spill()

    def _remove_spill(self):
        """Closes and deletes the spill file, if there is one."""
        if self._spill is not None:
            self._spill.close()
            os.remove(self._spill.name)
            self._spill = None


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
