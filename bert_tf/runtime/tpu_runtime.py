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

A TPU is also visible on the PCI bus (Google's vendor id and a TPU device id
under /sys/bus/pci/devices), as JAX finds it. TensorFlow reaches a chip only
through its device file, so that file decides; when the PCI bus shows a TPU
whose device files are hidden (a container that does not pass them through),
the status says so instead of reporting a machine without a TPU.

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
# Google's PCI vendor id, and the device ids of its TPU chips, as JAX lists them
# (jax/_src/hardware_utils.py). The vendor id alone is not enough: Google's virtual network
# cards and disks carry it too, on every Google Cloud VM, Colab's CPU runtimes included.
GOOGLE_PCI_VENDOR = "0x1ae0"
TPU_PCI_DEVICES = {"0x0027": "v2 or v3", "0x0056": "plc", "0x005e": "v4", "0x0062": "v5p",
                   "0x0063": "v5e", "0x006f": "v6e", "0x0076": "7x"}
INSTALL_HINT = ("install the TPU build with bash install_tpu.sh (tensorflow-tpu 2.20 and "
                "its libtpu; README.md, section TPU)")

_status = None


def tpu_chips(root="/"):
    """The TPU chips this machine has, as device files.

    Args:
      root: The file system's root; tests pass a fake tree.

    Returns:
      A sorted list of paths: /dev/accel<n> (TPU v4, v5p) and /dev/vfio/<n>
      (v5e, v6e); empty on a machine without TPUs.
    """
    dev = os.path.join(root, "dev")
    return sorted(glob.glob(os.path.join(dev, "accel[0-9]*"))
                  + glob.glob(os.path.join(dev, "vfio", "[0-9]*")))


def tpu_pci_devices(root="/"):
    """The TPU chips on this machine's PCI bus, whether or not their device files are visible.

    Args:
      root: The file system's root; tests pass a fake tree.

    Returns:
      A sorted list of (PCI address, TPU generation) pairs, e.g.
      [("0000:00:04.0", "v5e")], empty without TPUs; None where the PCI bus
      cannot be read (no /sys/bus/pci/devices, as in some containers).
    """
    devices = glob.glob(os.path.join(root, "sys", "bus", "pci", "devices", "*"))
    if not devices:
        return None
    found = []
    for device in devices:
        try:
            with open(os.path.join(device, "vendor"), encoding="ascii") as f:
                vendor = f.read().strip()
            with open(os.path.join(device, "device"), encoding="ascii") as f:
                device_id = f.read().strip()
        except OSError:
            continue
        if vendor == GOOGLE_PCI_VENDOR and device_id in TPU_PCI_DEVICES:
            found.append((os.path.basename(device), TPU_PCI_DEVICES[device_id]))
    return sorted(found)


def hidden_tpu_note(chips, pci_devices):
    """A sentence when the PCI bus shows TPU chips whose device files are not visible, else "".

    Args:
      chips: tpu_chips()'s list.
      pci_devices: tpu_pci_devices()'s list, or None.
    """
    if chips or not pci_devices:
        return ""
    listed = ", ".join(f"{address} ({generation})" for address, generation in pci_devices)
    return (f"the PCI bus shows {len(pci_devices)} TPU chip(s) ({listed}), but their device "
            "files (/dev/accel*, /dev/vfio/*) are not visible here, so TensorFlow cannot reach "
            "them: run where the chips are passed through (e.g. docker run --privileged)")


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
        hidden = hidden_tpu_note(chips, tpu_pci_devices())
        if hidden:
            status = f"{TPU_BUILD} {version} is installed; {hidden}"
        else:
            status = (f"{TPU_BUILD} {version} is installed, but this machine has no TPU chip "
                      "(no /dev/accel*, /dev/vfio/*)")
        status += f": TPU_LOAD_LIBRARY={env['TPU_LOAD_LIBRARY']}"
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
