"""Installs bert_tf into this Python for the machine it runs on, keeping what the machine has.

    python install.py [SOURCE]            install bert_tf from SOURCE, a checkout (default:
                                          the one this file is in)
    python install.py --check [SOURCE]    ask the package index what the install would put
                                          in, check it, and say what pip downloaded to find
                                          out; install nothing (CI runs it)
    python install.py --dry_run [SOURCE]  print the pip commands; run nothing
    --accelerator=tpu|gpu|cpu             instead of detecting the machine

The Colab notebook's install cell runs it, and install_tpu.sh is
`install.py --accelerator=tpu`. It needs only Python's standard library.

Python 3.10 to 3.13: TensorFlow 2.20 and 2.21, tensorflow-tpu 2.20 and
tensorflow-text publish wheels for those only, so any other Python gets one
line before pip runs.

TPU (a chip's device file, /dev/accel* or /dev/vfio/<n>). TensorFlow's TPU
build is its own distribution, tensorflow-tpu (newest: 2.20.0), and both
bert_tf and tensorflow-text require the distribution "tensorflow", which pip
would install beside it (both provide the module tensorflow). A CPU build
already installed (Colab's TPU runtimes may have one) is removed first, and
the install says so: left in place, it and tensorflow-tpu would share the
tensorflow/ folder, each overwriting the other's files. Then two steps:
  1. tensorflow-tpu, a libtpu it loads, and bert_tf's other requirements
     (requirements-tpu.txt);
  2. tensorflow-text 2.20.1 and bert_tf, with --no-deps.
libtpu: tensorflow-tpu 2.20.0 accepts any 0.0.x from 0.0.14 on, but 0.0.52 no
longer exports 151 of the 212 functions that TensorFlow 2.20 loads from it
("import tensorflow" aborts); 0.0.14 to 0.0.30 export all of them. So it
installs 0.0.14, unless the machine's JAX pins a libtpu in that range, which
it keeps: then JAX and TensorFlow load the same one. Otherwise it replaces the
machine's libtpu and says so first: JAX in that Python can then no longer use
the TPU.

GPU or CPU. A pip install of bert_tf. A preinstalled TensorFlow 2.20 or 2.21
is kept: pip gets it pinned to its own version, and tensorflow-text to the
same minor version (tensorflow-text 2.21 requires TensorFlow 2.21, so without
the pin pip would upgrade a 2.20). A TensorFlow outside that range is replaced
by the newest in range, and it says why.

The PCI bus is read too (bert_tf/runtime/tpu_runtime.py): where it and the device
files disagree about a TPU, the install stops with one line instead of
guessing, and --accelerator decides.
"""

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SUPPORTED_PYTHONS = ((3, 10), (3, 13))
# The TensorFlow minor versions bert_tf supports (setup.py's range).
TENSORFLOW_MINORS = ("2.20", "2.21")
TENSORFLOW_RANGE = "tensorflow>=2.20,<2.22"
TENSORFLOW_TEXT_RANGE = "tensorflow-text>=2.20,<2.22"
TPU_TENSORFLOW_TEXT = "tensorflow-text==2.20.1"
# The distributions of TensorFlow's CPU and GPU builds, which provide the same tensorflow/
# folder as tensorflow-tpu.
CPU_BUILDS = ("tensorflow", "tensorflow-cpu", "tf-nightly")
# The libtpu versions checked to export every function TensorFlow 2.20 loads.
LIBTPU_DEFAULT = "0.0.14"
LIBTPU_CHECKED = ((0, 0, 14), (0, 0, 30))


class InstallError(Exception):
    """A reason not to install, for one line."""


