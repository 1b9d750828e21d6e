"""Tests for bert_tf.io_utils: outputs appear under their name only when complete."""

import os
import pathlib

import pytest
import tensorflow as tf

from bert_tf import io_utils


class Killed(Exception):
    """Stands for a run that dies while writing."""


def listing(folder):
    return sorted(os.listdir(folder))


def test_atomic_path_renames_a_complete_file(tmp_path):
    path = tmp_path / "out.tfrecord"
    path.write_bytes(b"old")
    with io_utils.atomic_path(str(path)) as temporary:
        # A hidden name beside the final one; nothing there yet.
        assert os.path.dirname(temporary) == str(tmp_path)
        assert os.path.basename(temporary).startswith(".out.tfrecord.")
        assert temporary.endswith(".tmp")
        assert not os.path.exists(temporary)
        # A writer that opens its file by name.
        with tf.io.TFRecordWriter(temporary) as writer:
            writer.write(b"new record")
        assert path.read_bytes() == b"old"
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(path))] == [b"new record"]
    assert listing(tmp_path) == ["out.tfrecord"]


def test_atomic_path_failure_leaves_the_old_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(Killed), io_utils.atomic_path(str(path)) as temporary:
        with open(temporary, "wb") as f:
            f.write(b"partial")
        raise Killed
    assert path.read_bytes() == b"old"
    assert listing(tmp_path) == ["out.bin"]
    # Failing before anything was written is fine too; there was no file.
    with pytest.raises(Killed), io_utils.atomic_path(str(tmp_path / "new.bin")):
        raise Killed
    assert listing(tmp_path) == ["out.bin"]


def test_atomic_path_temporary_names_are_unique(tmp_path):
    path = str(tmp_path / "out.bin")
    with io_utils.atomic_path(path) as one, io_utils.atomic_path(path) as two:
        assert one != two
        for temporary in (one, two):
            with open(temporary, "wb") as f:
                f.write(b"x")
    assert listing(tmp_path) == ["out.bin"]


@pytest.mark.parametrize("mode, old, new", [("w", "old\n", "new\n"),
                                             ("wb", b"old", b"new")])
def test_atomic_write(tmp_path, mode, old, new):
    path = tmp_path / "results.txt"
    read = path.read_bytes if mode == "wb" else path.read_text
    with io_utils.atomic_write(str(path), mode) as f:
        f.write(old)
        assert not path.exists()
    assert read() == old
    with pytest.raises(Killed), io_utils.atomic_write(str(path), mode) as f:
        f.write(new)
        raise Killed
    assert read() == old
    with io_utils.atomic_write(str(path), mode) as f:
        f.write(new)
    assert read() == new
    assert listing(tmp_path) == ["results.txt"]


def test_write_results_sorts_keys(tmp_path):
    path = tmp_path / "eval_results.txt"
    io_utils.write_results(str(path), {"loss": 0.5, "accuracy": 0.75})
    assert path.read_text() == "accuracy = 0.75\nloss = 0.5\n"


def test_atomic_files_move_in_at_the_end_the_named_ones_last(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "kept.txt").write_text("the user's")
    moved = []
    replace = os.replace
    monkeypatch.setattr(os, "replace",
                        lambda a, b: (moved.append(os.path.basename(b)), replace(a, b)))
    with io_utils.atomic_files(str(folder), last=("model.index",)) as staging:
        for name in ("model.index", "model.data", "config.json"):
            pathlib.Path(staging, name).write_text(name)
        assert sorted(os.listdir(folder)) == ["kept.txt"]
    assert moved == ["config.json", "model.data", "model.index"]
    assert sorted(os.listdir(folder)) == ["config.json", "kept.txt", "model.data", "model.index"]
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_atomic_files_that_fail_leave_no_folder_they_made(tmp_path):
    with pytest.raises(OSError, match="disk full"), \
            io_utils.atomic_files(str(tmp_path / "new" / "deeper")) as staging:
        pathlib.Path(staging, "half.data").write_text("half")
        raise OSError("disk full")
    assert os.listdir(tmp_path) == []
