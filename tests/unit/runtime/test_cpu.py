"""Tests for bert_tf.runtime.cpu: what --mixed_precision=auto and --jit_compile=auto make
of a CPU."""

import pytest
import tensorflow as tf

from bert_tf.runtime import cpu, xla

# /proc/cpuinfo's vendor and bfloat16 flags (the lines that matter) of four CPU kinds.
INTEL_AMX = "vendor_id\t: GenuineIntel\nflags\t\t: fpu avx512f avx512_bf16 amx_bf16 amx_tile\n"
INTEL_AVX512_BF16 = "vendor_id\t: GenuineIntel\nflags\t\t: fpu avx512f avx512_bf16 avx512_fp16\n"
AMD_AVX512_BF16 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu avx512f avx512_bf16\n"
NO_BFLOAT16 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu avx2 avx512f\n"


@pytest.mark.parametrize("cpuinfo, bfloat16, xla_in_float32", [
    (INTEL_AMX, True, False),           # AMX tiles; oneDNN's float32 fine-tunes faster
    (AMD_AVX512_BF16, True, False),     # bfloat16 matmuls 1.9-2.0x; oneDNN's float32 too
    (INTEL_AVX512_BF16, False, False),  # 0.55x; oneDNN's float32 kernels outrun XLA
    (NO_BFLOAT16, False, True),         # emulated
])
def test_each_cpu_kind_gets_its_measured_choices(cpuinfo, bfloat16, xla_in_float32):
    kind = cpu.cpu_kind(cpuinfo)
    assert kind.bfloat16_outruns_float32 is bfloat16
    assert kind.float32_prefers_xla is xla_in_float32


@pytest.mark.parametrize("override, bfloat16", [("1", True), ("0", False)])
def test_the_variable_overrides_the_detection(monkeypatch, override, bfloat16):
    monkeypatch.setenv(cpu.CPU_BFLOAT16_ENV, override)
    # "1" is taken for AMX's kind, "0" for a CPU without bfloat16 units.
    assert cpu.this_cpu() == cpu.CpuKind(bfloat16, not bfloat16,
                                         f"{cpu.CPU_BFLOAT16_ENV}={override}")


def test_auto_xla_in_float32_follows_the_cpu_kind(monkeypatch):
    strategy = tf.distribute.get_strategy()
    monkeypatch.setattr(cpu, "this_cpu", lambda: cpu.cpu_kind(INTEL_AVX512_BF16))
    assert xla.resolve_jit_compile(None, strategy, "float32") is False
    assert xla.resolve_jit_compile(True, strategy, "float32") is True
    monkeypatch.setattr(cpu, "this_cpu", lambda: cpu.cpu_kind(INTEL_AMX))
    assert xla.resolve_jit_compile(None, strategy, "float32") is False
    monkeypatch.setattr(cpu, "this_cpu", lambda: cpu.cpu_kind(NO_BFLOAT16))
    assert xla.resolve_jit_compile(None, strategy, "float32") is True
