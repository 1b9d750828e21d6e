"""Tests for bert_tf.training.optimization: schedule, AdamW/LAMB, clipping, accumulation."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.config import BertConfig
from bert_tf.model.heads import ClassifierHead
from bert_tf.model.modeling import BertModel
from bert_tf.training import optimization

keras = tf.keras

BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-6


@pytest.fixture
def bert_config():
    """A 2-layer, hidden-32 BERT without dropout."""
    return BertConfig(
        vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=16, type_vocab_size=2,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def _numpy_adamw(w, grads, lr, weight_decay, bias_correction, trust_ratio=False):
    """The original's AdamWeightDecayOptimizer, optionally with bias correction or LAMB."""
    m = v = np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m = BETA_1 * m + (1 - BETA_1) * g
        v = BETA_2 * v + (1 - BETA_2) * g * g
        if bias_correction:
            update = (m / (1 - BETA_1**t)) / (np.sqrt(v / (1 - BETA_2**t)) + EPSILON)
        else:
            update = m / (np.sqrt(v) + EPSILON)
        update = update + weight_decay * w
        if trust_ratio:
            w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(update)
            update = update * (w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0)
        w = w - lr * update
    return w


def _slot(optimizer, name):
    """The optimizer variable with this name, e.g. "kernel_m"."""
    (found,) = [v for v in optimizer.variables if v.name == name]
    return found.numpy()


def test_the_originals_schedule_decays_from_step_zero():
    schedule = optimization.LinearWarmupLinearDecay(0.1, num_train_steps=100, num_warmup_steps=10,
                                                    decay_after_warmup=False)
    np.testing.assert_allclose(
        [float(schedule(step)) for step in (0, 5, 9, 10, 55, 100, 150)],
        [0.0, 0.05, 0.09,
         0.1 * (1 - 10 / 100),  # end of warmup: the original decays from step 0
         0.1 * (1 - 55 / 100), 0.0, 0.0], rtol=1e-6, atol=1e-9)
    no_warmup = optimization.LinearWarmupLinearDecay(2e-5, num_train_steps=4,
                                                     decay_after_warmup=False)
    np.testing.assert_allclose([float(no_warmup(s)) for s in range(5)],
                               [2e-5, 1.5e-5, 1e-5, 0.5e-5, 0.0], rtol=1e-6)
    with pytest.raises(ValueError, match="num_train_steps"):
        optimization.LinearWarmupLinearDecay(0.1, num_train_steps=0)


def test_the_default_schedule_is_hugging_faces_linear_schedule():
    schedule = optimization.LinearWarmupLinearDecay(0.1, num_train_steps=100, num_warmup_steps=10)
    # The peak at the end of warmup, then a straight line to 0 at step 100:
    # transformers' get_linear_schedule_with_warmup.
    np.testing.assert_allclose(
        [float(schedule(step)) for step in (0, 5, 10, 55, 99, 100, 150)],
        [0.0, 0.05, 0.1, 0.1 * 45 / 90, 0.1 / 90, 0.0, 0.0], rtol=1e-5, atol=1e-9)
    restored = optimization.LinearWarmupLinearDecay(**schedule.get_config())
    assert float(restored(55)) == float(schedule(55))
    # Without warmup, both schedules are one straight line.
    no_warmup = optimization.LinearWarmupLinearDecay(2e-5, num_train_steps=4)
    np.testing.assert_allclose([float(no_warmup(s)) for s in range(5)],
                               [2e-5, 1.5e-5, 1e-5, 0.5e-5, 0.0], rtol=1e-6)
    # A warmup as long as the run (a short trial of run_pretraining.py's
    # default 10,000 warmup steps) only warms up.
    whole_run = optimization.LinearWarmupLinearDecay(0.1, num_train_steps=20,
                                                     num_warmup_steps=10000)
    np.testing.assert_allclose([float(whole_run(s)) for s in (0, 10, 19)],
                               [0.0, 1e-4, 1.9e-4], rtol=1e-5)
    optimizer = optimization.create_optimizer(0.1, num_train_steps=100, num_warmup_steps=10)
    w = keras.Variable(np.ones(3, np.float32), name="kernel")
    for _ in range(55):
        optimizer.apply([tf.ones(3)], [w])
    np.testing.assert_allclose(float(optimizer.learning_rate), 0.05, rtol=1e-6)


