"""What a training run is set up with, before any model is built.

- prepare(): from a configs.parts.RuntimeSettings, seeds the random
  generators, picks the strategy (TPU, GPUs, or the default), the precision
  policy and the XLA choice (a Runtime, which every later step is handed)
  and, on a CPU, the allocator that suits the steps (memory.py), in the order
  TensorFlow needs. Fine-tuning (finetune.setup), pretraining and
  extract_features.py all start here.
- validate_batch_sizes(): the batch sizes against the strategy's replicas.
"""

import dataclasses

import tensorflow as tf

from bert_tf.runtime import distribution, memory, precision, xla

keras = tf.keras

def set_random_seed(seed):
    """Seeds Python, numpy and TensorFlow (hence Keras and tf.data) when seed is not None.

    Args:
      seed: An int, or None to leave every generator unseeded.
    """
    if seed is not None:
        keras.utils.set_random_seed(seed)


@dataclasses.dataclass(frozen=True)
class Runtime:
    """Where and how a run computes: chosen once, handed to what builds or runs a model.

    prepare() makes it for the scripts; Runtime.resolve() makes one for a
    strategy a caller already has. The Trainer (its training, evaluation and
    prediction), the export and the feature extractor take these choices
    from it, so that every part of a run agrees on them, whatever order the
    parts are built in; nothing reads them back from Keras's global state.

    Attributes:
      strategy: The tf.distribute.Strategy; models and optimizers go in its
        scope().
      policy: The Keras dtype policy training computes under: "float32",
        "mixed_bfloat16" or "mixed_float16" (precision.choose_policy).
      jit_compile: Whether the train, eval and predict steps are compiled
        with XLA (xla.resolve_jit_compile).
      requested_jit_compile: What the user asked for: True, False or None
        (auto). An export is XLA-compiled only when asked (served_model.py
        says why).
    """

    strategy: tf.distribute.Strategy
    policy: str = "float32"
    jit_compile: bool = False
    requested_jit_compile: bool | None = None

    @classmethod
    def resolve(cls, strategy, mixed_precision="float32", jit_compile=None):
        """The Runtime of a strategy, its precision policy and XLA choice resolved.

        Args:
          strategy: The strategy the models will run under.
          mixed_precision: One of precision.PRECISIONS; "auto" picks by device.
          jit_compile: True, False or None (auto: by device and policy).

        Returns:
          A Runtime.
        """
        policy = precision.choose_policy(mixed_precision, strategy)
        return cls(strategy, policy, xla.resolve_jit_compile(jit_compile, strategy, policy),
                   jit_compile)


def prepare(settings):
    """What every script does before it builds a model: seed, strategy, precision, allocator.

    The strategy comes before anything else touches TensorFlow's devices:
    MultiWorkerMirroredStrategy cannot be set up once TensorFlow has started.
    The precision policy comes after it, because "auto" depends on the device,
    and the CPU allocator after that, because it depends on whether XLA
    compiles the steps (memory.py), and before the first tensor is allocated.

    Args:
      settings: A configs.parts.RuntimeSettings: the seed (None: unseeded),
        the TPU, the training precision and the XLA choice.

    Returns:
      The run's Runtime: its strategy, precision policy and XLA choice.
    """
    set_random_seed(settings.seed)
    strategy = distribution.resolve_strategy(**dataclasses.asdict(settings.tpu))
    runtime = Runtime.resolve(strategy, settings.mixed_precision, settings.jit_compile)
    if xla.runs_on_cpu(runtime.strategy) and runtime.jit_compile:
        memory.use_system_allocator()
    return runtime


def validate_batch_sizes(strategy, train_batch_size, gradient_accumulation_steps=1,
                         do_train=True, **inference_batch_sizes):
    """Checks that every batch size splits evenly over the replicas.

    The training batch splits over replicas x micro-batches; eval and predict
    batches over the replicas (8 on a v3-8 TPU, 1 on Colab's v5e-1). The
    messages name the flags, which the config fields are named after.

    Args:
      strategy: The strategy in use.
      train_batch_size: The global training batch.
      gradient_accumulation_steps: Micro-batches per update.
      do_train: Whether the run trains (else the training batch is unused).
      **inference_batch_sizes: Other batches by name, e.g. eval_batch_size=8.

    Returns:
      The per-replica micro-batch size of training.

    Raises:
      ValueError: naming the flag whose batch does not split.
    """
    replicas = strategy.num_replicas_in_sync
    parts = replicas * gradient_accumulation_steps
    if do_train and train_batch_size % parts:
        raise ValueError(
            f"--train_batch_size={train_batch_size} must be a multiple of the "
            f"{replicas} replica(s) x --gradient_accumulation_steps="
            f"{gradient_accumulation_steps}")
    for name, size in inference_batch_sizes.items():
        if size % replicas:
            raise ValueError(f"--{name}={size} must be a multiple of the {replicas} "
                             "replica(s)")
    return train_batch_size // parts