def load_tpu_runtime(checkout):
    """bert_tf/runtime/tpu_runtime.py of the checkout, loaded on its own.

    bert_tf is not installed yet.

    Args:
      checkout: The bert_tf checkout.

    Returns:
      The module (it imports only the standard library).
    """
    path = os.path.join(checkout, "bert_tf", "runtime", "tpu_runtime.py")
    spec = importlib.util.spec_from_file_location("bert_tf_install_tpu_runtime", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def installed_version(name):
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def jax_libtpu_pin():
    """The libtpu version that the installed JAX's "tpu" extra pins, or None."""
    try:
        requirements = importlib.metadata.requires("jax") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for requirement in requirements:
        match = re.match(r"libtpu\s*==\s*([0-9.]+)", requirement)
        if match:
            return match.group(1)
    return None


def version_tuple(version):
    """(0, 0, 14) for "0.0.14"; the leading numbers of a version only."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def detect(root="/", checkout=HERE):
    """What install decisions depend on, read from this machine and this Python.

    Args:
      root: The file system's root; tests pass a fake tree.
      checkout: The bert_tf checkout whose tpu_runtime.py reads the devices.

    Returns:
      A dict: python ((major, minor)), tpu_chips, tpu_pci (None where the PCI bus
      is not readable), hidden_tpu_note (tpu_runtime.hidden_tpu_note's), gpus
      (NVIDIA device files), tensorflow ((distribution, version) or None),
      cpu_builds ([(distribution, version)] of the CPU_BUILDS installed), jax
      and libtpu (versions or None), jax_libtpu (the libtpu version the
      installed JAX pins, or None).
    """
    tpu_runtime = load_tpu_runtime(checkout)
    chips, pci = tpu_runtime.tpu_chips(root), tpu_runtime.tpu_pci_devices(root)
    tensorflow = next(((name, installed_version(name))
                       for name in ("tensorflow-tpu", "tensorflow")
                       if installed_version(name)), None)
    dev = os.path.join(root, "dev")
    gpus = sorted(name for name in (os.listdir(dev) if os.path.isdir(dev) else [])
                  if re.fullmatch(r"nvidia\d+", name))
    return {"python": sys.version_info[:2], "tpu_chips": chips, "tpu_pci": pci,
            "hidden_tpu_note": tpu_runtime.hidden_tpu_note(chips, pci), "gpus": gpus,
            "tensorflow": tensorflow,
            "cpu_builds": [(name, installed_version(name)) for name in CPU_BUILDS
                           if installed_version(name)],
            "jax": installed_version("jax"),
            "libtpu": installed_version("libtpu"), "jax_libtpu": jax_libtpu_pin()}


def check_python(python):
    """Raises InstallError for a Python without TensorFlow wheels."""
    low, high = SUPPORTED_PYTHONS
    if not low <= tuple(python) <= high:
        raise InstallError(
            f"Python {python[0]}.{python[1]} has no wheels of TensorFlow 2.20-2.21, "
            f"tensorflow-tpu 2.20 or tensorflow-text: use Python {low[0]}.{low[1]} to "
            f"{high[0]}.{high[1]} (on Colab, a runtime of another version)")


def choose_accelerator(machine, requested=None):
    """"tpu", "gpu" or "cpu": requested, or what the machine's devices say.

    Args:
      machine: detect()'s dict.
      requested: --accelerator, or None to detect.

    Raises:
      InstallError: when the device files and the PCI bus disagree about a TPU.
    """
    if requested:
        return requested
    chips, pci = machine["tpu_chips"], machine["tpu_pci"]
    if not chips and pci:
        raise InstallError(f"{machine['hidden_tpu_note']}. To install for the TPU anyway, "
                           "pass --accelerator=tpu (the notebook: INSTALL_ACCELERATOR = "
                           "\"tpu\"); for the CPU, --accelerator=cpu")
    if chips and pci == []:
        raise InstallError(
            f"device files of a TPU chip are here ({', '.join(chips)}), but the PCI bus, "
            "which is readable, shows no TPU (Google's vendor id with a TPU device id): "
            "they may belong to another device. Pass --accelerator=tpu (the notebook: "
            "INSTALL_ACCELERATOR = \"tpu\") or --accelerator=cpu")
    if chips:
        return "tpu"
    return "gpu" if machine["gpus"] else "cpu"


def libtpu_choice(machine):
    """The libtpu version to install, and a sentence for the user when JAX is affected.

    Args:
      machine: detect()'s dict.

    Returns:
      (version, note): note is "" when JAX is not installed.
    """
    jax, pinned = machine["jax"], machine["jax_libtpu"]
    if not jax:
        return LIBTPU_DEFAULT, ""
    low, high = LIBTPU_CHECKED
    if pinned and low <= version_tuple(pinned) <= high:
        return pinned, (f"keeping libtpu {pinned}, which jax {jax} pins and which exports every "
                        "function TensorFlow 2.20 loads (checked for 0.0.14 to 0.0.30): JAX "
                        "and TensorFlow both use it")
    had = machine["libtpu"] or "none installed"
    return LIBTPU_DEFAULT, (
        f"this replaces the libtpu of jax {jax} ({had}; jax pins {pinned or 'no version'}) "
        f"with libtpu {LIBTPU_DEFAULT}, because TensorFlow 2.20 needs one that exports every "
        "function it loads (checked for 0.0.14 to 0.0.30). JAX in this Python can then no "
        "longer use the TPU; to give it back, pip install the libtpu that jax pins "
        "(TensorFlow then cannot use the TPU)")


def cpu_build_removal(machine):
    """The pip uninstall of the CPU builds a TPU install must remove first, and why.

    Args:
      machine: detect()'s dict.

    Returns:
      (commands, note): no command and note "" when none is installed.
    """
    builds = machine["cpu_builds"]
    if not builds:
        return [], ""
    names = [name for name, _ in builds]
    return [["uninstall", "-y", *names]], (
        "removing " + ", ".join(f"{name} {version}" for name, version in builds)
        + " first: a CPU build of TensorFlow and tensorflow-tpu would share the tensorflow/ "
        "folder, each overwriting the other's files")


def source_target(source, editable):
    """pip's arguments for bert_tf itself: -e for a checkout when editable."""
    return ["-e", source] if editable and os.path.isdir(source) else [source]


def tpu_commands(source, libtpu):
    """The two pip installs of a TPU machine (see the module docstring)."""
    requirements = os.path.join(HERE, "requirements-tpu.txt")
    # An editable install of a checkout, as README's commands use: the runtime restarts
    # after the TPU install anyway, which activates it.
    return [["install", "-r", requirements, f"libtpu=={libtpu}"],
            ["install", "--no-deps", TPU_TENSORFLOW_TEXT, *source_target(source, True)]]


def other_commands(source, tensorflow):
    """The pip install of a GPU or CPU machine, and a sentence saying what it does to TensorFlow.

    Args:
      source: What bert_tf installs from.
      tensorflow: (distribution, version) of the installed TensorFlow, or None.

    Returns:
      (commands, note).
    """
    # Not editable: an editable install works only after a restart (its import hook is
    # set up when Python starts), and keeping TensorFlow should need none.
    target = source_target(source, False)
    if tensorflow and tensorflow[0] == "tensorflow":
        minor = ".".join(tensorflow[1].split(".")[:2])
        if minor in TENSORFLOW_MINORS:
            return ([["install", f"tensorflow=={tensorflow[1]}", f"tensorflow-text=={minor}.*",
                      *target]],
                    f"keeping TensorFlow {tensorflow[1]}, with tensorflow-text {minor}")
    if tensorflow:
        note = (f"{tensorflow[0]} {tensorflow[1]} is outside bert_tf's range (TensorFlow "
                f"{TENSORFLOW_MINORS[0]} to {TENSORFLOW_MINORS[-1]}): pip replaces it with the "
                "newest in range; restart Python afterwards")
    else:
        note = "TensorFlow is not installed: pip installs the newest in bert_tf's range"
    return [["install", TENSORFLOW_RANGE, TENSORFLOW_TEXT_RANGE, *target]], note


def plan(machine, source, accelerator=None):
    """What to install on this machine.

    Args:
      machine: detect()'s dict.
      source: What bert_tf installs from.
      accelerator: --accelerator, or None to detect.

    Returns:
      (accelerator, pip argument lists, notes for the user).

    Raises:
      InstallError: an unsupported Python, or devices that disagree.
    """
    check_python(machine["python"])
    accelerator = choose_accelerator(machine, accelerator)
    if accelerator == "tpu":
        removal, removal_note = cpu_build_removal(machine)
        libtpu, note = libtpu_choice(machine)
        notes = [line for line in (removal_note, note) if line]
        return accelerator, removal + tpu_commands(source, libtpu), notes
    commands, note = other_commands(source, machine["tensorflow"])
    return accelerator, commands, [note]


def pip(arguments):
    """python -m pip ARGUMENTS, with this Python."""
    return [sys.executable, "-m", "pip", *arguments]


DOWNLOAD = re.compile(r"Downloading (\S+) \(([0-9.]+ [kMG]?B)\)")


def resolve(arguments, ignore_installed):
    """pip's dry run of one install: what it would install, and what it downloaded to know.

    Args:
      arguments: One of plan()'s pip argument lists.
      ignore_installed: Resolve as on an empty Python (a TPU machine has no TensorFlow).

    Returns:
      ({distribution: version} to be installed, [(file, size)] downloaded).
    """
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        command = pip([arguments[0], "--dry-run", "--progress-bar=off", "--report", report,
                       *(["--ignore-installed"] if ignore_installed else []), *arguments[1:]])
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode:
            raise InstallError(f"pip could not resolve {' '.join(arguments)}: "
                               f"{result.stderr.strip().splitlines()[-1:]}")
        with open(report, encoding="utf-8") as f:
            install = json.load(f)["install"]
    versions = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
                for item in install}
    return versions, DOWNLOAD.findall(result.stdout)


def megabytes(size):
    """12.5 for "12.5 MB" (pip's sizes: B, kB, MB, GB)."""
    number, unit = size.split()
    return float(number) * {"B": 1e-6, "kB": 1e-3, "MB": 1.0, "GB": 1e3}[unit]


def downloads_sentence(downloads):
    """What pip downloaded to resolve, in one sentence.

    Args:
      downloads: resolve()'s (file, size) pairs.
    """
    wheels = [(name, size) for name, size in downloads if not name.endswith(".metadata")]
    metadata = len(downloads) - len(wheels)
    if not wheels:
        return f"to resolve, pip downloaded {metadata} metadata files and no wheel"
    largest = sorted(wheels, key=lambda wheel: -megabytes(wheel[1]))[:3]
    total = sum(megabytes(size) for _, size in wheels)
    return (f"to resolve, pip downloaded {len(wheels)} whole wheels ({total:.0f} MB; the "
            "largest: " + ", ".join(f"{'-'.join(name.split('-')[:2])} ({size})"
                                     for name, size in largest)
            + f") and {metadata} metadata files: this index does not serve wheels' metadata "
            "on its own (PEP 658), so pip reads it from the wheels")


def check(accelerator, commands, machine):
    """install.py --check: resolve each command, check the result, and say what was read.

    Returns:
      The report's lines.

    Raises:
      InstallError: when the install would not be the one intended.
    """
    installed, downloads, removed = {}, [], []
    for arguments in commands:
        if arguments[0] == "uninstall":
            removed += arguments[2:]
            continue
        versions, fetched = resolve(arguments, ignore_installed=accelerator == "tpu")
        installed.update(versions)
        downloads += fetched
    problems = []
    if accelerator == "tpu":
        problems += [f"the CPU build {name} {installed[name]} would be installed"
                     for name in ("tensorflow", "tensorflow-cpu", "tf-nightly")
                     if name in installed]
        expected = {"tensorflow-tpu": "2.20.0", "tensorflow-text": "2.20.1"}
        problems += [f"{name} {installed.get(name, 'missing')}, not {version}"
                     for name, version in expected.items() if installed.get(name) != version]
        if "libtpu" not in installed:
            problems.append("libtpu is missing")
        problems += [f"the CPU build {name} {version} installed here would stay beside "
                     "tensorflow-tpu" for name, version in machine["cpu_builds"]
                     if name not in removed]
    kept = None
    if accelerator != "tpu" and commands[0][1].startswith("tensorflow=="):
        kept = machine["tensorflow"][1]
        if "tensorflow" in installed:
            problems.append(f"TensorFlow {kept} would be replaced by {installed['tensorflow']}")
    if "bert-tf" not in installed:
        problems.append("bert_tf itself is missing")
    if problems:
        raise InstallError("; ".join(problems))
    shown = [name for name in ("tensorflow-tpu", "libtpu", "tensorflow", "tensorflow-text",
                               "bert-tf") if name in installed]
    summary = (f"{accelerator}: packages to install: {len(installed)}, among them "
               + ", ".join(f"{name} {installed[name]}" for name in shown))
    if kept:
        summary += f"; TensorFlow {kept} kept"
    if removed:
        summary += f"; removes the installed {', '.join(removed)} first"
    return [summary, downloads_sentence(downloads)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", default=HERE,
                        help="a bert_tf checkout (default: this one) or a pip requirement")
    parser.add_argument("--accelerator", choices=["tpu", "gpu", "cpu"], default=None,
                        help="install for this instead of detecting the machine")
    parser.add_argument("--check", action="store_true",
                        help="resolve against the package index and check; install nothing")
    parser.add_argument("--dry_run", action="store_true", help="print the pip commands only")
    parser.add_argument("--system_root", default="/",
                        help="where /dev and /sys are read (tests pass a fake tree)")
    args = parser.parse_args(argv)
    try:
        machine = detect(args.system_root)
        accelerator, commands, notes = plan(machine, args.source, args.accelerator)
        if args.check:
            for line in check(accelerator, commands, machine):
                print(f"install.py --check: {line}")
            return 0
        print(f"install.py: installing bert_tf for {accelerator.upper()}")
        for note in notes:
            print(f"install.py: {note}")
        for arguments in commands:
            print("+ " + " ".join(pip(arguments)), flush=True)
            if not args.dry_run:
                subprocess.run(pip(arguments), check=True)
    except InstallError as error:
        print(f"install.py: error: {error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"install.py: error: pip exited with status {error.returncode}: see its messages "
              "above", file=sys.stderr)
        return 1
    if accelerator == "tpu" and not args.dry_run:
        print("install.py: done; restart Python before importing TensorFlow (Colab: Runtime > "
              "Restart session)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