def test_optimizer_learning_rate_follows_applied_updates():
    optimizer = optimization.create_optimizer(0.1, num_train_steps=100, num_warmup_steps=10)
    w = keras.Variable(np.ones(3, np.float32), name="kernel")
    assert float(optimizer.learning_rate) == 0.0
    for _ in range(4):
        optimizer.apply([tf.ones(3)], [w])
    assert int(optimizer.iterations) == 4
    np.testing.assert_allclose(float(optimizer.learning_rate), 0.04, rtol=1e-6)


def test_default_first_update_is_adams():
    # With bias correction (the default) Adam's first step moves each weight
    # by the learning rate against its gradient's sign; the original's update
    # would move it (1 - beta_1) / sqrt(1 - beta_2) = 3.2x further.
    optimizer = optimization.create_optimizer(0.01, num_train_steps=10, num_warmup_steps=0,
                                              weight_decay_rate=0.0)
    w = keras.Variable(np.zeros(3, np.float32), name="kernel")
    optimizer.apply([tf.constant([0.5, -0.2, 0.1])], [w])
    np.testing.assert_allclose(w.numpy(), [-0.01, 0.01, -0.01], rtol=1e-4)


@pytest.mark.parametrize("bias_correction", [False, True])
def test_adamw_matches_the_original_formula(bias_correction):
    rng = np.random.default_rng(1)
    kernel0 = rng.normal(size=(3, 2)).astype(np.float32)
    bias0 = rng.normal(size=2).astype(np.float32)
    grads = [(rng.normal(size=(3, 2)) * 0.1, rng.normal(size=2) * 0.1) for _ in range(3)]
    kernel = keras.Variable(kernel0, name="kernel")
    bias = keras.Variable(bias0, name="bias")
    optimizer = optimization.AdamWeightDecay(
        0.01, clip_norm=None, bias_correction=bias_correction)
    for g_kernel, g_bias in grads:
        optimizer.apply([tf.constant(g_kernel, tf.float32), tf.constant(g_bias, tf.float32)],
                        [kernel, bias])
    lr, wd = 0.01, 0.01
    expected_kernel = _numpy_adamw(kernel0.astype(np.float64), [g for g, _ in grads], lr, wd,
                                  bias_correction)
    expected_bias = _numpy_adamw(bias0.astype(np.float64), [g for _, g in grads], lr, 0.0,
                                bias_correction)
    np.testing.assert_allclose(kernel.numpy(), expected_kernel, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(bias.numpy(), expected_bias, rtol=1e-5, atol=1e-7)
    # The two variants differ clearly early on: without the correction the
    # first steps are about 3x larger.
    other = _numpy_adamw(kernel0.astype(np.float64), [g for g, _ in grads], lr, wd,
                        not bias_correction)
    assert np.abs(other - expected_kernel).max() > 1e-2


def test_weight_decay_skips_layer_norm_and_biases_of_a_real_bert(bert_config):
    model = BertModel(bert_config)
    head = ClassifierHead(bert_config, num_labels=3)
    variables = model.trainable_variables + head.trainable_variables
    decayed = {v.path for v in variables if optimization.uses_weight_decay(v)}
    # In BERT, exactly the 1-D weights are LayerNorm scales/offsets and biases.
    assert decayed == {v.path for v in variables if len(v.shape) > 1}
    assert {v.name for v in variables if v.path not in decayed} == {
        "gamma", "beta", "bias", "output_bias"}
    assert "embeddings/word_embeddings" in decayed
    assert "classifier/output_weights" in decayed

    # With zero gradients m and v stay 0, so the update is the decay alone.
    optimizer = optimization.AdamWeightDecay(0.5, weight_decay_rate=0.1, clip_norm=None)
    before = [v.numpy() for v in variables]
    optimizer.apply([tf.zeros(v.shape) for v in variables], variables)
    for variable, old in zip(variables, before, strict=True):
        factor = 1 - 0.5 * 0.1 if variable.path in decayed else 1.0
        np.testing.assert_allclose(variable.numpy(), old * factor, rtol=1e-6,
                                   err_msg=variable.path)


def test_weight_decay_rule_knows_the_original_tf1_names():
    names = {"bert/embeddings/LayerNorm/gamma:0": False,
             "bert/encoder/layer_0/attention/output/LayerNorm/beta:0": False,
             "bert/encoder/layer_0/attention/self/query/bias:0": False,
             "cls/predictions/output_bias:0": False,
             "bert/encoder/layer_0/attention/self/query/kernel:0": True,
             "bert/embeddings/word_embeddings:0": True,
             "output_weights:0": True}
    for name, expected in names.items():
        variable = tf.Variable(tf.zeros([2]), name=name[:-2])
        assert optimization.uses_weight_decay(variable) is expected, name


@pytest.mark.parametrize("scale", [0.5, 5.0])
def test_gradients_are_clipped_to_global_norm_one(scale):
    a = keras.Variable(np.zeros((2, 2), np.float32), name="a")
    b = keras.Variable(np.zeros(3, np.float32), name="b")
    grads = [np.array([[1.0, -2.0], [0.0, 2.0]]), np.array([1.0, 0.0, -1.0])]
    grads = [g / np.sqrt(sum((x**2).sum() for x in grads)) * scale for g in grads]  # norm: scale
    optimizer = optimization.AdamWeightDecay(0.1)
    optimizer.apply([tf.constant(g, tf.float32) for g in grads], [a, b])
    clipped = [g * min(1.0, 1.0 / scale) for g in grads]
    # After one update m = (1 - beta_1) * the applied gradient.
    np.testing.assert_allclose(_slot(optimizer, "a_m"), (1 - BETA_1) * clipped[0], rtol=1e-6)
    np.testing.assert_allclose(_slot(optimizer, "b_m"), (1 - BETA_1) * clipped[1], rtol=1e-6)


def test_lamb_scales_each_update_by_its_trust_ratio():
    rng = np.random.default_rng(2)
    kernel0 = rng.normal(size=(4, 3)).astype(np.float32) * 3
    grads = [rng.normal(size=(4, 3)) * 0.1 for _ in range(2)]
    kernel = keras.Variable(kernel0, name="kernel")
    zero_kernel = keras.Variable(np.zeros((4, 3), np.float32), name="zero_kernel")
    bias = keras.Variable(np.ones(3, np.float32), name="bias")
    optimizer = optimization.Lamb(0.01, clip_norm=None)
    for g in grads:
        optimizer.apply([tf.constant(g, tf.float32)] * 2 + [tf.constant(g[0], tf.float32)],
                        [kernel, zero_kernel, bias])
    np.testing.assert_allclose(
        kernel.numpy(),
        _numpy_adamw(kernel0.astype(np.float64), grads, 0.01, 0.01, True, trust_ratio=True),
        rtol=1e-5)
    # ||w|| = 0 at the first update: ratio 1.
    np.testing.assert_allclose(
        zero_kernel.numpy(),
        _numpy_adamw(np.zeros((4, 3)), grads, 0.01, 0.01, True, trust_ratio=True),
        rtol=1e-5, atol=1e-8)
    # Biases: no decay and no trust ratio.
    np.testing.assert_allclose(
        bias.numpy(), _numpy_adamw(np.ones(3), [g[0] for g in grads], 0.01, 0.0, True),
        rtol=1e-5)
    # Without the ratio the kernel would move by a different amount.
    assert np.abs(kernel.numpy() - _numpy_adamw(kernel0, grads, 0.01, 0.01, True)).max() > 1e-3


def _small_model(seed):
    """A Dense -> LayerNorm -> Dense regressor whose weights depend only on seed."""
    model = keras.Sequential([
        keras.Input((5,)), keras.layers.Dense(4),
        keras.layers.LayerNormalization(), keras.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.normal(size=weight.shape).astype(np.float32))
    return model


def _regression_batch(n, seed=0):
    """n examples whose targets are large enough for gradient norms above 1."""
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, 5)).astype(np.float32),
            rng.normal(size=(n, 1)).astype(np.float32) * 5)


