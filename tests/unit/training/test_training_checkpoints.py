"""Tests for bert_tf.training.training_checkpoints: what a training checkpoint holds, and
resuming."""

import numpy as np
import tensorflow as tf

from bert_tf.model.modeling import BertModel
from bert_tf.training import training_checkpoints
from bert_tf.training.training_checkpoints import TrainingCheckpoints

keras = tf.keras


def _state(config, output_dir, seed):
    """A model, one head and a built optimizer, with seed-dependent weights."""
    keras.utils.set_random_seed(seed)
    encoder = BertModel(config)
    encoder({"input_ids": tf.ones([1, 4], tf.int32)}, training=False)
    head = keras.Sequential([keras.layers.Dense(2)])
    head.build([None, config.hidden_size])
    optimizer = keras.optimizers.Adam()
    variables = encoder.trainable_variables + head.trainable_variables
    optimizer.build(variables)
    checkpoints = TrainingCheckpoints(tf.distribute.get_strategy(), str(output_dir), 2,
                                      encoder, {"head": head}, optimizer)
    return encoder, head, optimizer, checkpoints


def test_a_new_folder_has_nothing_to_resume(tiny_config, tmp_path):
    *_, checkpoints = _state(tiny_config, tmp_path, seed=0)
    assert checkpoints.latest() is None
    assert checkpoints.restore_latest() is None
    assert "before the first checkpoint" in checkpoints.resume_note(7)


def test_a_saved_run_resumes_its_weights_step_and_dropout_state(tiny_config, tmp_path):
    encoder, head, optimizer, checkpoints = _state(tiny_config, tmp_path, seed=0)
    optimizer.iterations.assign(3)
    checkpoints.open()
    checkpoints.save(3)
    latest = checkpoints.latest()
    assert latest.endswith("ckpt-3")
    assert training_checkpoints.holds(latest, training_checkpoints.DROPOUT_SEEDS)
    assert not training_checkpoints.holds(latest, training_checkpoints.TRAIN_INPUT)
    assert "is at step 3" in checkpoints.resume_note(5)

    other_encoder, other_head, other_optimizer, resumed = _state(tiny_config, tmp_path, seed=1)
    assert not np.allclose(other_head.weights[0].numpy(), head.weights[0].numpy())
    assert resumed.restore_latest() == latest
    assert int(other_optimizer.iterations.numpy()) == 3
    for saved, restored in zip(encoder.weights + head.weights,
                               other_encoder.weights + other_head.weights, strict=True):
        np.testing.assert_array_equal(saved.numpy(), restored.numpy())


def test_a_checkpoint_without_dropout_state_still_resumes(tiny_config, tmp_path):
    # Saved without open(): as checkpoints written before dropout's state was kept.
    _, head, _, checkpoints = _state(tiny_config, tmp_path, seed=0)
    checkpoints.save(1)
    assert not training_checkpoints.holds(checkpoints.latest(),
                                          training_checkpoints.DROPOUT_SEEDS)
    _, other_head, _, resumed = _state(tiny_config, tmp_path, seed=1)
    assert resumed.restore_latest() is not None
    np.testing.assert_array_equal(other_head.weights[0].numpy(), head.weights[0].numpy())


def test_the_input_position_is_saved_and_restored(tiny_config, tmp_path):
    *_, checkpoints = _state(tiny_config, tmp_path, seed=0)
    strategy = tf.distribute.get_strategy()
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(10)))
    iterator = checkpoints.track_input(iterator)
    assert [int(next(iterator)) for _ in range(4)] == [0, 1, 2, 3]
    checkpoints.open()
    checkpoints.save(4)

    *_, resumed = _state(tiny_config, tmp_path, seed=1)
    fresh = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(10)))
    assert int(next(resumed.track_input(fresh))) == 4
