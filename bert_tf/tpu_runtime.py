"""Sets up TensorFlow's TPU runtime before TensorFlow is imported.

TensorFlow reads its TPU settings from environment variables once, when it
is imported, so they must be set before the first `import tensorflow`.
`bert_tf/__init__.py` calls configure(), and every script imports bert_tf
before TensorFlow; a notebook imports bert_tf first for the same reason.
This module imports no TensorFlow.

What it does depends on the machine:

- **A TPU chip is attached** (a Cloud TPU VM, a Colab TPU runtime: the chips
  are /dev/accel* or /dev/vfio/<n>) and the TPU build of TensorFlow
  (`tensorflow-tpu`) is installed with `libtpu`: it turns on PJRT, the
  runtime that TensorFlow uses on v5e and newer TPUs, by setting
  PJRT_DEVICE=TPU, NEXT_PLUGGABLE_DEVICE_USE_C_API=true and
  TF_PLUGGABLE_DEVICE_LIBRARY_PATH=<libtpu.so>.
- **tensorflow-tpu is installed, but no chip is attached**: it sets
  TPU_LOAD_LIBRARY=0. Otherwise libtpu, loaded at import, asks the cloud's
  instance-metadata server what TPU this is and, with no such server, keeps
  asking for minutes (measured: still at it after 90 s). With
  TPU_LOAD_LIBRARY=0 the import takes seconds and TensorFlow uses the CPU or
  the GPUs.
- **Anything else** (the ordinary `tensorflow` build): nothing is set.

A variable that is already set is never changed, so a user's own settings
win. status() says what was done, in words, for the strategy's log line and
its errors.
"""

import glob
import importlib.metadata
import importlib.util
import os
import sys

# The TPU build of TensorFlow, and the library that drives the chips.
TPU_BUILD = "tensorflow-tpu"
INSTALL_HINT = ("install the TPU build with bash install_tpu.sh (tensorflow-tpu 2.20 and "
                "its libtpu; README.md, section TPU)")

_status = None


def tpu_chips():
    """The TPU chips this machine has, as device files.

    Returns:
      A sorted list of paths: /dev/accel<n> (TPU v4, v5p) and /dev/vfio/<n>
      (v5e, v6e); empty on a machine without TPUs.
    """
    return sorted(glob.glob("/dev/accel[0-9]*") + glob.glob("/dev/vfio/[0-9]*"))


def tpu_build_version():
    """The installed tensorflow-tpu version, or None when it is not installed."""
    try:
        return importlib.metadata.version(TPU_BUILD)
    except importlib.metadata.PackageNotFoundError:
        return None


def libtpu_path():
    """The path of libtpu.so from the libtpu package, or None without it.

    Found without importing libtpu, whose import sets TPU_LIBRARY_PATH.
    """
    spec = importlib.util.find_spec("libtpu")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "libtpu.so")
    return path if os.path.exists(path) else None


def configure(environ=None):
    """Sets the TPU runtime's environment for this machine; see the module docstring.

    Args:
      environ: The environment to change; os.environ by default.

    Returns:
      A sentence saying what was found and done (also what status() returns
      afterwards, when environ is os.environ).
    """
    global _status
    env = os.environ if environ is None else environ
    version, chips, library = tpu_build_version(), tpu_chips(), libtpu_path()
    if version is None:
        status = f"{TPU_BUILD} is not installed"
    elif not chips:
        env.setdefault("TPU_LOAD_LIBRARY", "0")
        status = (f"{TPU_BUILD} {version} is installed, but this machine has no TPU chip "
                  f"(no /dev/accel*, /dev/vfio/*): TPU_LOAD_LIBRARY={env['TPU_LOAD_LIBRARY']}")
    elif library is None:
        status = (f"{TPU_BUILD} {version} is installed and {len(chips)} TPU chip(s) are "
                  "attached, but libtpu is not installed")
    elif "tensorflow" in sys.modules and "PJRT_DEVICE" not in env:
        status = ("TensorFlow was imported before bert_tf, too early to set up PJRT for the "
                  f"{len(chips)} TPU chip(s); import bert_tf first")
    else:
        env.setdefault("PJRT_DEVICE", "TPU")
        env.setdefault("NEXT_PLUGGABLE_DEVICE_USE_C_API", "true")
        env.setdefault("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", library)
        status = (f"{len(chips)} TPU chip(s) attached ({', '.join(chips)}); PJRT set up with "
                  f"{env['TF_PLUGGABLE_DEVICE_LIBRARY_PATH']}")
        if "jax" in sys.modules:
            status += "; JAX is loaded in this process too, which breaks TensorFlow's TPU"
    if environ is None:
        _status = status
    return status


def pjrt_ready():
    """Whether configure() set up PJRT for attached TPU chips."""
    return os.environ.get("PJRT_DEVICE") == "TPU" and bool(tpu_chips())


def status():
    """What configure() found and did, in one sentence (configures if not yet done)."""
    return _status or configure()
