"""install.py: what it installs on each kind of machine, with pip replaced by a recorder.

The machines are made up: a dict as detect() returns it, or a fake file system tree
(/dev, /sys/bus/pci/devices) for detect() itself. No test runs pip: where install.py
would, a recorder answers, or --dry_run prints the commands instead.
"""

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import helpers

ROOT = helpers.ROOT


def _load_install():
    spec = importlib.util.spec_from_file_location("install", os.path.join(ROOT, "install.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install = _load_install()


def _machine(**changes):
    machine = {"python": (3, 12), "tpu_chips": [], "tpu_pci": None, "hidden_tpu_note": "",
               "gpus": [], "tensorflow": None, "cpu_builds": [], "jax": None, "libtpu": None,
               "jax_libtpu": None}
    machine.update(changes)
    return machine


@pytest.mark.parametrize("version, minor", [("2.20.0", "2.20"), ("2.21.0", "2.21")])
def test_a_preinstalled_tensorflow_in_range_is_kept_with_tensorflow_text_of_its_version(
        version, minor):
    accelerator, commands, notes = install.plan(
        _machine(tensorflow=("tensorflow", version)), "/content/bert_tf")
    assert accelerator == "cpu"
    # Pinned to itself, so pip cannot upgrade it for tensorflow-text's sake.
    assert commands == [["install", f"tensorflow=={version}", f"tensorflow-text=={minor}.*",
                         "/content/bert_tf"]]
    assert notes == [f"keeping TensorFlow {version}, with tensorflow-text {minor}"]


def test_a_tensorflow_out_of_range_is_replaced_and_the_install_says_why():
    _, commands, notes = install.plan(_machine(tensorflow=("tensorflow", "2.19.0")), "/src")
    assert commands == [["install", "tensorflow>=2.20,<2.22", "tensorflow-text>=2.20,<2.22",
                         "/src"]]
    assert "tensorflow 2.19.0 is outside bert_tf's range (TensorFlow 2.20 to 2.21)" in notes[0]
    assert "restart" in notes[0]


def test_without_tensorflow_pip_takes_the_newest_in_range():
    _, commands, notes = install.plan(_machine(), "/src")
    assert commands[0][1:3] == ["tensorflow>=2.20,<2.22", "tensorflow-text>=2.20,<2.22"]
    assert notes == ["TensorFlow is not installed: pip installs the newest in bert_tf's range"]


def test_a_gpu_runtime_installs_as_the_cpu_does_and_keeps_its_tensorflow():
    accelerator, commands, _ = install.plan(
        _machine(gpus=["nvidia0"], tensorflow=("tensorflow", "2.20.0")), "/src")
    assert accelerator == "gpu"
    assert commands[0][1] == "tensorflow==2.20.0"


def test_a_tpu_gets_the_tpu_build_in_two_steps_with_the_checked_libtpu():
    accelerator, commands, notes = install.plan(_machine(tpu_chips=["/dev/vfio/0"]), ROOT)
    assert accelerator == "tpu"
    assert commands == [
        ["install", "-r", os.path.join(ROOT, "requirements-tpu.txt"), "libtpu==0.0.14"],
        ["install", "--no-deps", "tensorflow-text==2.20.1", "-e", ROOT]]
    assert notes == []


def test_a_tpu_install_removes_a_preinstalled_cpu_tensorflow_first_and_says_so():
    machine = _machine(tpu_chips=["/dev/vfio/0"], tensorflow=("tensorflow", "2.21.0"),
                       cpu_builds=[("tensorflow", "2.21.0")])
    _, commands, notes = install.plan(machine, ROOT)
    assert commands[0] == ["uninstall", "-y", "tensorflow"]
    assert commands[1][:2] == ["install", "-r"]
    assert notes == ["removing tensorflow 2.21.0 first: a CPU build of TensorFlow and "
                     "tensorflow-tpu would share the tensorflow/ folder, each overwriting the "
                     "other's files"]


def test_the_tpu_install_says_that_it_takes_the_tpu_from_jax():
    machine = _machine(tpu_chips=["/dev/vfio/0"], jax="0.8.2", libtpu="0.0.42",
                       jax_libtpu="0.0.42")
    _, commands, notes = install.plan(machine, ROOT)
    assert commands[0][-1] == "libtpu==0.0.14"
    assert ("this replaces the libtpu of jax 0.8.2 (0.0.42; jax pins 0.0.42) with libtpu "
            "0.0.14") in notes[0]
    assert "JAX in this Python can then no longer use the TPU" in notes[0]


def test_a_libtpu_that_both_jax_and_tensorflow_load_is_kept():
    machine = _machine(tpu_chips=["/dev/accel0"], jax="0.7.1", libtpu="0.0.21",
                       jax_libtpu="0.0.21")
    _, commands, notes = install.plan(machine, ROOT)
    assert commands[0][-1] == "libtpu==0.0.21"
    assert notes[0].startswith("keeping libtpu 0.0.21, which jax 0.7.1 pins")


def test_python_3_14_gets_one_line_before_any_pip_call(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(install.subprocess, "run", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(install.sys, "version_info", (3, 14, 0, "final", 0))
    assert install.main([ROOT]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert error == ["install.py: error: Python 3.14 has no wheels of TensorFlow 2.20-2.21, "
                     "tensorflow-tpu 2.20 or tensorflow-text: use Python 3.10 to 3.13 (on "
                     "Colab, a runtime of another version)"]
    assert calls == []


def _pci_device(root, address, vendor, device):
    folder = root / "sys" / "bus" / "pci" / "devices" / address
    folder.mkdir(parents=True)
    (folder / "vendor").write_text(vendor + "\n")
    (folder / "device").write_text(device + "\n")


def test_a_tpu_on_the_pci_bus_is_found_by_its_vendor_and_device_ids(tmp_path):
    _pci_device(tmp_path, "0000:00:04.0", "0x1ae0", "0x0063")  # a TPU v5e
    # Google's virtual network card: Google's vendor id, but no TPU.
    _pci_device(tmp_path, "0000:00:05.0", "0x1ae0", "0x0042")
    _pci_device(tmp_path, "0000:00:01.0", "0x8086", "0x7110")
    (tmp_path / "dev" / "vfio").mkdir(parents=True)
    (tmp_path / "dev" / "vfio" / "0").touch()
    machine = install.detect(str(tmp_path))
    assert machine["tpu_pci"] == [("0000:00:04.0", "v5e")]
    assert machine["tpu_chips"] == [str(tmp_path / "dev" / "vfio" / "0")]
    assert install.choose_accelerator(machine) == "tpu"


def test_a_tpu_whose_device_files_are_hidden_stops_the_install_with_one_line(tmp_path):
    _pci_device(tmp_path, "0000:00:04.0", "0x1ae0", "0x0063")
    (tmp_path / "dev").mkdir()
    machine = install.detect(str(tmp_path))
    with pytest.raises(install.InstallError) as error:
        install.plan(machine, ROOT)
    assert str(error.value).startswith(
        "the PCI bus shows 1 TPU chip(s) (0000:00:04.0 (v5e)), but their device files "
        "(/dev/accel*, /dev/vfio/*) are not visible here")
    assert "--accelerator=tpu" in str(error.value)
    # The user decides.
    assert install.plan(machine, ROOT, "tpu")[0] == "tpu"
    assert install.plan(machine, ROOT, "cpu")[0] == "cpu"


def test_device_files_that_the_pci_bus_does_not_back_are_not_taken_for_a_tpu(tmp_path):
    _pci_device(tmp_path, "0000:00:05.0", "0x1ae0", "0x0042")
    (tmp_path / "dev" / "vfio").mkdir(parents=True)
    (tmp_path / "dev" / "vfio" / "0").touch()  # VFIO serves other devices too
    with pytest.raises(install.InstallError, match="shows no TPU"):
        install.choose_accelerator(install.detect(str(tmp_path)))


def test_without_a_readable_pci_bus_the_device_files_decide(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "accel0").touch()
    (tmp_path / "dev" / "nvidia0").touch()
    machine = install.detect(str(tmp_path))
    assert machine["tpu_pci"] is None
    assert install.choose_accelerator(machine) == "tpu"
    (tmp_path / "dev" / "accel0").unlink()
    assert install.choose_accelerator(install.detect(str(tmp_path))) == "gpu"


def _fake_pip(monkeypatch, stdouts, installed):
    """subprocess.run for pip's dry runs: writes the report, prints the next of stdouts."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        report = command[command.index("--report") + 1]
        with open(report, "w", encoding="utf-8") as f:
            json.dump({"install": [{"metadata": {"name": name, "version": version}}
                                   for name, version in installed.items()]}, f)
        stdout = stdouts[len(calls) - 1] if len(calls) <= len(stdouts) else ""
        return subprocess.CompletedProcess(command, 0, stdout=stdout, stderr="")

    monkeypatch.setattr(install.subprocess, "run", run)
    return calls


def test_check_says_which_wheels_pip_downloaded_to_resolve(monkeypatch):
    # pip's own lines, from an index that serves no separate metadata for the big wheels.
    step_1 = ("Collecting tensorflow-tpu==2.20.0\n"
              "  Downloading tensorflow_tpu-2.20.0-cp312-cp312-manylinux_2_17_x86_64.whl "
              "(263.0 MB)\n"
              "Collecting libtpu==0.0.14\n"
              "  Downloading libtpu-0.0.14-py3-none-manylinux_2_31_x86_64.whl (134.4 MB)\n"
              "Collecting absl-py\n"
              "  Downloading absl_py-2.3.1-py3-none-any.whl.metadata (3.3 kB)\n")
    step_2 = ("Collecting tensorflow-text==2.20.1\n"
              "  Downloading tensorflow_text-2.20.1-cp312-cp312-manylinux2014_x86_64.whl "
              "(62.5 MB)\n")
    installed = {"tensorflow-tpu": "2.20.0", "libtpu": "0.0.14", "tensorflow-text": "2.20.1",
                 "bert_tf": "0.1.0"}
    calls = _fake_pip(monkeypatch, [step_1, step_2], installed)
    accelerator, commands, _ = install.plan(_machine(tpu_chips=["/dev/vfio/0"]), ROOT)
    summary, downloads = install.check(accelerator, commands, _machine())
    assert all("--dry-run" in call and "--ignore-installed" in call for call in calls)
    assert summary.startswith("tpu: packages to install: 4, among them tensorflow-tpu 2.20.0, "
                              "libtpu 0.0.14, tensorflow-text 2.20.1, bert-tf 0.1.0")
    assert downloads == (
        "to resolve, pip downloaded 3 whole wheels (460 MB; the largest: tensorflow_tpu-2.20.0 "
        "(263.0 MB), libtpu-0.0.14 (134.4 MB), tensorflow_text-2.20.1 (62.5 MB)) and 1 "
        "metadata files: this index does not serve wheels' metadata on its own (PEP 658), so "
        "pip reads it from the wheels")


def test_check_refuses_a_tpu_install_that_brings_the_cpu_tensorflow(monkeypatch):
    _fake_pip(monkeypatch, [], {"tensorflow-tpu": "2.20.0", "tensorflow": "2.21.0",
                                "libtpu": "0.0.14", "tensorflow-text": "2.21.1",
                                "bert-tf": "0.1.0"})
    accelerator, commands, _ = install.plan(_machine(tpu_chips=["/dev/vfio/0"]), ROOT)
    with pytest.raises(install.InstallError) as error:
        install.check(accelerator, commands, _machine())
    assert "the CPU build tensorflow 2.21.0 would be installed" in str(error.value)
    assert "tensorflow-text 2.21.1, not 2.20.1" in str(error.value)


def test_check_of_a_tpu_install_over_a_cpu_tensorflow_resolves_after_removing_it(monkeypatch):
    calls = _fake_pip(monkeypatch, [], {"tensorflow-tpu": "2.20.0", "libtpu": "0.0.14",
                                        "tensorflow-text": "2.20.1", "bert-tf": "0.1.0"})
    machine = _machine(tpu_chips=["/dev/vfio/0"], tensorflow=("tensorflow", "2.21.0"),
                       cpu_builds=[("tensorflow", "2.21.0")])
    accelerator, commands, _ = install.plan(machine, ROOT)
    summary, _ = install.check(accelerator, commands, machine)
    # pip resolves the two installs only; the removal is planned, not resolved.
    assert len(calls) == 2
    assert summary.endswith("; removes the installed tensorflow first")
    # A plan that would leave the CPU build is refused.
    with pytest.raises(install.InstallError,
                       match="the CPU build tensorflow 2.21.0 installed here would stay beside "
                             "tensorflow-tpu"):
        install.check(accelerator, commands[1:], machine)


def test_check_refuses_an_install_that_would_replace_a_kept_tensorflow(monkeypatch):
    _fake_pip(monkeypatch, [], {"tensorflow": "2.21.0", "bert-tf": "0.1.0"})
    machine = _machine(tensorflow=("tensorflow", "2.20.0"))
    accelerator, commands, _ = install.plan(machine, ROOT)
    with pytest.raises(install.InstallError, match="TensorFlow 2.20.0 would be replaced by 2.21.0"):
        install.check(accelerator, commands, machine)


def test_dry_run_prints_the_pins_for_this_pythons_tensorflow(tmp_path):
    version = importlib.metadata.version("tensorflow")
    minor = ".".join(version.split(".")[:2])
    (tmp_path / "dev").mkdir()
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "install.py"), "--dry_run",
         f"--system_root={tmp_path}"], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert f"install.py: keeping TensorFlow {version}, with tensorflow-text {minor}" in lines
    assert lines[-1].endswith(
        f"-m pip install tensorflow=={version} tensorflow-text=={minor}.* {ROOT}")


def test_install_tpu_sh_is_install_py_for_a_tpu(tmp_path):
    result = subprocess.run(
        ["bash", os.path.join(ROOT, "install_tpu.sh"), "--dry_run", f"--system_root={tmp_path}"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHON": sys.executable})
    assert "installing bert_tf for TPU" in result.stdout
    assert "requirements-tpu.txt libtpu==0.0.14" in result.stdout
    assert "--no-deps tensorflow-text==2.20.1 -e" in result.stdout
