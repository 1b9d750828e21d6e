"""Tests for bert_tf.runtime.tpu_runtime: the environment TensorFlow's TPU build reads at import.

The machine here has no TPU and no tensorflow-tpu, so the three cases are made by
replacing what tpu_runtime looks at (the installed version, the chips, libtpu) and
passing a dict as the environment.
"""

import subprocess
import sys

import pytest

from bert_tf.runtime import tpu_runtime
from tests import helpers

ROOT = helpers.ROOT
PJRT = {"PJRT_DEVICE", "NEXT_PLUGGABLE_DEVICE_USE_C_API", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH"}


@pytest.fixture
def machine(monkeypatch):
    """Sets what tpu_runtime finds: machine(version, chips, library), before TensorFlow."""
    # As in a fresh process: tests in this one imported TensorFlow long ago.
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)

    def make(version=None, chips=(), library=None, pci=None):
        monkeypatch.setattr(tpu_runtime, "tpu_build_version", lambda: version)
        monkeypatch.setattr(tpu_runtime, "tpu_chips", lambda: list(chips))
        monkeypatch.setattr(tpu_runtime, "tpu_pci_devices", lambda: pci)
        monkeypatch.setattr(tpu_runtime, "libtpu_path", lambda: library)
    return make


def test_the_ordinary_build_sets_nothing(machine):
    machine()
    env = {}
    assert tpu_runtime.configure(env) == "tensorflow-tpu is not installed"
    assert env == {}


def test_tpu_build_without_a_chip_skips_libtpu_and_its_metadata_queries(machine):
    machine(version="2.20.0")
    env = {}
    status = tpu_runtime.configure(env)
    assert env == {"TPU_LOAD_LIBRARY": "0"}
    assert "no TPU chip" in status and "TPU_LOAD_LIBRARY=0" in status


def test_a_tpu_whose_device_files_are_hidden_is_named_not_denied(machine):
    machine(version="2.20.0", pci=[("0000:00:04.0", "v5e")])
    env = {}
    status = tpu_runtime.configure(env)
    assert env == {"TPU_LOAD_LIBRARY": "0"}
    assert status.startswith("tensorflow-tpu 2.20.0 is installed; the PCI bus shows 1 TPU "
                             "chip(s) (0000:00:04.0 (v5e)), but their device files")
    assert "no TPU chip" not in status


def test_a_v5e_vm_gets_pjrt(machine):
    machine(version="2.20.0", chips=["/dev/vfio/0"], library="/site/libtpu/libtpu.so")
    env = {}
    status = tpu_runtime.configure(env)
    assert env == {"PJRT_DEVICE": "TPU", "NEXT_PLUGGABLE_DEVICE_USE_C_API": "true",
                   "TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/site/libtpu/libtpu.so"}
    assert "1 TPU chip(s) attached (/dev/vfio/0); PJRT set up" in status


def test_the_users_own_settings_win(machine):
    machine(version="2.20.0", chips=["/dev/accel0"], library="/site/libtpu/libtpu.so")
    env = {"TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/mine/libtpu.so"}
    tpu_runtime.configure(env)
    assert env["TF_PLUGGABLE_DEVICE_LIBRARY_PATH"] == "/mine/libtpu.so"
    assert env["PJRT_DEVICE"] == "TPU"


def test_a_chip_without_libtpu_is_said(machine):
    machine(version="2.20.0", chips=["/dev/accel0"])
    env = {}
    assert "libtpu is not installed" in tpu_runtime.configure(env)
    assert not PJRT & set(env)


def test_jax_in_the_same_process_is_warned_about(machine, monkeypatch):
    machine(version="2.20.0", chips=["/dev/vfio/0"], library="/site/libtpu/libtpu.so")
    monkeypatch.setitem(sys.modules, "jax", object())
    assert "JAX is loaded in this process too" in tpu_runtime.configure({})


def test_importing_bert_tf_configures_before_tensorflow_loads():
    """bert_tf/__init__ runs configure() without importing TensorFlow itself."""
    code = ("import sys, bert_tf.runtime.tpu_runtime as r; "
            "print('tensorflow' in sys.modules, r.status())")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False tensorflow-tpu is not installed"


def test_tensorflow_imported_first_is_too_late_and_said(machine, monkeypatch):
    machine(version="2.20.0", chips=["/dev/vfio/0"], library="/site/libtpu/libtpu.so")
    monkeypatch.setitem(sys.modules, "tensorflow", object())
    env = {}
    assert "TensorFlow was imported before bert_tf" in tpu_runtime.configure(env)
    assert env == {}


def test_no_chip_here():
    assert tpu_runtime.tpu_chips() == []
