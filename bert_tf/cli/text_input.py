"""The texts that predict_text.py and predict_entities.py label: arguments or a file's lines.

Both scripts take their texts as command-line arguments, or from
--input_file: one input a line, "-" for stdin, and with --pair
"text_a<TAB>text_b". TextInput checks them and hands them out in batches
read as they are needed, so that a file of any size streams through a
SavedModel loaded once; on a file it logs its progress.

A file is read as bytes and decoded line by line, so that a line that is
not UTF-8 is named in the error. A line ends at "\\n" (a "\\r" before it is
dropped too, for files written on Windows), so a text from a file holds no
newline; an argument may. A NUL byte is read as a space, with a warning:
the original's tokenizer dropped it, which made "Terrible\\x00acting" one
word; a line of NULs alone is then an empty text, warned about as such.

CutInputs counts the inputs a model cut to its max_seq_length, for the
scripts' warnings.

This module imports no TensorFlow, as cli/__init__.py.
"""

import contextlib
import itertools
import os
import stat
import sys
import time

from absl import app, flags, logging

from bert_tf import cli, messages
from bert_tf.cli import path_flags
from bert_tf.training.progress import format_duration

STDIN = "-"
PROGRESS_INTERVAL_S = 10.0
# Batches read ahead and run in order of length (export_runner.run_batches):
# enough that most batches hold inputs of about one length.
LENGTH_ORDER_BATCHES = 16
# Inputs cut to max_seq_length that are warned about one by one; the others
# are only counted, in the last warning.
CUTS_SHOWN = 5


