"""Tests for bert_tf.runtime.startup_log: a script's own lines come before no TensorFlow
notes."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_tf.model.config import BertConfig
from bert_tf.model.heads import ClassifierHead
from bert_tf.model.modeling import BertModel
from bert_tf.runtime import startup_log
from bert_tf.serving import export
from bert_tf.tasks import ClassificationTask
from bert_tf.text import tokenization
from tests import helpers

ROOT = helpers.ROOT
VOCAB = os.path.join(ROOT, "tests", "fixtures", "pretraining_vocab.txt")

# What TensorFlow 2.21 prints on import on a CPU-only machine, with a user's warning
# and error among it.
IMPORT_OUTPUT = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795937734.338031    6709 port.cc:153] oneDNN custom operations are on.",
    "I0000 00:00:1795937734.338884    6709 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "2026-11-29 07:35:37.359101: I tensorflow/core/util/port.cc:153] oneDNN custom operations.",
    "W0000 00:00:1795937735.845702    6709 some_op.cc:12] a real warning",
    "E0000 00:00:1795937737.359101    6709 cuda_platform.cc:52] failed call to cuInit: INTERNAL: "
    "CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "E0000 00:00:1795937737.359102    6709 other.cc:1] a real error",
    "/path/module.py:3: DeprecationWarning: something",
]


def _kept(lines):
    dropped = startup_log.startup_notes(lines)
    return [line for i, line in enumerate(lines) if i not in dropped]


def test_the_notes_go_and_warnings_and_errors_stay():
    assert _kept(IMPORT_OUTPUT) == IMPORT_OUTPUT[4:5] + IMPORT_OUTPUT[6:]


def test_a_failed_cuinit_stays_where_a_cuda_driver_was_found():
    # Without "Could not find cuda drivers", a GPU machine's cuInit failure is news.
    lines = [line for line in IMPORT_OUTPUT if "cudart_stub" not in line]
    assert any("failed call to cuInit" in line for line in _kept(lines))


def test_a_users_log_level_turns_it_off(monkeypatch):
    monkeypatch.setenv(startup_log.VARIABLE, "0")
    assert startup_log.configure() is False


@pytest.fixture(scope="module")
def sentence_export(tmp_path_factory):
    """A tiny single-sentence classifier's raw-text export."""
    tf.keras.utils.set_random_seed(1)
    config = BertConfig(vocab_size=len(tokenization.load_vocab(VOCAB)), hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=16, type_vocab_size=2)
    export_dir = str(tmp_path_factory.mktemp("export") / "model")
    return export.export_task(export_dir, ClassificationTask(2, False), BertModel(config),
                              {"classifier": ClassifierHead(config, 2)}, VOCAB, True, 16)


def test_predict_text_prints_no_tensorflow_notes_or_warnings(sentence_export):
    # As a user runs it: TF_CPP_MIN_LOG_LEVEL unset.
    env = {key: value for key, value in os.environ.items() if key != startup_log.VARIABLE}
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "predict_text.py"),
         f"--export_dir={sentence_export}", "A gripping film.", "Dull and long."],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(result.stdout.splitlines()) == 2
    noise = [line for line in result.stderr.splitlines()
             if line.startswith(("WARNING", "I0000", "W0000", "E0000"))
             or "custom gradients" in line]
    assert noise == []