def _mse(model, x, y):
    """Mean squared error of the model on (x, y)."""
    return tf.reduce_mean(tf.square(model(x) - y))


@pytest.mark.parametrize("jit_compile, clip_norm", [(False, 1.0), (True, 1.0), (False, None)])
def test_accumulating_micro_batches_equals_one_large_batch(jit_compile, clip_norm):
    x, y = _regression_batch(16)
    big_model, small = _small_model(3), _small_model(3)
    big_opt = optimization.create_optimizer(0.05, 10, 0, clip_norm=clip_norm)
    small_opt = optimization.create_optimizer(0.05, 10, 0, clip_norm=clip_norm)
    small_opt.build(small.trainable_variables)
    accumulator = optimization.GradientAccumulator(small.trainable_variables, steps=4)

    with tf.GradientTape() as tape:
        loss = _mse(big_model, x[:8], y[:8])
    first_grads = tape.gradient(loss, big_model.trainable_variables)
    # Clipping, when on, is active: it must see the accumulated gradient.
    assert tf.linalg.global_norm(first_grads) > 1.0

    @tf.function(jit_compile=jit_compile)
    def big_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = _mse(big_model, xb, yb)
        big_opt.apply(tape.gradient(loss, big_model.trainable_variables),
                      big_model.trainable_variables)

    @tf.function(jit_compile=jit_compile)
    def micro_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = _mse(small, xb, yb)
        accumulator.add(tape.gradient(loss, small.trainable_variables))
        return accumulator.apply_if_ready(small_opt)

    applied = []
    for update in range(2):
        batch = slice(8 * update, 8 * update + 8)
        big_step(x[batch], y[batch])
        for i in range(4):
            micro = slice(8 * update + 2 * i, 8 * update + 2 * i + 2)
            applied.append(bool(micro_step(x[micro], y[micro])))
    assert applied == [False, False, False, True] * 2
    assert int(small_opt.iterations) == int(big_opt.iterations) == 2
    assert int(accumulator.count) == 0
    for a, b in zip(small.weights, big_model.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)
    # m and v, which Adam's normalized step hides, see the same gradients too.
    for a, b in zip(small_opt.variables, big_opt.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def _bert_loss(model, inputs, num_examples):
    """A loss with large gradients on every weight, summed / num_examples."""
    outputs = model(inputs, training=False)
    per_example = (tf.reduce_sum(tf.square(outputs["pooled_output"] - 0.5), axis=-1)
                   + tf.reduce_sum(tf.square(outputs["sequence_output"]), axis=[1, 2]))
    return tf.reduce_sum(per_example) / num_examples


@pytest.mark.parametrize("steps", [1, 2])
def test_mirrored_strategy_matches_one_device(bert_config, steps, two_cpu_strategy):
    strategy = two_cpu_strategy
    rng = np.random.default_rng(4)
    # Two micro-batches of 4 examples: 2 per replica.
    batches = [{"input_ids": rng.integers(1, 40, size=(4, 8)).astype(np.int32),
                "segment_ids": rng.integers(0, 2, size=(4, 8)).astype(np.int32)}
               for _ in range(2)]

    single = BertModel(bert_config)
    single_opt = optimization.create_optimizer(1e-3, 10, 0)
    with strategy.scope():
        mirrored = BertModel(bert_config)
        mirrored_opt = optimization.create_optimizer(1e-3, 10, 0)
        mirrored_opt.build(mirrored.trainable_variables)
        accumulator = optimization.GradientAccumulator(mirrored.trainable_variables, steps)
    for a, b in zip(mirrored.weights, single.weights, strict=True):
        b.assign(a.numpy())

    # One device: one update from all the examples.
    every_example = {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}
    with tf.GradientTape() as tape:
        loss = _bert_loss(single, every_example, 8)
    grads = tape.gradient(loss, single.trainable_variables)
    assert tf.linalg.global_norm(grads) > 1.0, "clipping should be active"
    single_opt.apply(grads, single.trainable_variables)

    # Two replicas: the same examples, as `steps` micro-batches.
    def replica_step(inputs):
        with tf.GradientTape() as tape:
            loss = _bert_loss(mirrored, inputs, 8 // steps)
        grads = tape.gradient(loss, mirrored.trainable_variables)
        if steps == 1:
            mirrored_opt.apply(grads, mirrored.trainable_variables)
        else:
            accumulator.add(grads)
            accumulator.apply_if_ready(mirrored_opt)

    @tf.function
    def train_step(inputs):
        strategy.run(replica_step, args=(inputs,))

    micro_batches = [every_example] if steps == 1 else batches
    for micro in micro_batches:
        dataset = tf.data.Dataset.from_tensors(micro)
        train_step(next(iter(strategy.experimental_distribute_dataset(dataset))))
    assert int(mirrored_opt.iterations.numpy()) == 1
    # Adam's first step is lr * g / (|g| + epsilon): where |g| is near
    # epsilon, summation order moves it by about 1e-6, 0.1% of the step.
    for a, b in zip(mirrored.weights, single.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5, err_msg=a.path)
    # Adam's first step hardly depends on the gradient's scale; m and v show
    # that the same summed and clipped gradient was applied.
    for a, b in zip(mirrored_opt.variables, single_opt.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7, err_msg=a.path)


def test_checkpoint_restore_continues_identically(tmp_path):
    x, y = _regression_batch(4, seed=5)

    def train(model, optimizer, steps):
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = _mse(model, x, y)
            optimizer.apply(tape.gradient(loss, model.trainable_variables),
                            model.trainable_variables)

    def new_optimizer():
        return optimization.create_optimizer(0.05, 20, 3, optimizer_type="lamb",
                                             bias_correction=True)

    model, optimizer = _small_model(6), new_optimizer()
    train(model, optimizer, 3)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    train(model, optimizer, 2)

    restored_model, restored_opt = _small_model(7), new_optimizer()
    # Restoring before the optimizer is built defers its slots until build().
    tf.train.Checkpoint(model=restored_model, optimizer=restored_opt).restore(
        path).assert_existing_objects_matched()
    restored_opt.build(restored_model.trainable_variables)
    assert int(restored_opt.iterations) == 3
    train(restored_model, restored_opt, 2)
    assert int(restored_opt.iterations) == 5
    for a, b in zip(restored_opt.variables, optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(restored_model.weights, model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_works_inside_a_loss_scale_optimizer_with_mixed_float16():
    x, y = _regression_batch(4, seed=8)

    def model():
        return keras.Sequential([keras.Input((5,)),
                                 keras.layers.Dense(3, dtype="mixed_float16"),
                                 keras.layers.Dense(1, dtype="float32")])

    wrapped_model, plain_model = model(), model()
    for a, b in zip(wrapped_model.weights, plain_model.weights, strict=True):
        b.assign(a)
    wrapped = keras.optimizers.LossScaleOptimizer(
        optimization.create_optimizer(0.01, 10, 0), initial_scale=1024.0)
    plain = optimization.create_optimizer(0.01, 10, 0)
    wrapped.build(wrapped_model.trainable_variables)
    accumulator = optimization.GradientAccumulator(wrapped_model.trainable_variables, steps=1)

    @tf.function
    def wrapped_step(xb, yb, poison):
        with tf.GradientTape() as tape:
            loss = wrapped.scale_loss(_mse(wrapped_model, xb, yb)) * poison
        accumulator.add(tape.gradient(loss, wrapped_model.trainable_variables))
        accumulator.apply_if_ready(wrapped)

    wrapped_step(x, y, tf.constant(1.0))
    with tf.GradientTape() as tape:
        loss = _mse(plain_model, x, y)
    plain.apply(tape.gradient(loss, plain_model.trainable_variables),
                plain_model.trainable_variables)
    assert int(wrapped.inner_optimizer.iterations) == 1
    # Scaling by a power of two is exact, so the updates agree.
    for a, b in zip(wrapped_model.weights, plain_model.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)

    # An overflowing step is skipped and halves the scale.
    before = [w.numpy() for w in wrapped_model.weights]
    wrapped_step(x, y, tf.constant(np.inf))
    assert int(wrapped.inner_optimizer.iterations) == 1
    assert float(wrapped.dynamic_scale) == 512.0
    for w, old in zip(wrapped_model.weights, before, strict=True):
        np.testing.assert_array_equal(w.numpy(), old)


def test_distributed_steps_need_a_built_optimizer(two_cpu_strategy):
    w = keras.Variable(np.ones(2, np.float32), name="kernel")
    accumulator = optimization.GradientAccumulator([w], steps=2)
    with pytest.raises(ValueError, match="build the optimizer"):
        accumulator.apply_if_ready(optimization.create_optimizer(0.1, 10, 0))

    strategy = two_cpu_strategy
    with strategy.scope():
        v = keras.Variable(np.ones(2, np.float32), name="kernel")
        optimizer = optimization.create_optimizer(0.1, 10, 0)

    @tf.function
    def step():
        strategy.run(lambda: optimizer.apply([tf.ones(2)], [v]))

    # Building inside a distributed tf.function cannot work: say so.
    with pytest.raises(ValueError, match="build the optimizer"):
        step()


def test_config_round_trip_and_unknown_type():
    optimizer = optimization.create_optimizer(3e-5, 1000, 100, optimizer_type="lamb",
                                              bias_correction=True)
    copy = optimization.Lamb.from_config(
        optimizer.get_config(),
        custom_objects={"LinearWarmupLinearDecay": optimization.LinearWarmupLinearDecay})
    assert isinstance(copy, optimization.Lamb)
    assert copy.get_config() == optimizer.get_config()
    assert float(copy.learning_rate) == 0.0
    assert set(optimization.OPTIMIZERS) == {"adamw", "lamb"}
    with pytest.raises(ValueError, match="unknown optimizer_type"):
        optimization.create_optimizer(1e-4, 10, 0, optimizer_type="sgd")


def test_bias_correction_is_exact_in_float32():
    """With a constant gradient g, bias-corrected m and v are g and g^2 at every update.

    So each update is lr * g / (|g| + epsilon) exactly. The moving averages
    weigh g by 1 - float32(0.999) = 9.99987e-4: a correction computed from
    the exact 0.999 (1 - 0.999 = 1e-3) made the first update 6.6e-6 of
    itself too small.
    """
    gradient = np.array([0.3, -0.1, 0.02])
    variable = tf.Variable(tf.zeros([3]))
    optimizer = optimization.AdamWeightDecay(1e-3, weight_decay_rate=0.0, clip_norm=None)
    for t in range(1, 4):
        optimizer.apply([tf.constant(gradient, tf.float32)], [variable])
        expected = -t * 1e-3 * gradient / (np.abs(gradient) + 1e-6)
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)
