"""Tests for bert_tf.runtime.memory: giving the C heap's free pages back to the system."""

import ctypes
import os
import subprocess
import sys
import threading

import pytest

from bert_tf.runtime import memory
from tests import helpers

needs_malloc_trim = pytest.mark.skipif(memory.MALLOC_TRIM is None,
                                       reason="the C library has no malloc_trim (not glibc)")


def resident_mib():
    """This process's resident memory (VmRSS), in MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


@needs_malloc_trim
def test_release_gives_back_freed_memory_below_a_live_block():
    # 128 MiB in 64 KiB blocks, below the size glibc maps on its own, then
    # one more block that stays: the freed blocks lie below it, where glibc
    # does not trim by itself, as XLA's compiler leaves its freed memory.
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    block = 64 * 1024
    blocks = [libc.malloc(block) for _ in range(2048)]
    assert all(blocks)
    for address in blocks:
        ctypes.memset(address, 1, block)  # resident only once touched
    kept = libc.malloc(block)
    for address in blocks:
        libc.free(address)
    try:
        before = resident_mib()
        assert memory.release_free_memory()
        assert before - resident_mib() > 100
    finally:
        libc.free(kept)


def test_releasing_free_memory_releases_while_the_block_runs(monkeypatch):
    calls = []
    released_twice = threading.Event()

    def fake_trim(pad):
        calls.append(pad)
        if len(calls) >= 2:
            released_twice.set()
        return 1

    monkeypatch.setattr(memory, "MALLOC_TRIM", fake_trim)
    with memory.releasing_free_memory(interval_seconds=0.01):
        assert released_twice.wait(10)
    after_exit = len(calls)
    # The thread is joined on exit: no release comes later.
    assert not any(t.name == "release_free_memory" for t in threading.enumerate())
    assert len(calls) == after_exit
    assert set(calls) == {0}


def test_releasing_free_memory_disabled_starts_nothing(monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "MALLOC_TRIM", lambda pad: calls.append(pad))
    threads = threading.active_count()
    with memory.releasing_free_memory(enabled=False, interval_seconds=0.001):
        assert threading.active_count() == threads
    assert calls == []


def test_without_malloc_trim_nothing_is_released(monkeypatch):
    monkeypatch.setattr(memory, "MALLOC_TRIM", None)
    assert not memory.release_free_memory()
    threads = threading.active_count()
    with memory.releasing_free_memory(interval_seconds=0.001):
        assert threading.active_count() == threads


def test_fine_tuning_loads_no_tensorflow_text_until_it_exports():
    """tensorflow_text holds about 116 MB resident: only exports and dynamic masking load it."""
    root = helpers.ROOT
    check = ("import sys; import run_squad; from bert_tf import tasks; "
             "from bert_tf.records import input_pipeline; "
             "assert 'tensorflow_text' not in sys.modules, 'loaded'; "
             "from bert_tf.text import text_ops; assert 'tensorflow_text' in sys.modules")
    subprocess.run([sys.executable, "-c", check], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("mixed_precision, jit_compile, preset, expected", [
    ("float32", None, None, "true"),       # XLA (auto, float32): malloc
    ("float32", False, None, None),        # TensorFlow's kernels: the pool
    ("bfloat16", None, None, None),        # auto: no XLA under bfloat16 on a CPU
    ("float32", None, "false", "false"),   # the user's choice wins
])
def test_prepare_picks_the_allocator_from_the_xla_choice(mixed_precision, jit_compile, preset,
                                                         expected):
    """TensorFlow reads the variable at its first allocation: prepare() sets it before."""
    root = helpers.ROOT
    env = {k: v for k, v in os.environ.items() if k != memory.SYSTEM_ALLOCATOR_ENV}
    if preset is not None:
        env[memory.SYSTEM_ALLOCATOR_ENV] = preset
    check = ("import os; from bert_tf import configs; from bert_tf.runtime import run_setup; "
             f"run_setup.prepare(configs.RuntimeSettings(mixed_precision={mixed_precision!r}, "
             f"jit_compile={jit_compile!r})); "
             f"print(os.environ.get({memory.SYSTEM_ALLOCATOR_ENV!r}))")
    result = subprocess.run([sys.executable, "-c", check], cwd=root, env=env, check=True,
                            capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == str(expected)
