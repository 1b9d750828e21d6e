#!/usr/bin/env bash
# Installs bert_tf for a TPU: a Cloud TPU VM, or a Colab TPU runtime (the free v5e-1).
#
#   bash install_tpu.sh [SOURCE]          SOURCE: what to install bert_tf from; default this
#                                         checkout (a path, or "git+https://...")
#   bash install_tpu.sh --check [SOURCE]  resolve only, download no wheel, and check that the
#                                         CPU "tensorflow" is not among the packages (CI runs it)
#
# Why not just "pip install bert_tf": the TPU build of TensorFlow is another distribution,
# tensorflow-tpu (newest: 2.20.0), and both bert_tf and tensorflow-text require the
# distribution "tensorflow", which pip would then install beside it (both provide the
# module tensorflow). So it installs in two steps:
#   1. tensorflow-tpu, the libtpu that it loads, and bert_tf's other requirements
#      (requirements-tpu.txt);
#   2. tensorflow-text and bert_tf themselves with --no-deps.
# libtpu is pinned: tensorflow-tpu 2.20.0 accepts any libtpu 0.0.x from 0.0.14 on, but the
# newest (0.0.52) no longer exports 151 of the 212 functions that TensorFlow 2.20 loads,
# and "import tensorflow" aborts. 0.0.14, the version tensorflow-tpu 2.20.0 names, exports
# all of them. On Colab, restart the runtime after this (Runtime > Restart session).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PYTHON=${PYTHON:-python3}

check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
source=${1:-$here}
# An editable install of a checkout, as the README's commands use; anything else as given.
if [ -d "$source" ]; then
  target=(-e "$source")
else
  target=("$source")
fi

if ! $check; then
  "$PYTHON" -m pip install -r "$here/requirements-tpu.txt"
  "$PYTHON" -m pip install --no-deps "tensorflow-text==2.20.1" "${target[@]}"
  echo "bert_tf installed for TPUs; on Colab, restart the runtime (Runtime > Restart session)."
  exit 0
fi

# --check: what each step would install, as pip's JSON reports, from nothing
# (--ignore-installed), and without downloading the wheels themselves (pip reads their
# metadata alone where the index serves it, as PyPI does).
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
"$PYTHON" -m pip install -q --dry-run --ignore-installed --report "$reports/1.json" \
  -r "$here/requirements-tpu.txt"
"$PYTHON" -m pip install -q --dry-run --ignore-installed --report "$reports/2.json" \
  --no-deps "tensorflow-text==2.20.1" "${target[@]}"
"$PYTHON" - "$reports/1.json" "$reports/2.json" <<'PY'
import json
import sys

installed = {}
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for item in json.load(f)["install"]:
            name = item["metadata"]["name"].lower().replace("_", "-")
            installed[name] = item["metadata"]["version"]
problems = [f"the CPU build tensorflow {installed[name]} would be installed"
            for name in ("tensorflow", "tensorflow-cpu", "tf-nightly") if name in installed]
expected = {"tensorflow-tpu": "2.20.0", "libtpu": "0.0.14", "tensorflow-text": "2.20.1"}
problems += [f"{name} {installed.get(name, 'missing')}, not {version}"
             for name, version in expected.items() if installed.get(name) != version]
if "bert-tf" not in installed:
    problems.append("bert_tf itself is missing")
if problems:
    sys.exit("install_tpu.sh --check: " + "; ".join(problems))
print(f"install_tpu.sh --check: {len(installed)} packages, no CPU tensorflow: "
      + ", ".join(f"{name} {installed[name]}" for name in (*expected, "bert-tf")))
PY
