"""Tests for bert_tf.records.dynamic_masking: dynamic masking in the pretraining input pipeline.

pretraining_original.tfrecord holds 28 records that Google's original
create_pretraining_data.py wrote with max_seq_length=32 and
max_predictions_per_seq=5 from tests/fixtures/pretraining_corpus.txt and
pretraining_vocab.txt (see tests/unit/records/test_input_pipeline.py).
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import pretraining_data
from bert_tf.records import dynamic_masking, input_pipeline
from tests import helpers
from tests.helpers.dataset_helpers import read_all

FIXTURES = helpers.FIXTURES
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
ORIGINAL_RECORDS = os.path.join(FIXTURES, "pretraining_original.tfrecord")
SEQ, PREDICTIONS = 32, 5
CONFIG = dynamic_masking.DynamicMaskingConfig.from_vocab_file(VOCAB)
CLS_ID, SEP_ID = CONFIG.unmaskable_ids


def unmask_numpy(features):
    """The input_ids with masked_lm_ids put back, computed independently of unmask()."""
    ids = features["input_ids"].copy()
    rows, slots = np.nonzero(features["masked_lm_weights"] > 0)
    ids[rows, features["masked_lm_positions"][rows, slots]] = (
        features["masked_lm_ids"][rows, slots])
    return ids


def original_dataset(**kwargs):
    """The original's fixture records through pretraining_dataset, 4 to a batch."""
    return input_pipeline.pretraining_dataset(
        ORIGINAL_RECORDS, batch_size=4, max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS, **kwargs)


@pytest.fixture(scope="module")
def masked_original():
    """The original's records, dynamically masked with seed 1: (element_spec, features).

    Shared because building a masking pipeline traces tensorflow_text's ragged
    ops, which takes a second or two.
    """
    dataset = original_dataset(is_training=False, dynamic_masking=CONFIG, seed=1)
    return dataset.element_spec, read_all(dataset)


def synthetic_batch(rows, seq_length, max_predictions, seed):
    """Unmasked rows [CLS] A [SEP] B [SEP] of random lengths, then padding.

    The tokens are drawn from the replacement ids, so a random replacement
    equals the token it replaces with probability 1 / len(replacement_ids).

    Returns:
      A dict of int32/float32 tensors, with no stored masks.
    """
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, seq_length + 1, rows)
    a_lengths = rng.integers(1, lengths - 3)
    is_real = np.arange(seq_length) < lengths[:, None]
    ids = np.where(is_real, rng.choice(CONFIG.replacement_ids, (rows, seq_length)), 0)
    ids[:, 0] = CLS_ID
    ids[np.arange(rows), a_lengths + 1] = SEP_ID
    ids[np.arange(rows), lengths - 1] = SEP_ID
    segments = is_real & (np.arange(seq_length) > a_lengths[:, None] + 1)
    zeros = np.zeros((rows, max_predictions), np.int32)
    return {
        "input_ids": tf.constant(ids, tf.int32),
        "input_mask": tf.constant(is_real, tf.int32),
        "segment_ids": tf.constant(segments, tf.int32),
        "masked_lm_positions": tf.constant(zeros),
        "masked_lm_ids": tf.constant(zeros),
        "masked_lm_weights": tf.constant(zeros, tf.float32),
        "next_sentence_labels": tf.zeros([rows, 1], tf.int32),
    }


def check_masks(features, tokens, max_predictions):
    """Asserts that features are a valid masking of the unmasked tokens.

    Args:
      features: numpy features after dynamic masking.
      tokens: the unmasked input_ids.
      max_predictions: the width of the masked_lm_* features.

    Returns:
      A bool array shaped like tokens, True at the masked positions.
    """
    lengths = features["input_mask"].sum(axis=1)
    # The original's count: round(15% of the tokens, [CLS] and [SEP]
    # included), at least one, at most max_predictions.
    counts = np.minimum(max_predictions, np.maximum(1, np.round(lengths * 0.15)))
    is_real = np.arange(max_predictions) < counts[:, None]
    np.testing.assert_array_equal(features["masked_lm_weights"], is_real.astype(np.float32))
    positions = features["masked_lm_positions"]
    assert np.all(positions[~is_real] == 0) and np.all(features["masked_lm_ids"][~is_real] == 0)
    assert np.all(np.diff(positions, axis=1)[is_real[:, 1:]] > 0), "not ascending"
    rows = np.nonzero(is_real)[0]
    masked = positions[is_real]
    assert np.all(masked < lengths[rows]), "a padding position"
    assert not np.isin(tokens[rows, masked], CONFIG.unmaskable_ids).any(), "[CLS] or [SEP]"
    np.testing.assert_array_equal(features["masked_lm_ids"][is_real], tokens[rows, masked])

    is_masked = np.zeros(tokens.shape, bool)
    is_masked[rows, masked] = True
    np.testing.assert_array_equal(features["input_ids"][~is_masked], tokens[~is_masked])
    values = features["input_ids"][is_masked]
    is_random = (values != CONFIG.mask_id) & (values != tokens[is_masked])
    assert np.isin(values[is_random], CONFIG.replacement_ids).all(), "a special token"
    return is_masked


def test_the_config_comes_from_the_vocab():
    tokens = [line.strip() for line in open(VOCAB, encoding="utf-8")]
    assert tokens[CONFIG.mask_id] == "[MASK]"
    assert [tokens[i] for i in CONFIG.unmaskable_ids] == ["[CLS]", "[SEP]"]
    assert CONFIG.replacement_ids == tuple(
        i for i, t in enumerate(tokens) if not (t.startswith("[") and t.endswith("]")))


