"""How every script starts and fails: `cli.run(main)` instead of absl's `app.run(main)`.

Three things differ from absl:

- A bad input ends in one line on stderr, `<script>: error: <message>`, and
  exit status 1: the message names the file, line, flag or variable, as
  bert_tf's errors do. No traceback: a user's data error is not a crash.
  `--verbose` shows the traceback too, for bug reports. Errors that are
  the user's are ValueError (ConfigError, CheckpointError, GlueDataError,
  ConllDataError and the other data errors derive from it), OSError
  (missing or unreadable files), app.UsageError (flag checks) and, once
  TensorFlow is loaded, tf.errors.OpError (unreadable records, ...).
  Anything else is a bug and keeps its traceback.
- A flag value out of its bounds (--learning_rate=-1, --train_batch_size=0)
  is refused in one line too, when the flags are parsed, before any work.
- Path flags follow bert_tf/cli/path_flags.py's rules, checked before main():
  "~" expands in each, no output overwrites an input, and output paths that
  cannot be written are refused, in one line naming the flag(s).
- `--help` (and -h, --helpshort, --helpfull) exits 0, not absl's 1.
- Ctrl-C and SIGTERM (taken between two training loops, see
  bert_tf/runtime/interrupts.py) end in one line too, `<script>: interrupted by Ctrl-C
  at step N; the last checkpoint, ..., is at step M: the same command
  resumes from there` (training says where it stopped), with the shell's
  exit status for the signal: 130 for SIGINT, 143 for SIGTERM.

This module imports no TensorFlow, so that create_pretraining_data.py keeps
its fast start.
"""

import logging
import os
import signal
import sys
import traceback

from absl import app, flags

from bert_tf.cli import path_flags

_HELP_FLAGS = ("--help", "-h", "-?", "--helpshort", "--helpfull", "--helpxml")


def user_errors():
    """The exception types that are the user's input, not a bug.

    Returns:
      A tuple of exception classes.
    """
    errors = (ValueError, OSError, app.UsageError)
    tensorflow = sys.modules.get("tensorflow")
    if tensorflow is not None:
        errors += (tensorflow.errors.OpError,)
    return errors


def text_arguments(args):
    """Checks sentences given on the command line.

    Args:
      args: The positional arguments (Python decodes bytes that are not
        UTF-8 into lone surrogates).

    Returns:
      The arguments, unchanged.

    Raises:
      ValueError: naming the first argument that is not UTF-8.
    """
    for number, text in enumerate(args, start=1):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"argument {number} is not valid UTF-8: "
                             f"{ascii(text.encode('utf-8', 'surrogateescape'))}") from None
    return args


def printable(text):
    """Text safe to print inside a tab-separated line: tabs, newlines and control
    characters (terminal escape sequences) are written as backslash escapes."""
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode()
                   for char in text)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C raises KeyboardInterrupt, so that a run stops alike."""


def _raise_terminated(signum, frame):
    del signum, frame
    raise Terminated


def _one_line(error):
    """The error's message on one line (a multi-line message is joined)."""
    message = str(error) or type(error).__name__
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


def _log_tensorflow_once():
    """Leaves TensorFlow's Python log lines to absl's handler alone, so each prints once.

    TensorFlow's logger gets a handler of its own when it is first used
    while the root logger has none: on import, before app.run put absl's
    handler there. Its lines ("Assets written to ...") then print twice,
    through its handler and through absl's; they print once, in absl's
    format, through absl's alone.
    """
    if logging.getLogger().handlers:
        tensorflow_logger = logging.getLogger("tensorflow")
        for handler in list(tensorflow_logger.handlers):
            tensorflow_logger.removeHandler(handler)


def run(main, argv=None):
    """Parses the flags and runs main(argv), as app.run does; see the module docstring.

    Args:
      main: The script's main(argv).
      argv: The command line, default sys.argv.
    """
    argv = sys.argv if argv is None else argv
    program = os.path.basename(argv[0])
    # Every script has --verbose; defined here, by running one, not on import.
    if "verbose" not in flags.FLAGS:
        flags.DEFINE_bool("verbose", False, "On an error, print the Python traceback too.")
    path_flags.expand_home(flags.FLAGS)

    def guarded_main(args):
        _log_tensorflow_once()
        # SIGTERM (a scheduler's preemption, `kill`) stops a run as Ctrl-C does.
        signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            path_flags.check(flags.FLAGS)
            return main(args)
        except user_errors() as e:
            if flags.FLAGS.verbose:
                traceback.print_exc()
            print(f"{program}: error: {_one_line(e)}", file=sys.stderr)
            sys.exit(1)
        except KeyboardInterrupt as e:
            if flags.FLAGS.verbose:
                traceback.print_exc()
            # Training adds where it stopped and how to go on (Trainer.train).
            where = "; ".join(getattr(e, "__notes__", []))
            terminated = isinstance(e, Terminated)
            print(f"{program}: interrupted by {'SIGTERM' if terminated else 'Ctrl-C'}"
                  f"{' ' + where if where else ''}", file=sys.stderr)
            # The shell's status for a process a signal ended: 128 + its number.
            # os._exit, not sys.exit: TensorFlow's input threads may still be
            # running, and the interpreter's teardown around them can crash with
            # SIGSEGV; training saves nothing on an interrupt (the run resumes
            # from its last checkpoint), so nothing is left to finish.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(128 + (signal.SIGTERM if terminated else signal.SIGINT))

    def parse_flags(args):
        # absl's own parser prints two lines; a bad flag value gets one.
        try:
            return flags.FLAGS(args)
        except flags.Error as e:
            print(f"{program}: error: {e}", file=sys.stderr)
            sys.exit(1)

    try:
        app.run(guarded_main, argv=argv, flags_parser=parse_flags)
    except SystemExit as e:
        # absl exits 1 after printing the help it was asked for.
        if e.code == 1 and any(arg in _HELP_FLAGS for arg in argv[1:]):
            sys.exit(0)
        raise
