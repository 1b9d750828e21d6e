"""Tests for interrupts.held: Ctrl-C and SIGTERM taken where the block asks."""

import signal
import threading

import pytest

from bert_tf.runtime import interrupts


class Terminated(Exception):
    """What this test's SIGTERM handler raises, as cli.run's does."""


def _raise_terminated(number, frame):
    del number, frame
    raise Terminated


@pytest.fixture(autouse=True)
def python_handlers():
    """Python's Ctrl-C handler and a raising SIGTERM handler, as a script has them."""
    before = {number: signal.getsignal(number) for number in interrupts.STOP_SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_terminated)
    yield
    for number, handler in before.items():
        signal.signal(number, handler)


@pytest.mark.parametrize(("number", "exception"), [(signal.SIGINT, KeyboardInterrupt),
                                                   (signal.SIGTERM, Terminated)])
def test_a_signal_is_raised_where_the_block_asks_and_not_before(number, exception):
    reached = []
    with pytest.raises(exception):
        with interrupts.held() as raise_if_stopped:
            raise_if_stopped()
            signal.raise_signal(number)
            reached.append("after the signal")
            raise_if_stopped()
            reached.append("after asking")
    assert reached == ["after the signal"]


def test_asking_without_a_signal_does_nothing():
    with interrupts.held() as raise_if_stopped:
        raise_if_stopped()
        raise_if_stopped()


def test_a_second_signal_is_raised_at_once():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            signal.raise_signal(signal.SIGINT)
            reached.append("after the first")
            signal.raise_signal(signal.SIGINT)
            reached.append("after the second")
    assert reached == ["after the first"]


def test_the_handlers_are_back_after_the_block_and_an_unasked_signal_is_gone():
    with interrupts.held():
        signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is _raise_terminated
    with pytest.raises(Terminated):
        signal.raise_signal(signal.SIGTERM)


def test_an_ignored_signal_stays_ignored():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with interrupts.held() as raise_if_stopped:
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.raise_signal(signal.SIGTERM)
        raise_if_stopped()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN


def test_off_the_main_thread_nothing_is_held():
    seen = []

    def train():
        with interrupts.held() as raise_if_stopped:
            seen.append(signal.getsignal(signal.SIGINT))
            raise_if_stopped()

    thread = threading.Thread(target=train)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]
