"""The notebook's install cell, run in this process with git, install.py and pip recorded.

Each test runs the cell's code as Colab would, with what the cell looks at made up: whether
`import bert_tf` finds the package or only a namespace folder, the installed TensorFlow, and
what each command does. Commands go through subprocess.Popen, which a recorder replaces;
one test lets install.py itself run, with --dry_run.
"""

import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import helpers

ROOT = helpers.ROOT
NOTEBOOK = os.path.join(ROOT, "notebooks", "bert_finetuning_with_cloud_tpus.ipynb")


def _cells():
    with open(NOTEBOOK, encoding="utf-8") as f:
        return json.load(f)["cells"]


def _install_cell():
    sources = ["".join(cell["source"]) for cell in _cells() if cell["cell_type"] == "code"]
    return next(source for source in sources if "def bert_tf_importable" in source)


class Runtime:
    """A made-up Colab runtime: its TensorFlow, its folders and what each command does."""

    def __init__(self, monkeypatch, tmp_path):
        self.tmp_path = tmp_path
        # Where the cell clones to (the notebook's /content/bert_tf), and a checkout the
        # user uploaded.
        self.checkout_dir = str(tmp_path / "clone" / "bert_tf")
        self.uploaded = str(tmp_path / "content" / "bert_tf")
        self.tensorflow = {}  # distribution -> version
        self.commands = []
        self.output = []
        # What a command does: a function of the command, returning its exit status.
        self.behaviour = lambda command: 0
        monkeypatch.setattr(importlib.metadata, "version", self._version)
        self.real_popen = subprocess.Popen
        monkeypatch.setattr(subprocess, "Popen", self._popen)
        # TensorFlow is not imported yet in a fresh runtime; this process did import it.
        monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
        # The cell forgets a namespace bert_tf; the real one is put back afterwards.
        monkeypatch.setitem(sys.modules, "bert_tf", sys.modules.get("bert_tf"))
        self._monkeypatch = monkeypatch

    def _version(self, name):
        if name in self.tensorflow:
            return self.tensorflow[name]
        raise importlib.metadata.PackageNotFoundError(name)

    def _popen(self, command, **kwargs):
        runtime = self

        class Process:
            def __init__(self):
                runtime.commands.append(list(command))
                self.returncode = runtime.behaviour(list(command))
                self.stdout = iter(runtime.output)

            def wait(self):
                return self.returncode

        return Process()

    def only_a_namespace_folder(self):
        """`import bert_tf` finds a folder without __init__.py, as /content/bert_tf is."""
        content = self.tmp_path / "content"
        (content / "bert_tf" / "bert_tf").mkdir(parents=True)
        (content / "bert_tf" / "bert_tf" / "__init__.py").touch()
        spec = importlib.machinery.PathFinder.find_spec("bert_tf", [str(content)])
        assert spec.origin is None  # what Python makes of it: a namespace package
        real_find_spec = importlib.util.find_spec
        self._monkeypatch.setattr(
            importlib.util, "find_spec",
            lambda name, *args: spec if name == "bert_tf" else real_find_spec(name, *args))

    def run_cell(self, source, accelerator=None):
        code = _install_cell().replace('CHECKOUT_DIR = "/content/bert_tf"',
                                       f"CHECKOUT_DIR = {self.checkout_dir!r}")
        assert code != _install_cell()
        exec(code, {"BERT_TF_SOURCE": source, "INSTALL_ACCELERATOR": accelerator,
                    "__name__": "__main__"})


@pytest.fixture
def runtime(monkeypatch, tmp_path):
    return Runtime(monkeypatch, tmp_path)


def test_an_importable_bert_tf_skips_the_install(runtime):
    runtime.run_cell("git+https://github.com/someone/bert_tf.git")
    assert runtime.commands == []


def test_a_namespace_folder_named_bert_tf_does_not_skip_the_install(runtime):
    runtime.only_a_namespace_folder()
    runtime.tensorflow = {"tensorflow": "2.20.0"}
    runtime.run_cell(runtime.uploaded)
    assert runtime.commands == [
        [sys.executable, os.path.join(runtime.uploaded, "install.py"), runtime.uploaded]]


