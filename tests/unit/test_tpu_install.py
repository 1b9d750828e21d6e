"""requirements-tpu.txt and install.py's TPU pins, kept in step with setup.py.

CI also runs `bash install_tpu.sh --check`, which asks PyPI what the two steps would
install and fails if the CPU tensorflow is among them; these tests need no network.
tests/unit/test_install.py tests install.py's decisions.
"""

import importlib.metadata
import os
import re

from tests import helpers

ROOT = helpers.ROOT


def _name(requirement):
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _tpu_requirements():
    with open(os.path.join(ROOT, "requirements-tpu.txt"), encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and not line.startswith("#")]


def test_every_other_requirement_of_bert_tf_is_in_the_tpu_list():
    base = {_name(r) for r in importlib.metadata.requires("bert_tf") if "extra ==" not in r}
    tpu = {_name(r) for r in _tpu_requirements()}
    # tensorflow and tensorflow-text come in otherwise: the TPU build, and --no-deps.
    assert base - {"tensorflow", "tensorflow-text"} == tpu - {"tensorflow-tpu", "libtpu"}
    assert not {"tensorflow", "tensorflow-text", "tensorflow-cpu"} & tpu


def test_the_tpu_build_and_libtpu_are_pinned_to_the_versions_checked():
    pins = dict(line.split("==") for line in _tpu_requirements() if "==" in line)
    assert pins == {"tensorflow-tpu": "2.20.0"}
    with open(os.path.join(ROOT, "install.py"), encoding="utf-8") as f:
        script = f.read()
    # install.py adds the libtpu, and step 2 takes tensorflow-text at the TPU build's
    # version, without its dependencies; --check expects the same versions.
    assert 'LIBTPU_DEFAULT = "0.0.14"' in script
    assert 'TPU_TENSORFLOW_TEXT = "tensorflow-text==2.20.1"' in script
    assert 'expected = {"tensorflow-tpu": "2.20.0", "tensorflow-text": "2.20.1"}' in script


def test_setup_py_admits_the_tpu_builds_version_and_the_newest():
    requirements = {_name(r): r for r in importlib.metadata.requires("bert_tf")}
    for name in ("tensorflow", "tensorflow-text"):
        assert ">=2.20" in requirements[name] and "<2.22" in requirements[name]
