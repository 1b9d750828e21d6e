"""Parity with Hugging Face transformers on the real all-MiniLM-L6-v2 weights.

The reference outputs come from tools/make_parity_fixture.py (transformers
BertModel, PyTorch, float32); this test needs neither torch nor transformers.
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoints
from bert_tf.model.heads import head_types
from bert_tf.model.modeling import BertModel
from bert_tf.text import tokenization
from tests import helpers

FIXTURE = os.path.join(helpers.FIXTURES, "parity_minilm.npz")
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(FIXTURE))


def _encode(folder_or_prefix, reference):
    config = checkpoints.find_config(folder_or_prefix)
    model = BertModel(config)
    report = checkpoints.load_weights(folder_or_prefix, model)
    inputs = {k: reference[k] for k in ("input_ids", "input_mask", "segment_ids")}
    return model(inputs, training=False), report


def _assert_matches(outputs, reference):
    mask = reference["input_mask"].astype(bool)
    sequence = outputs["sequence_output"].numpy()[mask]
    assert sequence.shape == reference["sequence_output_real"].shape
    seq_diff = np.abs(sequence - reference["sequence_output_real"]).max()
    pooled_diff = np.abs(outputs["pooled_output"].numpy() - reference["pooled_output"]).max()
    assert seq_diff <= TOLERANCE, f"sequence_output max abs diff {seq_diff:.2e}"
    assert pooled_diff <= TOLERANCE, f"pooled_output max abs diff {pooled_diff:.2e}"


def test_fixture_covers_pairs_and_padding(reference):
    assert reference["input_ids"].shape[0] >= 20
    assert reference["segment_ids"].max() == 1, "no sentence pairs"
    lengths = reference["input_mask"].sum(axis=1)
    assert len(set(lengths.tolist())) > 10 and lengths.min() < reference["input_mask"].shape[1]


def test_hf_weights_match_transformers(minilm_folder, reference):
    outputs, report = _encode(minilm_folder, reference)
    assert report.format == "hf"
    assert report.initialized == [] and "embeddings.position_ids" in report.skipped
    # The HF config says "gelu", which is the exact erf form.
    assert checkpoints.find_config(minilm_folder).hidden_act == "gelu_exact"
    _assert_matches(outputs, reference)


def test_google_format_round_trip_matches(minilm_folder, reference, tmp_path):
    outputs, _ = _encode(minilm_folder, reference)
    prefix = str(tmp_path / "bert_model.ckpt")
    checkpoints.convert(minilm_folder, prefix, "google", head_types())
    names = {name for name, _ in tf.train.list_variables(prefix)}
    assert "bert/encoder/layer_0/attention/self/query/kernel" in names
    assert "bert/pooler/dense/kernel" in names
    reloaded, report = _encode(prefix, reference)
    assert report.format == "google"
    np.testing.assert_array_equal(
        reloaded["sequence_output"].numpy(), outputs["sequence_output"].numpy())
    _assert_matches(reloaded, reference)


def test_our_tokenizer_gives_the_fixture_ids(minilm_folder, reference):
    """The fixture's ids come from transformers' BertTokenizer: ours must agree."""
    tokenizer = tokenization.FullTokenizer(os.path.join(minilm_folder, "vocab.txt"))
    texts = json.loads(str(reference["texts"]))
    length = reference["input_ids"].shape[1]
    for i, (a, b) in enumerate(zip(texts["first"], texts["second"], strict=True)):
        ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(a))
        ids_b = None if b is None else tokenizer.convert_tokens_to_ids(tokenizer.tokenize(b))
        packed = tokenization.pack_ids(ids_a, ids_b, max_seq_length=length,
                                       cls_id=tokenizer.vocab["[CLS]"],
                                       sep_id=tokenizer.vocab["[SEP]"])
        for key in ("input_ids", "input_mask", "segment_ids"):
            assert packed[key] == reference[key][i].tolist(), (key, a, b)
