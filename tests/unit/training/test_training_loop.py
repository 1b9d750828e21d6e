"""Tests for bert_tf.training.training_loop: the loop, checkpoints and resume, accumulation,
replicas."""

import dataclasses
import os
import types

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import configs, finetune
from bert_tf.checkpoints import checkpoints
from bert_tf.model.config import BertConfig
from bert_tf.records import input_pipeline
from bert_tf.runtime import cpu, precision, run_setup, tpu_rules, xla
from bert_tf.tasks import ClassificationTask, PretrainingTask, Task
from bert_tf.training import progress, run_dir, training_loop

SEQ, PREDICTIONS = 16, 4


@pytest.fixture
def config():
    """Tiny and without dropout, so that runs can be compared exactly."""
    return BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=SEQ, type_vocab_size=2,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def _pretraining_examples(n, seed=0):
    """Learnable synthetic pretraining features: the masked id is a function of its neighbour."""
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(5, 50, size=(n, SEQ)).astype(np.int32)
    positions = np.array([np.sort(rng.choice(np.arange(1, SEQ - 1), PREDICTIONS, replace=False))
                          for _ in range(n)], np.int32)
    labels = np.take_along_axis(input_ids, positions - 1, axis=1)
    np.put_along_axis(input_ids, positions, 4, axis=1)  # [MASK]
    nsp = rng.integers(0, 2, size=(n, 1)).astype(np.int32)
    segment_ids = np.zeros((n, SEQ), np.int32)
    segment_ids[:, SEQ // 2:] = 1
    input_ids[:, 0] = np.where(nsp[:, 0] == 1, 2, 3)  # the NSP label is visible at [CLS]
    return {"input_ids": input_ids, "input_mask": np.ones((n, SEQ), np.int32),
            "segment_ids": segment_ids, "masked_lm_positions": positions,
            "masked_lm_ids": labels, "masked_lm_weights": np.ones((n, PREDICTIONS), np.float32),
            "next_sentence_labels": nsp}


def _dataset_fn(examples, global_batch, repeat=True):
    def fn(input_context):
        dataset = tf.data.Dataset.from_tensor_slices(examples)
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(input_context.get_per_replica_batch_size(global_batch),
                             drop_remainder=True)
    return fn


def _trainer(config, output_dir, strategy=None, accumulation=1, steps=20, jit_compile=False,
             learning_rate=1e-3, mixed_precision="float32", decay_after_warmup=True,
             **cadence):
    """A pretraining Trainer; cadence: CadenceSettings' fields, the original's if not given."""
    # XLA is off except where a test is about it: compiling costs seconds.
    runtime = run_setup.Runtime.resolve(strategy or tf.distribute.get_strategy(),
                                        mixed_precision, jit_compile)
    cadence = {"iterations_per_loop": 1000, "save_checkpoints_steps": 1000, **cadence}
    return training_loop.Trainer(
        PretrainingTask(), config, runtime,
        configs.TrainingConfig(
            str(output_dir), num_train_steps=steps, num_warmup_steps=2,
            optimizer=configs.OptimizerSettings(
                learning_rate=learning_rate, gradient_accumulation_steps=accumulation,
                decay_after_warmup=decay_after_warmup),
            cadence=configs.CadenceSettings(**cadence)))


def _copy_weights(source, target):
    for a, b in zip(source.trainable_variables, target.trainable_variables, strict=True):
        b.assign(a.numpy())


@pytest.mark.slow
def test_pretraining_learns_checkpoints_and_evaluates(config, tmp_path):
    """Also: the XLA-compiled step runs on the CPU."""
    examples = _pretraining_examples(64)
    # Adam's steps are lr-sized from the start: 60 of them need a high rate.
    trainer = _trainer(config, tmp_path, steps=60, iterations_per_loop=20,
                       save_checkpoints_steps=30, jit_compile=True, learning_rate=5e-3)
    assert trainer.restore() == "from scratch"
    before = trainer.evaluate(_dataset_fn(examples, 16, repeat=False))
    history = trainer.train(_dataset_fn(examples, 8), 60, 8)
    assert [h["step"] for h in history] == [20, 30, 50, 60]
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["learning_rate"] == 0.0
    after = trainer.evaluate(_dataset_fn(examples, 16, repeat=False))
    assert trainer.global_step == 60
    assert after["loss"] < before["loss"] - 1.0
    assert after["next_sentence_accuracy"] > 0.9
    assert not (tmp_path / "eval_results.txt").exists()  # evaluate() only measures
    trainer.write_eval_results(after)
    lines = (tmp_path / "eval_results.txt").read_text().splitlines()
    assert [line.split(" = ")[0] for line in lines] == [
        "global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
        "next_sentence_accuracy", "next_sentence_loss"]
    assert "global_step = 60" in lines
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-60")
    assert os.path.exists(tmp_path / "ckpt-30.index")
    assert os.listdir(tmp_path / "train")  # TensorBoard summaries


def test_rerun_resumes_step_and_optimizer_state(config, tmp_path):
    examples = _pretraining_examples(32)
    first = _trainer(config, tmp_path, steps=10, iterations_per_loop=5, save_checkpoints_steps=5)
    first.restore()
    first.train(_dataset_fn(examples, 8), 5, 8)
    resumed = _trainer(config, tmp_path, steps=10, iterations_per_loop=5)
    assert resumed.restore() == "resumed" and resumed.global_step == 5
    for a, b in zip(first.optimizer.variables, resumed.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    resumed.train(_dataset_fn(examples, 8), 10, 8)
    assert resumed.global_step == 10
    # Asking for a step already reached trains nothing.
    assert resumed.train(_dataset_fn(examples, 8), 10, 8) == []


def test_resume_ignores_how_often_a_run_logs_and_saves_but_not_its_schedule(config, tmp_path):
    examples = _pretraining_examples(16)
    first = _trainer(config, tmp_path, steps=4, iterations_per_loop=2, save_checkpoints_steps=2,
                     log_every_secs=30.0, save_checkpoints_secs=600.0)
    first.restore()
    first.train(_dataset_fn(examples, 8), 2, 8)
    other_schedule = _trainer(config, tmp_path, steps=4, iterations_per_loop=2,
                              decay_after_warmup=False)
    assert other_schedule.restore() == "resumed"
    with pytest.raises(run_dir.RunDirError, match="decay_after_warmup: True there, False now"):
        other_schedule.train(_dataset_fn(examples, 8), 4, 8)
    quieter = _trainer(config, tmp_path, steps=4, iterations_per_loop=2, log_every_secs=5.0)
    assert quieter.restore() == "resumed"
    quieter.train(_dataset_fn(examples, 8), 4, 8)
    assert quieter.global_step == 4


def test_accumulated_micro_batches_match_one_large_batch(config, tmp_path):
    examples = _pretraining_examples(16)
    whole = _trainer(config, tmp_path / "whole", steps=4, iterations_per_loop=2)
    pieces = _trainer(config, tmp_path / "pieces", accumulation=2, steps=4, iterations_per_loop=2)
    _copy_weights(whole, pieces)
    whole.train(_dataset_fn(examples, 8), 2, 8)
    pieces.train(_dataset_fn(examples, 4), 2, 8)
    assert pieces.global_step == whole.global_step == 2
    for a, b in zip(whole.trainable_variables, pieces.trainable_variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=2e-6)


@pytest.mark.slow
def test_two_replicas_follow_the_one_device_loss_trajectory(config, tmp_path,
                                                            two_cpu_strategy):
    """MirroredStrategy over 2 logical CPUs: same losses as 1 device, within 1e-5."""
    examples = _pretraining_examples(48)
    strategy = two_cpu_strategy
    single = _trainer(config, tmp_path / "one", steps=6, iterations_per_loop=1)
    mirrored = _trainer(config, tmp_path / "two", strategy=strategy, steps=6,
                        iterations_per_loop=1)
    _copy_weights(single, mirrored)
    initial = [v.numpy() for v in single.trainable_variables]
    # Same global batches in the same order: no sharding of the examples.
    def unsharded(batch):
        def fn(input_context):
            size = input_context.get_per_replica_batch_size(batch)
            return tf.data.Dataset.from_tensor_slices(examples).repeat().batch(
                batch).unbatch().batch(size)
        return fn
    losses = {name: [h["loss"] for h in trainer.train(unsharded(8), 6, 8)]
              for name, trainer in (("one", single), ("two", mirrored))}
    assert len(losses["one"]) == 6
    np.testing.assert_allclose(losses["one"], losses["two"], atol=1e-5)
    # Training moved the weights, and both runs moved them alike.
    moved = max(np.abs(v.numpy() - w).max()
                for v, w in zip(single.trainable_variables, initial, strict=True))
    assert moved > 1e-3
    for a, b in zip(single.trainable_variables, mirrored.trainable_variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


@pytest.mark.slow
def test_two_replicas_train_on_batches_of_different_lengths(config, tmp_path,
                                                            two_cpu_strategy):
    """Trimmed batches (run_classifier's --dynamic_padding) under MirroredStrategy and XLA.

    Each replica gets its own batch, cut to its own length: the losses match
    those of full padding.
    """
    rng = np.random.default_rng(5)
    n = 32
    lengths = rng.integers(2, SEQ + 1, size=n)
    input_mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.int32)
    examples = {"input_ids": rng.integers(5, 50, size=(n, SEQ)).astype(np.int32) * input_mask,
                "input_mask": input_mask, "segment_ids": np.zeros((n, SEQ), np.int32),
                "label_ids": rng.integers(0, 3, size=(n, 1)).astype(np.int32),
                "is_real_example": np.ones((n, 1), np.int32)}

    def dataset_fn(trim):
        def fn(input_context):
            dataset = tf.data.Dataset.from_tensor_slices(examples).repeat().batch(
                input_context.get_per_replica_batch_size(4), drop_remainder=True)
            if trim:
                dataset = dataset.map(lambda b: input_pipeline.trim_padding(b, 8))
            return dataset
        return fn

    trainers = {trim: training_loop.Trainer(
        ClassificationTask(3), config,
        run_setup.Runtime.resolve(two_cpu_strategy, jit_compile=True),
        configs.TrainingConfig(str(tmp_path / str(trim)), num_train_steps=6, num_warmup_steps=1,
                               optimizer=configs.OptimizerSettings(learning_rate=1e-3),
                               cadence=configs.CadenceSettings(iterations_per_loop=1,
                                                               save_checkpoints_steps=1000)))
        for trim in (False, True)}
    _copy_weights(trainers[False].encoder, trainers[True].encoder)
    _copy_weights(trainers[False].heads["classifier"], trainers[True].heads["classifier"])
    losses = {trim: [h["loss"] for h in trainer.train(dataset_fn(trim), 6, 4)]
              for trim, trainer in trainers.items()}
    assert len(losses[True]) == 6
    np.testing.assert_allclose(losses[True], losses[False], atol=1e-5)


def test_classifier_predictions_skip_nothing_and_keep_order(config, tmp_path):
    rng = np.random.default_rng(3)
    n = 12
    examples = {"input_ids": rng.integers(5, 50, size=(n, SEQ)).astype(np.int32),
                "input_mask": np.ones((n, SEQ), np.int32),
                "segment_ids": np.zeros((n, SEQ), np.int32),
                "label_ids": rng.integers(0, 3, size=(n, 1)).astype(np.int32),
                "is_real_example": np.array([[1]] * 10 + [[0]] * 2, np.int32)}
    trainer = training_loop.Trainer(
        ClassificationTask(3), config, run_setup.Runtime.resolve(tf.distribute.get_strategy()),
        configs.TrainingConfig(str(tmp_path), num_train_steps=10, num_warmup_steps=1))
    predict_fn = _dataset_fn(examples, 4, repeat=False)
    collected = trainer.inference.predict(predict_fn)
    probabilities, real = collected["predictions"], collected["is_real_example"]
    assert probabilities.shape == (12, 3) and real.tolist() == [1] * 10 + [0] * 2
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-5)
    direct = trainer.task.predictions(examples, trainer.task.forward(
        trainer.encoder, trainer.heads, examples, training=False))
    np.testing.assert_allclose(probabilities, direct["predictions"], atol=1e-5)
    # finetune.predict drops the padding examples and keeps the order.
    kept = finetune.predict(trainer, predict_fn)
    assert list(kept) == ["predictions"]
    np.testing.assert_allclose(kept["predictions"], probabilities[:10], atol=1e-6)


def test_a_bfloat16_trained_model_predicts_in_float32_unless_asked(config, tmp_path):
    rng = np.random.default_rng(5)
    examples = {"input_ids": rng.integers(5, 50, size=(8, SEQ)).astype(np.int32),
                "input_mask": np.ones((8, SEQ), np.int32),
                "segment_ids": np.zeros((8, SEQ), np.int32),
                "label_ids": rng.integers(0, 3, size=(8, 1)).astype(np.int32),
                "is_real_example": np.ones((8, 1), np.int32)}
    predict_fn = _dataset_fn(examples, 4, repeat=False)
    trainers = {}
    bfloat16 = run_setup.Runtime.resolve(tf.distribute.get_strategy(), "bfloat16")
    for inference in ("float32", "as_trained"):
        trainers[inference] = training_loop.Trainer(
            ClassificationTask(3), config, bfloat16,
            configs.TrainingConfig(str(tmp_path / inference), num_train_steps=10,
                                   inference_precision=inference))
    # Larger head weights than the initial ones, so that probabilities move
    # away from uniform and precision shows in them.
    for variable in trainers["float32"].heads["classifier"].trainable_variables:
        variable.assign(variable * 50.0)
    _copy_weights(trainers["float32"], trainers["as_trained"])
    assert trainers["float32"].encoder.dtype_policy.name == "mixed_bfloat16"
    assert trainers["float32"].inference.policy == "float32"
    assert trainers["as_trained"].inference.policy == "mixed_bfloat16"
    # The same weights in a float32 model: the reference.
    reference = training_loop.Trainer(
        ClassificationTask(3), config, run_setup.Runtime.resolve(tf.distribute.get_strategy()),
        configs.TrainingConfig(str(tmp_path / "reference"), num_train_steps=10))
    _copy_weights(trainers["float32"], reference)
    expected = reference.inference.predict(predict_fn)["predictions"]
    float32 = trainers["float32"].inference.predict(predict_fn)["predictions"]
    np.testing.assert_allclose(float32, expected, atol=1e-6)
    bfloat16 = trainers["as_trained"].inference.predict(predict_fn)["predictions"]
    # bfloat16 keeps 8 significant bits, so these probabilities move by about
    # 1e-3 (how much depends on the CPU's kernels); 1e-4 is still a hundred
    # times the float32 path's tolerance above.
    assert np.abs(bfloat16 - expected).max() > 1e-4
    # A later predict sees weights changed since the first.
    for variable in trainers["float32"].heads["classifier"].trainable_variables:
        variable.assign(variable * 2.0)
    _copy_weights(trainers["float32"], reference)
    np.testing.assert_allclose(trainers["float32"].inference.predict(predict_fn)["predictions"],
                               reference.inference.predict(predict_fn)["predictions"], atol=1e-6)


def test_a_fine_tuning_task_streams_no_metrics(config, tmp_path):
    """Fine-tuning scores through predictions and score(); Trainer.evaluate says so."""
    trainer = training_loop.Trainer(
        ClassificationTask(2), config,
        run_setup.Runtime.resolve(tf.distribute.get_strategy()),
        configs.TrainingConfig(str(tmp_path), num_train_steps=10))
    examples = {"input_ids": np.full((4, SEQ), 7, np.int32),
                "input_mask": np.ones((4, SEQ), np.int32),
                "segment_ids": np.zeros((4, SEQ), np.int32),
                "label_ids": np.zeros((4, 1), np.int32),
                "is_real_example": np.ones((4, 1), np.int32)}
    with pytest.raises(NotImplementedError, match="finetune.evaluate"):
        trainer.evaluate(_dataset_fn(examples, 4, repeat=False))


def test_pretraining_streaming_metrics_match_its_score(config, tmp_path):
    examples = _pretraining_examples(8)
    trainer = _trainer(config, tmp_path)
    predict_fn = _dataset_fn(examples, 4, repeat=False)
    streamed = trainer.evaluate(predict_fn)
    scored = trainer.task.score(trainer.inference.predict(predict_fn))
    for name in ("masked_lm_accuracy", "next_sentence_accuracy"):
        assert streamed[name] == pytest.approx(scored[name], abs=1e-6)


def test_a_task_must_implement_the_whole_protocol():
    class Partial(Task):
        def create_heads(self, encoder):
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Partial()


def test_precision_policy_choice():
    strategy = tf.distribute.get_strategy()
    assert precision.choose_policy("auto", strategy) == "float32"
    assert precision.choose_policy("bfloat16", strategy) == "mixed_bfloat16"
    with pytest.raises(ValueError, match="must be one of"):
        precision.choose_policy("int8", strategy)
    # Choosing sets nothing: the Runtime carries the choice, not Keras's global state.
    assert tf.keras.mixed_precision.global_policy().name == "float32"


@pytest.mark.slow
def test_a_resumed_run_reaches_the_uninterrupted_runs_weights(config, tmp_path):
    """Input position (shuffle buffer included) and dropout state are checkpointed."""
    config = dataclasses.replace(config, hidden_dropout_prob=0.1,
                                 attention_probs_dropout_prob=0.1)
    examples = _pretraining_examples(40)

    def dataset_fn(context):
        return _dataset_fn(examples, 8)(context).shuffle(16, seed=3)

    tf.keras.utils.set_random_seed(7)
    whole = _trainer(config, tmp_path / "whole", steps=8, iterations_per_loop=2,
                     save_checkpoints_steps=4)
    whole.restore()
    whole.train(dataset_fn, 8, 8)
    tf.keras.utils.set_random_seed(7)
    first = _trainer(config, tmp_path / "cut", steps=8, iterations_per_loop=2,
                     save_checkpoints_steps=4)
    first.restore()
    first.train(dataset_fn, 4, 8)
    # A new process would start its generators afresh: the checkpoint must carry them.
    tf.keras.utils.set_random_seed(123)
    resumed = _trainer(config, tmp_path / "cut", steps=8, iterations_per_loop=2,
                       save_checkpoints_steps=4)
    assert resumed.restore() == "resumed"
    resumed.train(dataset_fn, 8, 8)
    for a, b in zip(whole.trainable_variables, resumed.trainable_variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


@pytest.mark.parametrize("override,policy", [("1", "mixed_bfloat16"), ("0", "float32")])
def test_auto_precision_on_a_cpu_follows_its_bfloat16_units(monkeypatch, override, policy):
    monkeypatch.setenv(cpu.CPU_BFLOAT16_ENV, override)
    assert precision.choose_policy("auto", tf.distribute.get_strategy()) == policy
    # An explicit choice is kept whatever the CPU.
    assert precision.choose_policy("float32", tf.distribute.get_strategy()) == "float32"
    assert cpu.this_cpu().bfloat16_outruns_float32 == (override == "1")


def test_auto_xla_is_off_for_bfloat16_on_a_cpu():
    strategy = tf.distribute.get_strategy()
    assert xla.resolve_jit_compile(None, strategy, "float32") is True
    assert xla.resolve_jit_compile(None, strategy, "mixed_bfloat16") is False
    assert xla.resolve_jit_compile(True, strategy, "mixed_bfloat16") is True


def test_the_tpu_rules_compile_every_step_whatever_jit_compile_says(monkeypatch):
    strategy = tf.distribute.get_strategy()
    assert xla.resolve_jit_compile(False, strategy, "float32") is False
    monkeypatch.setenv(tpu_rules.ENV, "1")
    assert xla.resolve_jit_compile(False, strategy, "float32") is True
    assert xla.resolve_jit_compile(None, strategy, "mixed_bfloat16") is True


def test_bfloat16_training_keeps_float32_checkpoints_that_load_into_float32(config, tmp_path):
    examples = _pretraining_examples(16)
    trainer = _trainer(config, tmp_path, steps=2, iterations_per_loop=2,
                       mixed_precision="bfloat16")
    trainer.restore()
    history = trainer.train(_dataset_fn(examples, 8), 2, 8)
    assert np.isfinite(history[-1]["loss"])
    assert {str(v.dtype) for v in trainer.trainable_variables} == {"float32"}
    assert trainer.encoder.layer_0.compute_dtype == "bfloat16"
    resumed = _trainer(config, tmp_path, steps=2, iterations_per_loop=2)
    assert resumed.restore() == "resumed"
    for a, b in zip(trainer.trainable_variables, resumed.trainable_variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_every_batch_size_must_split_over_the_replicas():
    """8 replicas (a v3-8), as --num_tpu_cores=8 suggests; Colab's v5e-1 has 1."""
    eight, one = (types.SimpleNamespace(num_replicas_in_sync=n) for n in (8, 1))

    def validate(strategy, train=32, do_train=False, eval_size=16, predict_size=8):
        return run_setup.validate_batch_sizes(strategy, train, do_train=do_train,
                                             eval_batch_size=eval_size,
                                             predict_batch_size=predict_size)

    with pytest.raises(ValueError,
                       match=r"^--eval_batch_size=12 must be a multiple of the 8 replica\(s\)$"):
        validate(eight, eval_size=12)
    assert validate(eight) == 4  # per replica
    with pytest.raises(ValueError, match=r"^--predict_batch_size=4 must be a multiple"):
        validate(eight, predict_size=4)
    assert validate(eight, train=36) == 4  # checked only when training
    with pytest.raises(ValueError, match=r"^--train_batch_size=36 must be a multiple of the 8"):
        validate(eight, train=36, do_train=True)
    assert validate(one, train=36, do_train=True) == 36
    with pytest.raises(ValueError, match=r"x --gradient_accumulation_steps=3$"):
        run_setup.validate_batch_sizes(one, 32, gradient_accumulation_steps=3)


@pytest.mark.slow
def test_two_replicas_evaluate_and_predict_with_xla_as_one_device(config, tmp_path,
                                                                 two_cpu_strategy):
    """Eval and predict steps compiled per replica under MirroredStrategy over 2 CPUs."""
    examples = _pretraining_examples(16)
    single = _trainer(config, tmp_path / "one", jit_compile=True)
    mirrored = _trainer(config, tmp_path / "two", strategy=two_cpu_strategy, jit_compile=True)
    _copy_weights(single, mirrored)
    results = [trainer.evaluate(_dataset_fn(examples, 8, repeat=False))
               for trainer in (single, mirrored)]
    for name in ("loss", "masked_lm_accuracy", "next_sentence_accuracy"):
        np.testing.assert_allclose(results[0][name], results[1][name], atol=1e-5)
    predictions = [trainer.inference.predict(_dataset_fn(examples, 8, repeat=False))
                   for trainer in (single, mirrored)]
    assert predictions[0].keys() == predictions[1].keys()
    for name in predictions[0]:
        assert len(predictions[1][name]) == 16
        np.testing.assert_allclose(np.sort(predictions[0][name], axis=None),
                                   np.sort(predictions[1][name], axis=None), atol=1e-4)


def test_time_based_loops_start_with_one_step_then_fit_the_interval():
    """The first loop (which compiles) is one step; later ones fill log_every_secs."""
    assert progress.loop_steps(None, 1000, 30.0) == 1
    assert progress.loop_steps(2.0, 1000, 30.0) == 15
    assert progress.loop_steps(0.001, 1000, 30.0) == 1000
    assert progress.loop_steps(60.0, 1000, 30.0) == 1
    assert progress.loop_steps(None, 1000, None) == 1000
    assert progress.loop_steps(2.0, 7, None) == 7


def test_durations_read_as_a_person_would_write_them():
    assert progress.format_duration(0) == "0s"
    assert progress.format_duration(59.4) == "59s"
    assert progress.format_duration(725) == "12m05s"
    assert progress.format_duration(2 * 3600 + 3 * 60 + 20) == "2h03m"





def test_time_based_loops_and_checkpoints_in_a_run(config, tmp_path):
    """log_every_secs=0: one step per loop; save_checkpoints_secs=0: a save after each."""
    examples = _pretraining_examples(32)
    trainer = _trainer(config, tmp_path, steps=5, iterations_per_loop=1000,
                       save_checkpoints_steps=1000, log_every_secs=0.0,
                       save_checkpoints_secs=0.0)
    trainer.restore()
    history = trainer.train(_dataset_fn(examples, 8), 5, 8)
    assert [record["step"] for record in history] == [1, 2, 3, 4, 5]
    checkpoints_kept = trainer.training_checkpoints.manager.checkpoints
    saved = [int(path.rsplit("-", 1)[1]) for path in checkpoints_kept]
    assert saved == [1, 2, 3, 4, 5]

    # Without the time-based settings, one loop of 5 steps and one save at the end.
    steps = _trainer(config, tmp_path / "steps", steps=5, iterations_per_loop=1000,
                     save_checkpoints_steps=1000)
    steps.restore()
    assert [record["step"] for record in steps.train(_dataset_fn(examples, 8), 5, 8)] == [5]
    assert [int(p.rsplit("-", 1)[1]) for p in steps.training_checkpoints.manager.checkpoints] == [5]


def test_a_trained_runs_checkpoint_loads_its_model_and_names_the_rest_training_state(
        config, tmp_path):
    """Optimizer slots, dropout seeds and the input position are no unused weights."""
    config = dataclasses.replace(config, hidden_dropout_prob=0.1)
    trainer = _trainer(config, tmp_path, steps=2)
    trainer.restore()
    trainer.train(_dataset_fn(_pretraining_examples(16), 8), 2, 8)
    encoder = training_loop.BertModel(config)
    heads = PretrainingTask().create_heads(encoder)
    report = checkpoints.load_weights(tf.train.latest_checkpoint(str(tmp_path)), encoder, heads)
    assert report.skipped == [] and report.initialized == []
    names = " ".join(report.training_state)
    for part in ("optimizer/", "dropout_seeds/", "train_input/", "save_counter"):
        assert part in names
    for a, b in zip(trainer.trainable_variables,
                    list(encoder.trainable_variables) + [
                        v for name in sorted(heads) for v in heads[name].trainable_variables],
                    strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_cadence_is_time_based_off_a_tpu_unless_the_original_settings_are_given():
    def cadence(strategy=None, **given):
        config = configs.CadenceSettings(**given).for_strategy(
            strategy or tf.distribute.get_strategy())
        return (config.iterations_per_loop, config.save_checkpoints_steps,
                config.log_every_secs, config.save_checkpoints_secs)

    assert cadence() == (1000, 1000, 30.0, 600.0)
    assert cadence(iterations_per_loop=50, save_checkpoints_steps=100) == (50, 100, None, None)
    assert cadence(iterations_per_loop=50, log_every_secs=5.0) == (50, 1000, 5.0, 600.0)
    # A TPUStrategy keeps the original's cadence: only the type is looked at.
    tpu = tf.distribute.TPUStrategy.__new__(tf.distribute.TPUStrategy)
    assert cadence(tpu) == (1000, 1000, None, None)
    assert cadence(tpu, save_checkpoints_secs=60.0) == (1000, 1000, None, 60.0)


def test_decay_after_warmup_reaches_the_optimizer(config, tmp_path):
    trainer = _trainer(config, tmp_path, steps=10, learning_rate=0.01)
    trainer.optimizer.iterations.assign(2)
    # At the end of warmup the rate is the peak by default...
    np.testing.assert_allclose(float(trainer.optimizer.learning_rate), 0.01, rtol=1e-6)
    original = _trainer(config, tmp_path / "original", steps=10, learning_rate=0.01,
                        decay_after_warmup=False)
    original.optimizer.iterations.assign(2)
    # ... and the original's 0.8 of it with --nodecay_after_warmup.
    np.testing.assert_allclose(float(original.optimizer.learning_rate), 0.008, rtol=1e-6)
