"""Tests for bert_tf/training/run_dir.py: one run per output_dir, its settings, no debris."""

import json
import os
import subprocess
import sys

import pytest

from bert_tf.data import fingerprints
from bert_tf.training import run_dir

HOLDER = """
import sys
from bert_tf.training import run_dir
run_dir.lock(sys.argv[1])
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_second_process_is_refused_naming_the_first(tmp_path):
    folder = str(tmp_path / "out")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, folder], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(run_dir.RunDirError,
                           match=f"in use by another run \\(process {holder.pid}\\)"):
            run_dir.lock(folder)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    # The holder has exited: its lock went with it.
    run_dir.lock(folder)
    run_dir.lock(folder)  # this process holds it already


def test_settings_are_recorded_then_checked_when_resuming(tmp_path):
    folder = str(tmp_path)
    run_dir.check_settings(folder, "training", {"learning_rate": 5e-5, "steps": 10}, False)
    run_dir.check_settings(folder, "model", {"hidden": 32}, False)
    run_dir.check_settings(folder, "training", {"learning_rate": 5e-5, "steps": 10}, True)
    with pytest.raises(run_dir.RunDirError, match=(
            r"other training settings \(learning_rate: 5e-05 there, 1e-05 now\): give "
            "another --output_dir")):
        run_dir.check_settings(folder, "training", {"learning_rate": 1e-5, "steps": 10}, True)
    # A run that starts afresh (no checkpoint to resume) replaces the record.
    run_dir.check_settings(folder, "training", {"learning_rate": 1e-5, "steps": 10}, False)
    with open(os.path.join(folder, run_dir.SETTINGS_FILE), encoding="utf-8") as f:
        assert json.load(f) == {"model": {"hidden": 32},
                                "training": {"learning_rate": 1e-5, "steps": 10}}


def test_interrupted_checkpoint_writes_are_removed(tmp_path):
    (tmp_path / "ckpt-7_temp" / "part-00000-of-00001").mkdir(parents=True)
    (tmp_path / "ckpt-7.index").write_text("kept")
    # A write of the best model cut short, beside the complete best before it.
    (tmp_path / ".best.0a1b.tmp").mkdir()
    (tmp_path / "best").mkdir()
    run_dir.remove_debris(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["best", "ckpt-7.index"]


def test_a_fingerprint_follows_the_content_not_the_place(tmp_path):
    size = 3 * fingerprints.FINGERPRINT_EDGE_BYTES
    content = bytes(range(256)) * (size // 256)
    (tmp_path / "a").write_bytes(content)
    (tmp_path / "b").write_bytes(content)
    fingerprint = fingerprints.file_fingerprint(str(tmp_path / "a"))
    assert fingerprint.startswith(f"{size} bytes, ends ")
    assert fingerprints.file_fingerprint(str(tmp_path / "b")) == fingerprint
    # A change at either end, or a change of size, shows.
    for changed in (b"x" + content[1:], content[:-1] + b"x", content + b"\n"):
        (tmp_path / "b").write_bytes(changed)
        assert fingerprints.file_fingerprint(str(tmp_path / "b")) != fingerprint
    assert fingerprints.fingerprints([str(tmp_path / "a")]) == {str(tmp_path / "a"): fingerprint}


def test_a_longer_training_may_resume_and_a_shorter_one_may_not(tmp_path):
    folder = str(tmp_path)
    grow = ("num_train_steps", "num_warmup_steps")
    run_dir.check_settings(folder, "training", {"num_train_steps": 10, "num_warmup_steps": 1,
                                                "learning_rate": 1e-3}, False, grow)
    run_dir.check_settings(folder, "training", {"num_train_steps": 20, "num_warmup_steps": 2,
                                                "learning_rate": 1e-3}, True, grow)
    # The record follows the longer run: back to 10 steps is shorter than it.
    with pytest.raises(run_dir.RunDirError, match="num_train_steps: 20 there, 10 now"):
        run_dir.check_settings(folder, "training", {"num_train_steps": 10,
                                                    "num_warmup_steps": 2,
                                                    "learning_rate": 1e-3}, True, grow)
    with pytest.raises(run_dir.RunDirError, match="learning_rate: 0.001 there, 0.002 now"):
        run_dir.check_settings(folder, "training", {"num_train_steps": 30,
                                                    "num_warmup_steps": 2,
                                                    "learning_rate": 2e-3}, True, grow)


def test_a_difference_in_flags_alone_names_the_flags_to_give(tmp_path):
    folder = str(tmp_path)
    flags = ("problem_type", "labels")
    run_dir.check_settings(folder, "task", {"problem_type": "single_label", "labels": ["a", "b"],
                                            "vocab": "12 bytes"}, False, flags=flags)
    with pytest.raises(run_dir.RunDirError) as error:
        run_dir.check_settings(folder, "task", {"problem_type": "multi_label",
                                                "labels": ["a", "b"], "vocab": "12 bytes"},
                               True, flags=flags)
    assert str(error.value) == (f"--problem_type=multi_label: {folder} holds a run with "
                                "--problem_type=single_label; give that, or another "
                                "--output_dir")
    with pytest.raises(run_dir.RunDirError, match=(
            f"--labels=b,a, --problem_type=multi_label: {folder} holds a run with --labels=a,b, "
            "--problem_type=single_label; give those")):
        run_dir.check_settings(folder, "task", {"problem_type": "multi_label",
                                                "labels": ["b", "a"], "vocab": "12 bytes"},
                               True, flags=flags)
    # A key no flag sets is named after the flags; alone, in the general form.
    with pytest.raises(run_dir.RunDirError, match=(
            "--problem_type=multi_label: .* holds a run with --problem_type=single_label "
            r"\(and vocab: '12 bytes' there, '13 bytes' now\); give that")):
        run_dir.check_settings(folder, "task", {"problem_type": "multi_label",
                                                "labels": ["a", "b"], "vocab": "13 bytes"},
                               True, flags=flags)
    with pytest.raises(run_dir.RunDirError, match=(
            r"other task settings \(vocab: '12 bytes' there, '13 bytes' now\): give another "
            "--output_dir")):
        run_dir.check_settings(folder, "task", {"problem_type": "single_label",
                                                "labels": ["a", "b"], "vocab": "13 bytes"},
                               True, flags=flags)
