"""Tests for bert_tf/run_dir.py: one run per output_dir, its settings, no debris."""

import json
import os
import subprocess
import sys

import pytest

from bert_tf import run_dir

HOLDER = """
import sys
from bert_tf import run_dir
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
    run_dir.remove_debris(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["ckpt-7.index"]