@pytest.mark.parametrize("source, url, ref", [
    ("git+https://github.com/someone/bert_tf.git@0123abcd",
     "https://github.com/someone/bert_tf.git", "0123abcd"),
    ("git+https://github.com/someone/bert_tf.git@v0.1.0",
     "https://github.com/someone/bert_tf.git", "v0.1.0"),
    ("git+ssh://git@github.com/someone/bert_tf.git",
     "ssh://git@github.com/someone/bert_tf.git", ""),
    ("git+ssh://git@github.com/someone/bert_tf.git@main",
     "ssh://git@github.com/someone/bert_tf.git", "main"),
    ("git+https://someone:gh_t0ken@github.com/someone/bert_tf.git@fix/install",
     "https://someone:gh_t0ken@github.com/someone/bert_tf.git", "fix/install"),
])
def test_git_sources_are_cloned_then_checked_out_at_their_ref(runtime, source, url, ref):
    runtime.only_a_namespace_folder()
    runtime.tensorflow = {"tensorflow": "2.21.0"}
    runtime.run_cell(source)
    checkout = runtime.checkout_dir
    expected = [["git", "clone", "-q", url, checkout]]
    if ref:
        expected.append(["git", "-C", checkout, "checkout", "-q", ref])
    expected.append([sys.executable, os.path.join(checkout, "install.py"), checkout])
    assert runtime.commands == expected


def test_a_clone_left_by_a_failed_install_is_reused(runtime):
    # The last run cloned, and its install failed: the folder has the clone, not bert_tf.
    runtime.only_a_namespace_folder()
    os.makedirs(os.path.join(runtime.checkout_dir, ".git"))
    runtime.run_cell("git+https://github.com/someone/bert_tf.git@v0.1.0")
    assert runtime.commands[:2] == [
        ["git", "-C", runtime.checkout_dir, "fetch", "-q", "--tags", "origin"],
        ["git", "-C", runtime.checkout_dir, "checkout", "-q", "v0.1.0"]]


def test_an_unchanged_tensorflow_needs_no_restart(runtime, capsys):
    runtime.only_a_namespace_folder()
    runtime.tensorflow = {"tensorflow": "2.20.0"}
    runtime.run_cell(runtime.uploaded, accelerator="gpu")
    assert runtime.commands[-1][-1] == "--accelerator=gpu"
    assert "TensorFlow unchanged: tensorflow 2.20.0" in capsys.readouterr().out
    # The namespace package an earlier import made is forgotten.
    assert "bert_tf" not in sys.modules


def test_a_changed_tensorflow_restarts_the_runtime_once(runtime, capsys):
    runtime.only_a_namespace_folder()
    runtime.tensorflow = {"tensorflow": "2.19.0"}

    def install_py(command):
        runtime.tensorflow = {"tensorflow": "2.21.0"}
        return 0

    runtime.behaviour = install_py
    with pytest.raises(SystemExit, match="Restart the kernel"):
        runtime.run_cell(runtime.uploaded)
    assert "TensorFlow: tensorflow 2.19.0 -> tensorflow 2.21.0" in capsys.readouterr().out


def test_a_failed_install_stops_the_cell_in_one_line(runtime):
    runtime.only_a_namespace_folder()
    runtime.output = ["install.py: error: Python 3.14 has no wheels of TensorFlow\n"]
    runtime.behaviour = lambda command: 1
    with pytest.raises(SystemExit) as stop:
        runtime.run_cell(runtime.uploaded)
    assert str(stop.value) == "bert_tf was not installed: install.py says why above."


def test_with_tensorflow_in_range_the_cell_keeps_it_through_install_py(runtime, capsys):
    """install.py itself runs (with --dry_run), on this Python's TensorFlow."""
    runtime.only_a_namespace_folder()
    version = importlib.metadata.distribution("tensorflow").version
    runtime.tensorflow = {"tensorflow": version}

    def install_py(command):
        process = runtime.real_popen(
            [*command, "--dry_run", f"--system_root={runtime.tmp_path}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        runtime.output = process.communicate()[0].splitlines(keepends=True)
        return process.returncode

    runtime.behaviour = install_py
    runtime.run_cell(ROOT)
    out = capsys.readouterr().out
    minor = ".".join(version.split(".")[:2])
    assert f"tensorflow=={version} tensorflow-text=={minor}.*" in out
    assert f"TensorFlow unchanged: tensorflow {version}" in out


def test_the_notebook_says_before_the_install_that_a_tpu_install_takes_the_tpu_from_jax():
    markdown = ["".join(cell["source"]) for cell in _cells() if cell["cell_type"] == "markdown"]
    install_section = next(text for text in markdown if text.startswith("## 2. Install"))
    assert "replaces the runtime's `libtpu`" in install_section
    assert "JAX" in install_section and "can then no longer use the TPU" in install_section
    assert "Python 3.10 to 3.13" in install_section