def test_bad_configs_are_errors(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[CLS]\n[SEP]\nhello\n")
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        dynamic_masking.DynamicMaskingConfig.from_vocab_file(str(vocab))
    # An unreadable file is a ValueError too, which run_pretraining reports as a bad flag.
    with pytest.raises(ValueError, match="bad vocab file: .*Cannot read vocab file"):
        dynamic_masking.DynamicMaskingConfig.from_vocab_file(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="masked_lm_prob"):
        dynamic_masking.DynamicMaskingConfig.from_vocab_file(VOCAB, masked_lm_prob=0)


def test_unmask_restores_the_original_tokens():
    stored = read_all(original_dataset(is_training=False))
    tokens = dynamic_masking.unmask({k: tf.constant(v) for k, v in stored.items()}).numpy()
    np.testing.assert_array_equal(tokens, unmask_numpy(stored))
    # The original masked with [MASK] most of the time; none is left.
    assert (stored["input_ids"] == CONFIG.mask_id).any()
    assert not (tokens == CONFIG.mask_id).any()


def test_the_features_keep_the_static_contract(masked_original):
    assert masked_original[0] == original_dataset(is_training=False).element_spec


def test_masks_the_original_records_anew(masked_original):
    stored = read_all(original_dataset(is_training=False))
    features = masked_original[1]
    for name in ("input_mask", "segment_ids", "next_sentence_labels"):
        np.testing.assert_array_equal(features[name], stored[name])
    check_masks(features, unmask_numpy(stored), PREDICTIONS)
    assert not np.array_equal(features["masked_lm_positions"], stored["masked_lm_positions"])


def test_masks_records_that_bert_tf_wrote(tmp_path):
    output = str(tmp_path / "records.tfrecord")
    pretraining_data.create_pretraining_data(
        os.path.join(FIXTURES, "pretraining_corpus.txt"), [output],
        pretraining_data.PretrainingDataConfig(
            vocab_file=VOCAB, max_seq_length=64, max_predictions_per_seq=8))
    read = dict(input_patterns=output, batch_size=8, max_seq_length=64,
                max_predictions_per_seq=8, is_training=False)
    stored = read_all(input_pipeline.pretraining_dataset(**read))
    features = read_all(input_pipeline.pretraining_dataset(
        **read, dynamic_masking=CONFIG, seed=1))
    check_masks(features, unmask_numpy(stored), 8)


def test_mask_statistics_match_the_original():
    seq_length, max_predictions = 64, 8
    batch = synthetic_batch(3000, seq_length, max_predictions, seed=0)
    features = {k: v.numpy() for k, v in dynamic_masking.dynamic_masking(
        batch, CONFIG, max_predictions, tf.constant([0, 1])).items()}
    tokens = batch["input_ids"].numpy()
    is_masked = check_masks(features, tokens, max_predictions)

    # 80% [MASK], 10% random, 10% kept; a random draw keeps the token
    # 1 / len(replacement_ids) of the time.
    values, originals = features["input_ids"][is_masked], tokens[is_masked]
    num = len(values)
    as_random = 0.1 * (1 - 1 / len(CONFIG.replacement_ids))
    shares = {
        "mask": (np.mean(values == CONFIG.mask_id), 0.8),
        "random": (np.mean((values != CONFIG.mask_id) & (values != originals)), as_random),
        "kept": (np.mean(values == originals), 0.1 + 0.1 - as_random),
    }
    for name, (share, expected) in shares.items():
        assert abs(share - expected) < 5 * np.sqrt(expected * (1 - expected) / num), name
    # Random tokens are spread over all the word pieces.
    replacements = values[(values != CONFIG.mask_id) & (values != originals)]
    assert len(np.unique(replacements)) > 0.75 * len(CONFIG.replacement_ids)

    # Every candidate of a row is equally likely: per column, the masked count
    # is within 5 sigma of the sum of the rows' count / candidates.
    is_candidate = (batch["input_mask"].numpy() > 0) & ~np.isin(tokens, CONFIG.unmaskable_ids)
    share = features["masked_lm_weights"].sum(1) / is_candidate.sum(1)
    chance = np.where(is_candidate, share[:, None], 0.0)
    expected, variance = chance.sum(0), (chance * (1 - chance)).sum(0)
    assert np.all(np.abs(is_masked.sum(0) - expected) <= 5 * np.sqrt(variance) + 1)


def test_masks_differ_between_epochs():
    # One file and a one-record buffer: training reads the records in order.
    dataset = original_dataset(is_training=True, shuffle_buffer_size=1,
                               dynamic_masking=CONFIG, seed=1)
    features = read_all(dataset, batches=14)
    tokens = unmask_numpy(features)
    np.testing.assert_array_equal(tokens[:28], tokens[28:])
    differ = np.any(features["masked_lm_positions"][:28] != features["masked_lm_positions"][28:],
                    axis=1)
    assert differ.sum() >= 24


def test_a_seed_makes_the_masks_reproducible(masked_original):
    first = masked_original[1]
    for seed in (1, 2):
        features = read_all(original_dataset(is_training=False, dynamic_masking=CONFIG,
                                             seed=seed))
        same = [np.array_equal(features[name], first[name])
                for name in ("input_ids", "masked_lm_positions")]
        assert same == [seed == 1] * 2


def test_input_pipelines_that_share_a_seed_mask_differently():
    batch = tf.data.Dataset.from_tensors(synthetic_batch(4, SEQ, PREDICTIONS, seed=0))
    pipelines = [dynamic_masking.mask_batches(batch, CONFIG, PREDICTIONS, seed=1, pipeline_id=i)
                 for i in range(2)]
    positions = [next(iter(p))["masked_lm_positions"].numpy() for p in pipelines]
    assert not np.array_equal(*positions)
