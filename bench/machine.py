"""Benchmark JSON lines: what each records about where and how it ran, and their output."""

import datetime
import importlib.metadata
import json
import os
import platform
import sys


def describe():
    """The machine, the libraries, the date and the command line, for a JSON line.

    Returns:
      A dict: cpu (model name), cpu_bfloat16 (its bfloat16 flags from
      /proc/cpuinfo, e.g. ["amx_bf16", "avx512_bf16"]; [] for none), cores,
      load_avg (the 1, 5 and 15 minute load averages when the line is made:
      the machine may be shared, and a loaded one gives slower figures),
      tensorflow (version, or None), date (UTC, ISO) and command.
    """
    cpu, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    cpu = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
    except OSError:
        pass
    try:
        tensorflow = importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        tensorflow = None
    return {"cpu": cpu, "cpu_bfloat16": sorted(flags & {"amx_bf16", "avx512_bf16"}),
            "cores": os.cpu_count(),
            "load_avg": [round(load, 2) for load in os.getloadavg()],
            "tensorflow": tensorflow,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "command": command_line()}


def command_line():
    """The command that runs this process, as typed: `python -m bench.x --flag=...`."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    # Run with -m, sys.argv[0] is the module's file: the module's name is what was typed.
    program = ["-m", spec.name] if spec is not None else sys.argv[:1]
    return " ".join([os.path.basename(sys.executable), *program, *sys.argv[1:]])


def emit(line, out=None):
    """Prints a JSON line, and appends it to the file out when given.

    Args:
      line: A JSON-serializable dict.
      out: A path, or None.
    """
    print(json.dumps(line), flush=True)
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
