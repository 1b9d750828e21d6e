"""Tests for bert_tf.io_utils: outputs appear under their name only when complete."""

import os
import pathlib

import pytest
import tensorflow as tf

from bert_tf import io_utils, output_folders


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


def test_an_output_file_in_a_missing_folder_makes_it_before_the_work(tmp_path):
    path = tmp_path / "new" / "deeper" / "labels.tsv"
    with io_utils.atomic_write(str(path)) as f:
        # The folder is there before the first line is written.
        assert (tmp_path / "new" / "deeper").is_dir()
        f.write("a\n")
    assert path.read_text() == "a\n"
    # A failed output takes away the folders it made, and no other.
    with pytest.raises(Killed), io_utils.atomic_write(str(tmp_path / "other" / "x.tsv")):
        raise Killed
    assert listing(tmp_path) == ["new"]


def _saved_model_layout(folder, *extra):
    """A folder of a SavedModel's files (and extra ones), as an earlier export left it."""
    for name in ("saved_model.pb", "fingerprint.pb", "variables/variables.index",
                 "variables/variables.data-00000-of-00001", "assets/vocab.txt", *extra):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("earlier")


def test_a_replaced_folder_holds_nothing_but_an_earlier_output(tmp_path):
    layout = output_folders.SAVED_MODEL
    # Missing, empty, an earlier SavedModel: replaced.
    for name in ("missing", "empty", "earlier"):
        folder = tmp_path / name
        if name == "empty":
            folder.mkdir()
        if name == "earlier":
            _saved_model_layout(folder)
        with io_utils.atomic_directory(str(folder), layout) as staging:
            _saved_model_layout(pathlib.Path(staging))
            (pathlib.Path(staging) / "saved_model.pb").write_text("new")
        assert (folder / "saved_model.pb").read_text() == "new"

    # A user's file, beside a SavedModel or inside one: refused before the
    # body runs, with the file named, and the folder left whole.
    for number, extra in enumerate(("notes.txt", "variables/my_weights.npy")):
        folder = tmp_path / f"mine{number}"
        _saved_model_layout(folder, extra)
        with pytest.raises(output_folders.OutputFolderError, match=(
                f"^{folder} holds files that are no part of an earlier SavedModel \\({extra}\\), "
                "which writing the SavedModel there would delete: give a new or empty folder$")):
            with io_utils.atomic_directory(str(folder), layout):
                raise AssertionError("the body runs only for a folder it may replace")
        assert (folder / extra).read_text() == "earlier"
        assert (folder / "saved_model.pb").read_text() == "earlier"
    # A folder of other files alone names the first few.
    other = tmp_path / "photos"
    for number in range(5):
        (other / f"{number}.jpg").parent.mkdir(exist_ok=True)
        (other / f"{number}.jpg").write_text("x")
    with pytest.raises(output_folders.OutputFolderError,
                       match=r"\(0.jpg, 1.jpg, 2.jpg and 2 more\)"):
        output_folders.check_replaceable(str(other), layout)
