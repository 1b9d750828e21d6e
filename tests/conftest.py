"""Shared test fixtures (tiny configs, the real-weights folder) and the slow mark."""

import os
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from bench import minilm
from bert_tf.model.config import BertConfig

# Tests compare numbers across runs and with float32 references: they run in
# float32, with XLA under --jit_compile=auto, on every CPU, also on those where
# auto would pick bfloat16 or TensorFlow's own kernels (bert_tf/runtime/cpu.py;
# subprocesses inherit this). Tests of the automatic choice set it themselves.
os.environ.setdefault("BERT_TF_CPU_BFLOAT16", "0")

# Two logical CPU devices, so that MirroredStrategy tests have two replicas on
# a one-CPU machine. This must run before TensorFlow initializes its devices.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration()] * 2)

E2E = pathlib.Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(items):
    """Marks every test under tests/e2e/ slow: `-m "not slow"` is the quick set.

    A unit test that takes over about 10 s carries the mark itself.
    """
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def tiny_config():
    """A 2-layer, hidden-64 BERT: fast enough for every test."""
    return BertConfig(
        vocab_size=99, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture(scope="session")
def minilm_folder():
    """The real all-MiniLM-L6-v2 weights' folder; a skip where they are not installed.

    Under CI (CI=true) a missing package fails the test instead, so that a
    green CI run always includes the parity checks.
    """
    try:
        return minilm.model_dir()
    except FileNotFoundError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{e} (.ci/run installs it; CI must not skip the parity tests)")
        pytest.skip(str(e))


@pytest.fixture
def tiny_inputs():
    """A padded batch of 3 sequences of length 12 for tiny_config."""
    rng = np.random.default_rng(0)
    lengths = [12, 7, 3]
    input_ids = rng.integers(5, 99, size=(3, 12)).astype(np.int32)
    input_mask = np.array([[1] * n + [0] * (12 - n) for n in lengths], np.int32)
    segment_ids = np.array([[0] * (n // 2) + [1] * (12 - n // 2) for n in lengths], np.int32)
    input_ids *= input_mask
    return {"input_ids": input_ids, "input_mask": input_mask,
            "segment_ids": segment_ids * input_mask}


@pytest.fixture(scope="session")
def two_cpu_strategy():
    """One MirroredStrategy over the two logical CPUs, shared by every test.

    Separate MirroredStrategy objects in one process number their collective
    ops from the same start, so a second one can hit the first one's cached
    collective (and fail with a shape mismatch). Sharing one avoids that.
    """
    devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
    assert len(devices) == 2, "the CPU should be split into two logical devices"
    return tf.distribute.MirroredStrategy(devices)
