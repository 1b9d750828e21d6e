"""What a CPU's kind decides: bfloat16 or float32, and XLA or TensorFlow's own kernels.

On CPUs with AVX512-VNNI, AVX512-BF16 or AMX, TensorFlow runs its oneDNN
kernels, and what pays then depends on whose cores they are. Measured with
TensorFlow 2.21 (docs/benchmarks.md, "bfloat16 on a CPU with bfloat16 units",
"On an Intel CPU with AVX512-BF16 and no AMX" and "The pretraining step on an
Intel Xeon with AMX"):

| CPU (/proc/cpuinfo)            | bfloat16 matmuls | float32 fine-tuning step |
|--------------------------------|------------------|--------------------------|
| AMX (amx_bf16): Intel          | 3.8-4.6x float32 | oneDNN's 1.19-1.52x XLA  |
| AVX512-BF16 (avx512_bf16): AMD | 1.9-2.0x float32 | oneDNN's 1.37x XLA       |
| AVX512-BF16 without AMX: Intel | 0.55x float32    | oneDNN's 1.08x XLA       |
| neither                        | emulated, slower | XLA                      |

AMX multiplies bfloat16 tiles; AMD's cores run AVX512-BF16's dot products
at twice float32's rate; Intel's do not. On all three kinds TensorFlow's
float32 kernels in oneDNN outrun XLA's when fine-tuning (AMD: 1.37x and
1.62x, the classifier and tagger; run_pretraining.py 1.11-1.15x. AMX:
1.19x, 1.52x and 1.33x, the classifier, tagger and SQuAD, in 0.58x, 0.92x
and 0.40x XLA's peak memory), so float32 steps are compiled only on CPUs
without bfloat16 units. (With AMX, XLA ran the BERT-Base pretraining step
1.06x to 1.18x as fast as oneDNN's kernels, an earlier measurement: a
pretraining run that wants it passes --jit_compile=true.) A CPU whose
hypervisor hides AMX (amx_bf16 missing from /proc/cpuinfo) is of the third
kind: TensorFlow cannot use the tiles either.
"""

import dataclasses
import os

# Set to "1" or "0" to override the detection: "1" claims bfloat16 units
# that outrun float32 (as AMX's do), "0" a CPU without them.
CPU_BFLOAT16_ENV = "BERT_TF_CPU_BFLOAT16"


@dataclasses.dataclass(frozen=True)
class CpuKind:
    """What --mixed_precision=auto and --jit_compile=auto make of a CPU.

    Attributes:
      bfloat16_outruns_float32: Whether training runs faster in bfloat16.
      float32_prefers_xla: Whether float32 steps run faster compiled with XLA
        than on TensorFlow's own kernels. (bfloat16 steps never do on a CPU:
        XLA's CPU backend leaves the bfloat16 units unused.)
      why: The flags behind both, for the log, e.g. "avx512_bf16 on an AMD CPU".
    """

    bfloat16_outruns_float32: bool
    float32_prefers_xla: bool
    why: str


def cpu_kind(cpuinfo):
    """The kind of a CPU, from its /proc/cpuinfo (see the module docstring).

    Args:
      cpuinfo: The text of /proc/cpuinfo.

    Returns:
      A CpuKind.
    """
    words = set(cpuinfo.split())
    if "amx_bf16" in words:
        return CpuKind(bfloat16_outruns_float32=True, float32_prefers_xla=False, why="amx_bf16")
    if "avx512_bf16" not in words:
        return CpuKind(bfloat16_outruns_float32=False, float32_prefers_xla=True,
                       why="no amx_bf16 or avx512_bf16")
    if "AuthenticAMD" in words:
        return CpuKind(bfloat16_outruns_float32=True, float32_prefers_xla=False,
                       why="avx512_bf16 on an AMD CPU")
    return CpuKind(bfloat16_outruns_float32=False, float32_prefers_xla=False,
                   why="avx512_bf16 on an Intel CPU without AMX")


def this_cpu():
    """The kind of this machine's CPU.

    Reads /proc/cpuinfo (cpu_kind). The environment variable
    BERT_TF_CPU_BFLOAT16 overrides it: "1" claims bfloat16 units that outrun
    float32, "0" a CPU without them (to test either branch anywhere).

    Returns:
      A CpuKind.
    """
    override = os.environ.get(CPU_BFLOAT16_ENV)
    if override is not None:
        # "1": as AMX's (TensorFlow's own float32 kernels); "0": as a CPU without
        # bfloat16 units (XLA).
        return CpuKind(bfloat16_outruns_float32=override == "1",
                       float32_prefers_xla=override != "1", why=f"{CPU_BFLOAT16_ENV}={override}")
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return cpu_kind(f.read())
    except OSError:
        return CpuKind(bfloat16_outruns_float32=False, float32_prefers_xla=True,
                       why="no /proc/cpuinfo")
