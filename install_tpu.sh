#!/usr/bin/env bash
# Installs bert_tf for a TPU: a Cloud TPU VM, or a Colab TPU runtime (the free v5e-1).
#
#   bash install_tpu.sh [SOURCE]          SOURCE: what to install bert_tf from; default this
#                                         checkout (a path, or "git+https://...")
#   bash install_tpu.sh --check [SOURCE]  resolve only: check that the CPU "tensorflow" is not
#                                         among the packages, and say what pip downloaded to
#                                         find out (CI runs it)
#
# It is install.py for a TPU, whose docstring says why the TPU build installs in two steps
# and which libtpu it takes. PYTHON names the Python to install into (default: python3).
# On Colab, restart the runtime after this (Runtime > Restart session).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "${PYTHON:-python3}" "$here/install.py" --accelerator=tpu "$@"
