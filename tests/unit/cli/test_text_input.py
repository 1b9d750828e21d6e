"""Tests for bert_tf.cli.text_input: the texts of predict_text.py and predict_entities.py."""

import io
import logging

import pytest
from absl import app

from bert_tf.cli import text_input

PAIR = ("text_a", "text_b")


def _stdin(monkeypatch, data):
    """Makes sys.stdin read `data` (bytes)."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_arguments_come_in_batches_and_pairs(capsys):
    texts = text_input.TextInput(["a", "b", " ", "d", "e", "f"], names=PAIR)
    assert texts.total == 3
    assert list(texts.batches(2)) == [{"text_a": ["a", " "], "text_b": ["b", "d"]},
                                      {"text_a": ["e"], "text_b": ["f"]}]
    # Warned at once, before any batch, as before there was --input_file.
    assert capsys.readouterr().err.endswith(
        ": warning: argument 3 is empty; its prediction reflects no text\n")


@pytest.mark.parametrize("args,input_file,message", [
    (["a"], "file.txt", "not both"),
    ([], None, "give the texts to label as arguments, or --input_file"),
    (["a", "b", "c"], None, "pairs need an even number of arguments, not 3"),
])
def test_usage_errors(args, input_file, message):
    with pytest.raises(app.UsageError, match=message):
        text_input.TextInput(args, input_file, names=PAIR)


def test_a_file_is_counted_and_read_line_by_line(tmp_path, capsys, caplog):
    path = tmp_path / "pairs.tsv"
    # A byte-order mark, Windows line ends, empty sides, no newline at the end.
    path.write_bytes("\ufeffone\ttwo\r\n\tfour\nfive\tsix\n\t\nnine\tten".encode())
    texts = text_input.TextInput([], str(path), names=PAIR)
    assert texts.total == 5
    with caplog.at_level(logging.INFO, logger="absl"):
        batches = list(texts.batches(2))
    assert batches == [{"text_a": ["one", ""], "text_b": ["two", "four"]},
                       {"text_a": ["five", ""], "text_b": ["six", ""]},
                       {"text_a": ["nine"], "text_b": ["ten"]}]
    assert capsys.readouterr().err.endswith(
        f": warning: {path}: 2 lines with an empty text, the first line 2; their predictions "
        "reflect no text\n")
    assert caplog.messages[-1].startswith("5/5 lines in ")
    # A file is known whole: its batches may be read ahead and run in order of length.
    assert texts.sort_window == text_input.LENGTH_ORDER_BATCHES > 1


@pytest.mark.parametrize("data,message", [
    (b"one\ttwo\ncaf\xe9\tthree\n", ":2: not valid UTF-8 (invalid continuation byte at byte 3"),
    (b"one\ttwo\nthree\n", ":2: a pair's line is text_a<TAB>text_b, but this one has 0 tabs"),
    (b"one\ttwo\tthree\n", ":1: a pair's line is text_a<TAB>text_b, but this one has 2 tabs"),
])
def test_a_bad_line_of_a_file_is_named_before_any_batch(tmp_path, data, message):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(data)
    with pytest.raises(ValueError) as error:
        text_input.TextInput([], str(path), names=PAIR)
    assert str(error.value).startswith(f"{path}{message}")


def test_stdin_is_read_as_its_batches_are_asked_for(monkeypatch):
    _stdin(monkeypatch, b"one\ntwo\tkept\nthree\ncaf\xe9\n")
    texts = text_input.TextInput([], "-")
    assert texts.total is None
    # Each batch runs as its lines come, none waits for the lines after it.
    assert texts.sort_window == 1
    batches = texts.batches(2)
    # The first batch comes before the bad line is read.
    assert next(batches) == {"text": ["one", "two\tkept"]}
    with pytest.raises(ValueError, match=r"^<stdin>:4: not valid UTF-8"):
        next(batches)


def test_progress_logs_every_interval_and_at_the_end(caplog):
    now = [100.0]
    progress = text_input.Progress(1000, interval=10, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="absl"):
        for _ in range(8):
            now[0] += 4
            progress.update(100)
        progress.finish()
        unknown = text_input.Progress(None, clock=lambda: now[0])
        now[0] += 20
        unknown.update(50)
    assert caplog.messages == ["300/1000 lines, 25.0 lines/s, 28s left",
                               "600/1000 lines, 25.0 lines/s, 16s left",
                               "800/1000 lines in 32s, 25.0 lines/s",
                               "50 lines, 2.5 lines/s"]


def test_a_nul_byte_is_read_as_a_space_with_a_warning(tmp_path, capsys):
    """The words around a NUL stay apart; a line of NULs alone is an empty text."""
    path = tmp_path / "reviews.txt"
    path.write_bytes(b"Terrible\x00acting\n\x00\x00\x00\nFine.\n")
    texts = text_input.TextInput([], str(path))
    assert list(texts.batches(8)) == [{"text": ["Terrible acting", "   ", "Fine."]}]
    warnings = [line.split(": warning: ")[1] for line in capsys.readouterr().err.splitlines()]
    assert warnings == [
        f"{path}: 2 lines hold NUL bytes, read as spaces, the first line 1",
        f"{path}: 1 line with an empty text, the first line 2; their predictions reflect no "
        "text"]


def test_cut_inputs_are_warned_one_by_one_then_counted(capsys):
    cut = text_input.CutInputs("questions", shown=2)
    for line in (3, 5, 9):
        cut.add(f"line {line}")
    cut.finish(10)
    warnings = [line.split(": warning: ")[1] for line in capsys.readouterr().err.splitlines()]
    assert warnings == [
        "line 3 is longer than the export's max_seq_length: its prediction reads its "
        "beginning only, as training did",
        "line 5 is longer than the export's max_seq_length: its prediction reads its "
        "beginning only, as training did",
        "3 of 10 questions were cut to the export's max_seq_length, the first line 3"]
    text_input.CutInputs().finish(4)
    assert not capsys.readouterr().err
