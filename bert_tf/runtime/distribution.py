"""Chooses the tf.distribute strategy: TPU, else GPUs, else the CPU.

Every training script has the same TPU flags (configs.TpuConfig) and
gets its strategy from them (run_setup.prepare), so the same command line runs on a
Cloud TPU, a GPU box or a laptop. The original repository's flags (use_tpu,
tpu_name, tpu_zone, gcp_project, master, num_tpu_cores) keep working; --tpu
is the shorter modern spelling.

Order of preference:
  1. TPUStrategy, when a TPU is named (--tpu=NAME, --tpu=local, --use_tpu
     with --tpu_name or --master) or found (the TPU_NAME or COLAB_TPU_ADDR
     environment variables, TPU chips that tpu_runtime set up PJRT for, as
     on a Colab TPU runtime or a Cloud TPU VM, or TPU devices visible to
     this process).
  2. MultiWorkerMirroredStrategy, when TF_CONFIG describes several workers.
  3. MirroredStrategy over all local GPUs.
  4. The default strategy, on the CPU.

Under MultiWorkerMirroredStrategy every worker runs the same script;
is_chief() tells the one that writes the outputs.
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf.runtime import tpu_runtime


class TpuNotFoundError(ValueError):
    """A TPU was asked for (--use_tpu, --tpu, ...) and cannot be reached."""


def _named_tpu(tpu, use_tpu, tpu_name, master):
    """The TPU the flags or environment point at, or None; with the reason."""
    for value, reason in ((tpu, "--tpu"), (tpu_name, "--tpu_name"), (master, "--master")):
        if value:
            return value, f"{reason}={value}"
    for variable in ("TPU_NAME", "COLAB_TPU_ADDR"):
        if os.environ.get(variable):
            address = os.environ[variable]
            if variable == "COLAB_TPU_ADDR":
                address = "grpc://" + address
            return address, f"${variable} is set"
    if tpu_runtime.pjrt_ready():
        return "local", "TPU chips are attached and PJRT is set up"
    if tf.config.list_physical_devices("TPU"):
        return "local", "TPU devices are attached to this process"
    if use_tpu:
        return "local", "--use_tpu without a name: trying the local TPU"
    return None, None


def _worker_count():
    """Number of workers that TF_CONFIG describes (1 when unset).

    A "chief" task is a worker too: MultiWorkerMirroredStrategy trains on the
    chief and every "worker" task alike.
    """
    cluster = json.loads(os.environ.get("TF_CONFIG") or "{}").get("cluster", {})
    return len(cluster.get("chief", [])) + len(cluster.get("worker", [])) or 1


def resolve_strategy(tpu=None, use_tpu=False, tpu_name=None, tpu_zone=None,
                     gcp_project=None, master=None, num_tpu_cores=8):
    """Returns the best tf.distribute.Strategy for this machine, and logs why.

    Args:
      tpu: A TPU name, grpc:// address or "local"; see the module docstring.
      use_tpu: The original flag; True requires a TPU.
      tpu_name, tpu_zone, gcp_project, master: The original's TPU flags.
      num_tpu_cores: The original flag; checked against what the TPU has.

    Returns:
      A tf.distribute.Strategy. Create models and optimizers in its scope().

    Raises:
      TpuNotFoundError: when a TPU is asked for and cannot be reached.
    """
    address, reason = _named_tpu(tpu, use_tpu, tpu_name, master)
    if address is not None:
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
                tpu=address, zone=tpu_zone, project=gcp_project)
            if address != "local":
                tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)
            strategy = tf.distribute.TPUStrategy(resolver)
        except (ValueError, RuntimeError, tf.errors.OpError) as e:
            error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if use_tpu or tpu or tpu_name or master:
                raise TpuNotFoundError(
                    f"could not reach a TPU: tried TPUClusterResolver(tpu={address!r}) because "
                    f"{reason}, which failed: {error}. Here {tpu_runtime.status()}. On a Cloud "
                    f"TPU VM or a Colab TPU runtime, {tpu_runtime.INSTALL_HINT}") from None
            logging.warning("A TPU seemed present (%s) but could not be used (%s): falling back "
                            "to the GPUs or the CPU.", reason, error)
        else:
            replicas = strategy.num_replicas_in_sync
            if replicas != num_tpu_cores:
                logging.warning("--num_tpu_cores=%d, but this TPU has %d core(s): using %d "
                                "replica(s). Batch sizes are split over %d.",
                                num_tpu_cores, replicas, replicas, replicas)
            logging.info("Strategy: TPUStrategy with %d replica(s), because %s.", replicas,
                         reason)
            return strategy

    workers = _worker_count()
    if workers > 1:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        logging.info("Strategy: MultiWorkerMirroredStrategy, because TF_CONFIG lists %d "
                     "workers (%d replicas in all).", workers, strategy.num_replicas_in_sync)
        return strategy

    gpus = tf.config.list_logical_devices("GPU")
    if gpus:
        strategy = tf.distribute.MirroredStrategy()
        logging.info("Strategy: MirroredStrategy over %d GPU(s), because no TPU was found "
                     "(%s).", len(gpus), tpu_runtime.status())
        return strategy

    logging.info("Strategy: default strategy on the CPU, because no TPU or GPU was found "
                 "(%s).", tpu_runtime.status())
    return tf.distribute.get_strategy()


def is_chief(strategy):
    """Whether this process is the one that writes the run's outputs.

    Under MultiWorkerMirroredStrategy every worker runs the same program;
    only the chief (the "chief" task, else worker 0) may write checkpoints,
    summaries and results to --output_dir, or the workers overwrite each
    other's files. Single-process strategies (TPU, GPUs, CPU) are chief.

    Args:
      strategy: The strategy in use.

    Returns:
      True on the chief.
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or isinstance(
            resolver, tf.distribute.cluster_resolver.TPUClusterResolver):
        return True
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type is None or task_type == "chief":
        return True
    return (task_type == "worker" and task_id == 0
            and "chief" not in resolver.cluster_spec().as_dict())


def task_name(strategy):
    """Names this process's task in the cluster, for logs and scratch files.

    Args:
      strategy: The strategy in use.

    Returns:
      e.g. "worker_1"; "chief" outside a cluster.
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or getattr(resolver, "task_type", None) is None:
        return "chief"
    return f"{resolver.task_type}_{resolver.task_id}"
