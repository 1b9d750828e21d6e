"""Ctrl-C and SIGTERM during training, taken between two training loops.

Python runs a signal's handler in the main thread at its next bytecode. In
a training run the main thread spends its time in TensorFlow: a loop's
tf.function call, a checkpoint's save, a summary's write. Ctrl-C's
KeyboardInterrupt is then raised inside TensorFlow's own Python code, in
the middle of its bookkeeping (a function call's outputs, a checkpoint's
files), and unwinds through it. held() records the signal instead and
leaves the raising to the training loop, which asks where it stands
between two loops: after a checkpoint is complete, never inside one.

A second Ctrl-C (or SIGTERM) while one is held is not held: it stops the
run at once, as it would without held(), for a user who will not wait for
a long loop to end.
"""

import contextlib
import signal
import threading

from absl import logging

# The signals that stop a run, by the names a user knows them by: Ctrl-C, and
# a scheduler's preemption or `kill`.
STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


@contextlib.contextmanager
def held():
    """Holds Ctrl-C and SIGTERM within the block until it asks for them.

    Only signals whose handler is a Python function are held (Python's
    KeyboardInterrupt for Ctrl-C, cli.run's for SIGTERM): an ignored signal
    stays ignored and the system's default action stays the default. Off
    the main thread, which may not set handlers, nothing is held.
    The handlers in place before the block are back after it.

    Yields:
      raise_if_stopped(): calls the held signal's own handler, which
      raises its exception (KeyboardInterrupt for Ctrl-C), if a signal came
      since the last call; does nothing otherwise.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    # number -> the Python function that handled it before the block.
    previous = {number: handler for number in STOP_SIGNALS
                if callable(handler := signal.getsignal(number))}
    pending = []

    def hold(number, frame):
        if pending:
            # The second one: the user will not wait.
            previous[number](number, frame)
            return
        pending.append(number)
        logging.warning("%s: stopping after this training loop (%s again stops at once).",
                        STOP_SIGNALS[number], STOP_SIGNALS[number])

    def raise_if_stopped():
        if pending:
            number = pending.pop()
            previous[number](number, None)

    try:
        for number in previous:
            signal.signal(number, hold)
        yield raise_if_stopped
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
