"""Tests for bert_tf.runtime.distribution."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.modeling import BertModel
from bert_tf.runtime import distribution


def test_picks_the_cpu_here_and_says_why(monkeypatch):
    for variable in ("TPU_NAME", "COLAB_TPU_ADDR", "TF_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    logged = []
    monkeypatch.setattr(distribution.logging, "info",
                        lambda msg, *args: logged.append(msg % args))
    strategy = distribution.resolve_strategy()
    assert strategy is tf.distribute.get_strategy()
    assert strategy.num_replicas_in_sync == 1
    assert logged == ["Strategy: default strategy on the CPU, because no TPU or GPU was found "
                      "(tensorflow-tpu is not installed)."]


@pytest.mark.parametrize("flag", [{"use_tpu": True}, {"tpu": "local"}])
def test_asking_for_a_tpu_without_one_is_one_clear_line(monkeypatch, flag):
    monkeypatch.delenv("TPU_NAME", raising=False)
    with pytest.raises(distribution.TpuNotFoundError) as raised:
        distribution.resolve_strategy(**flag)
    message = str(raised.value)
    assert "\n" not in message
    # What was tried, why it failed, what this machine has, and what to install.
    assert message.startswith("could not reach a TPU: tried TPUClusterResolver(tpu='local')")
    assert "tensorflow-tpu is not installed" in message
    assert "bash install_tpu.sh" in message
    assert isinstance(raised.value, ValueError)  # so that cli.run prints it as one line


def test_the_replica_count_is_stated_when_num_tpu_cores_differs(monkeypatch):
    """--num_tpu_cores=8 (the original's default) on a 1-chip v5e: one replica, said so."""

    class OneCoreTpuStrategy:
        num_replicas_in_sync = 1

        def __init__(self, resolver):
            self.resolver = resolver

    monkeypatch.setattr(distribution.tf.distribute.cluster_resolver, "TPUClusterResolver",
                        lambda **kwargs: kwargs)
    monkeypatch.setattr(distribution.tf.tpu.experimental, "initialize_tpu_system",
                        lambda resolver: None)
    monkeypatch.setattr(distribution.tf.distribute, "TPUStrategy", OneCoreTpuStrategy)
    logged = []
    monkeypatch.setattr(distribution.logging, "warning",
                        lambda msg, *args: logged.append(msg % args))
    monkeypatch.setattr(distribution.logging, "info", lambda msg, *args: logged.append(msg % args))
    strategy = distribution.resolve_strategy(tpu="local", num_tpu_cores=8)
    assert isinstance(strategy, OneCoreTpuStrategy)
    assert logged == [
        "--num_tpu_cores=8, but this TPU has 1 core(s): using 1 replica(s). Batch sizes are "
        "split over 1.",
        "Strategy: TPUStrategy with 1 replica(s), because --tpu=local."]


def test_mirrored_over_two_cpu_devices_matches_one_device(tiny_config, tiny_inputs,
                                                          two_cpu_strategy):
    strategy = two_cpu_strategy
    with strategy.scope():
        mirrored = BertModel(tiny_config)
    single = BertModel(tiny_config)
    for a, b in zip(mirrored.weights, single.weights, strict=True):
        b.assign(a.numpy())
    batch = {k: np.concatenate([v, v[::-1]]) for k, v in tiny_inputs.items()}  # 6 examples
    dataset = tf.data.Dataset.from_tensors(batch)
    dist_batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    @tf.function
    def step(inputs):
        return strategy.run(lambda x: mirrored(x)["pooled_output"], args=(inputs,))

    per_replica = strategy.experimental_local_results(step(dist_batch))
    assert len(per_replica) == 2 and per_replica[0].shape[0] == 3
    np.testing.assert_allclose(np.concatenate(per_replica),
                               single(batch)["pooled_output"], atol=1e-5)