def define_flags(input_file_help=None, output_file_help=None, batch_size_help=None,
                 flag_values=flags.FLAGS):
    """Defines the serving scripts' --export_dir (required), --input_file, --output_file
    and --batch_size.

    predict_text.py and predict_entities.py take the default help; predict_choices.py
    words it for its CSV files. Call once per script.

    Args:
      input_file_help: --input_file's help; None: a file of texts, one a line.
      output_file_help: --output_file's help; None: written when complete, else stdout.
      batch_size_help: --batch_size's help; None: inputs per run of the model.
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    flags.DEFINE_string("export_dir", None, "The SavedModel folder.", **fv)
    flags.mark_flag_as_required("export_dir", flag_values=flag_values)
    # The model these scripts read, not one they write.
    path_flags.set_role("export_dir", path_flags.INPUT, flag_values)
    flags.DEFINE_string(
        "input_file", None,
        input_file_help or "Label this file's lines instead of the arguments, one input a "
        "line; '-' reads stdin.", **fv)
    flags.DEFINE_string(
        "output_file", None,
        output_file_help or "Write the output lines here (it appears only when complete) "
        "instead of to stdout.", **fv)
    flags.DEFINE_integer("batch_size", 32,
                         batch_size_help or "Inputs run through the model at a time.",
                         lower_bound=1, **fv)


class TextInput:
    """The inputs to label, in input order: the arguments, or a file's lines.

    Attributes:
      names: The model's input names, one per text of an input.
      total: How many inputs there are; None for stdin or a pipe, which are
        read only once.
    """

    def __init__(self, args, input_file=None, names=("text",)):
        """Checks the arguments, or every line of a regular file, before any work.

        A bad line of a file then fails the run before the model is loaded,
        and the progress lines can say how far along it is. Empty arguments
        are warned about here, one line each.

        Args:
          args: The positional arguments (decoded as Python decodes them:
            bytes that are not UTF-8 become lone surrogates).
          input_file: A text file, or "-" for stdin; None to label args.
          names: The model's input names: ("text",), or two, e.g.
            ("text_a", "text_b"), to read pairs: two arguments each, or one
            line "text_a<TAB>text_b".

        Raises:
          app.UsageError: Neither or both of args and input_file, or an odd
            number of arguments for pairs.
          ValueError: Naming the argument, or the file and line: not UTF-8,
            or a pair's line without exactly one tab.
          OSError: The file cannot be read.
        """
        if args and input_file is not None:
            raise app.UsageError("give the texts as arguments or as --input_file, not both")
        if not args and input_file is None:
            raise app.UsageError("give the texts to label as arguments, or --input_file")
        self.names = tuple(names)
        self._input_file = input_file
        self._nul_lines, self._first_nul = 0, None
        self._arguments = None
        self.total = None
        if input_file is None:
            cli.text_arguments(args)
            size = len(self.names)
            if len(args) % size:
                raise app.UsageError(f"pairs need an even number of arguments, not {len(args)}")
            for number, text in enumerate(args, start=1):
                if not text.strip():
                    messages.warn(f"argument {number} is empty; its prediction reflects no text")
            self._arguments = [tuple(args[i:i + size]) for i in range(0, len(args), size)]
            self.total = len(self._arguments)
        elif input_file != STDIN and stat.S_ISREG(os.stat(input_file).st_mode):
            self.total = sum(1 for _ in self._lines())

    @property
    def sort_window(self):
        """How many batches export_runner.run_batches may read ahead and run in order of length.

        LENGTH_ORDER_BATCHES for arguments and files; 1 for stdin or a pipe,
        whose answers then come out as their lines come in.
        """
        return 1 if self.total is None else LENGTH_ORDER_BATCHES

    def batches(self, batch_size):
        """The inputs, batch_size at a time, in input order.

        A file's lines are read only as their batch is asked for, so that a
        pipe's first results come out before it ends. Reading a file, a
        progress line is logged at most every PROGRESS_INTERVAL_S seconds and
        once at the end, each counting the batches handed out before it as
        done; and the empty lines are warned about once, at the end.

        Args:
          batch_size: The most inputs a batch.

        Yields:
          {name: list of str} for each of names, the same length each.
        """
        if self._arguments is not None:
            for start in range(0, len(self._arguments), batch_size):
                yield self._columns(self._arguments[start:start + batch_size])
            return
        progress = Progress(self.total)
        empty, first_empty = 0, None
        self._nul_lines, self._first_nul = 0, None
        lines = self._lines()
        while batch := list(itertools.islice(lines, batch_size)):
            for number, texts in batch:
                if not all(text.strip() for text in texts):
                    empty += 1
                    first_empty = first_empty or number
            yield self._columns([texts for _, texts in batch])
            progress.update(len(batch))
        progress.finish()
        if self._nul_lines:
            count = "1 line holds" if self._nul_lines == 1 else f"{self._nul_lines} lines hold"
            messages.warn(f"{self._file_name()}: {count} NUL bytes, read as spaces, the first line "
                     f"{self._first_nul}")
        if empty:
            count = "1 line" if empty == 1 else f"{empty} lines"
            messages.warn(f"{self._file_name()}: {count} with an empty text, the first line "
                     f"{first_empty}; their predictions reflect no text")

    def _columns(self, inputs):
        """{name: list of str} from a list of inputs, each a tuple of len(names) texts."""
        columns = zip(*inputs, strict=True)
        return {name: list(texts) for name, texts in zip(self.names, columns, strict=True)}

    def _file_name(self):
        """The input file as error messages name it."""
        return "<stdin>" if self._input_file == STDIN else self._input_file

    def _lines(self):
        """Reads the input file once, checking each line.

        Yields:
          (line number from 1, tuple of len(names) texts).

        Raises:
          ValueError: As the constructor.
          OSError: The file cannot be read.
        """
        name = self._file_name()
        stdin = contextlib.nullcontext(sys.stdin.buffer)
        with stdin if self._input_file == STDIN else open(self._input_file, "rb") as f:
            for number, raw in enumerate(f, start=1):
                try:
                    # "utf-8-sig" drops a byte-order mark, which only the
                    # first line can start with.
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"{name}:{number}: not valid UTF-8 ({e.reason} at byte "
                                     f"{e.start} of the line)") from None
                line = line.removesuffix("\n").removesuffix("\r")
                if "\0" in line:
                    # A space, not nothing: words on either side stay apart.
                    line = line.replace("\0", " ")
                    self._nul_lines += 1
                    self._first_nul = self._first_nul or number
                texts = tuple(line.split("\t")) if len(self.names) > 1 else (line,)
                if len(texts) != len(self.names):
                    raise ValueError(f"{name}:{number}: a pair's line is text_a<TAB>text_b, "
                                     f"but this one has {len(texts) - 1} tabs")
                yield number, texts


class CutInputs:
    """The inputs a model cut to its max_seq_length: the first few warned about, all counted."""

    def __init__(self, noun="inputs", shown=CUTS_SHOWN):
        """Starts the count.

        Args:
          noun: What the inputs are, for the last warning ("inputs", "questions").
          shown: How many are warned about one by one.
        """
        self.noun = noun
        self.shown = shown
        self.cut = []

    def add(self, where):
        """Counts a cut input, and warns about it if it is among the first few.

        Args:
          where: How a warning names it: "line 3", "argument 2".
        """
        self.cut.append(where)
        if len(self.cut) <= self.shown:
            messages.warn(f"{where} is longer than the export's max_seq_length: its prediction "
                     "reads its beginning only, as training did")

    def finish(self, total):
        """Warns with the count of cut inputs, if any.

        Args:
          total: How many inputs there were.
        """
        if self.cut:
            messages.warn(f"{len(self.cut)} of {total} {self.noun} were cut to the export's "
                     f"max_seq_length, the first {self.cut[0]}")


class Progress:
    """Logs how many inputs are done and how fast, every few seconds and at the end."""

    def __init__(self, total, interval=PROGRESS_INTERVAL_S, clock=time.monotonic):
        """Starts the clock.

        Args:
          total: How many inputs there are, or None if unknown.
          interval: The fewest seconds between two progress lines.
          clock: A monotonic clock in seconds (tests pass their own).
        """
        self.total = total
        self.done = 0
        self._interval = interval
        self._clock = clock
        self._start = self._last = clock()

    def update(self, count):
        """Counts inputs done; logs a line if the last one is interval seconds old.

        Args:
          count: The inputs done since the last update.
        """
        self.done += count
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            logging.info("%s", self._line(now))

    def finish(self):
        """Logs the last line: everything done, in how long."""
        logging.info("%s", self._line(self._clock(), finished=True))

    def _line(self, now, finished=False):
        """'120/1000 lines, 12.0 lines/s, 1m13s left', or without the total and time left."""
        elapsed = now - self._start
        rate = self.done / max(elapsed, 1e-9)
        done = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        if finished:
            return f"{done} lines in {format_duration(elapsed)}, {rate:.1f} lines/s"
        left = (f", {format_duration((self.total - self.done) / rate)} left"
                if self.total is not None and rate > 0 else "")
        return f"{done} lines, {rate:.1f} lines/s{left}"
