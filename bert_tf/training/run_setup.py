"""What a training run is set up with, before any model is built.

- prepare(): seeds the random generators, picks the strategy (TPU, GPUs, or
  the default), the precision policy and the XLA choice (a Runtime, which
  every later step is handed) and, on a CPU, the allocator that suits the
  steps (memory.py), in the order TensorFlow needs.
  Fine-tuning (finetune.setup), run_pretraining.py and extract_features.py
  all start here.
- validate_batch_sizes(): the batch sizes against the strategy's replicas.
- TrainingConfig: how the Trainer trains. TrainingConfig.for_strategy()
  fills in how often a run logs and saves from what the user left unset: on
  a TPU a host round trip is expensive and the original's cadence stays (a
  loop of steps per round trip, and a checkpoint, every 1000 steps); on a
  CPU or GPU 1000 steps can take an hour, so there each loop is sized from
  the measured step time to take about LOG_EVERY_SECS, and a checkpoint is
  also saved every SAVE_CHECKPOINTS_SECS, unless the user gave the
  original's settings.
"""

import dataclasses

import tensorflow as tf

from bert_tf.training import memory, precision, xla

keras = tf.keras

# The original's cadence: a loop of steps per host round trip, and a
# checkpoint, every 1000 steps. Off a TPU, unless those are given, loops are
# sized to log every LOG_EVERY_SECS and a checkpoint is also saved every
# SAVE_CHECKPOINTS_SECS (TrainingConfig.for_strategy).
ITERATIONS_PER_LOOP = 1000
SAVE_CHECKPOINTS_STEPS = 1000
LOG_EVERY_SECS = 30.0
SAVE_CHECKPOINTS_SECS = 600.0

# The TrainingConfig fields that a user sets (each a flag of the scripts);
# the others come from the run: output_dir and the step counts. The four
# cadence settings are None where not given (TrainingConfig.for_strategy).
USER_SETTINGS = ("learning_rate", "optimizer", "adam_bias_correction", "decay_after_warmup",
                 "gradient_accumulation_steps", "iterations_per_loop",
                 "save_checkpoints_steps", "log_every_secs", "save_checkpoints_secs",
                 "keep_checkpoint_max", "inference_precision")



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


def prepare(seed, tpu, mixed_precision, jit_compile=None):
    """What every script does before it builds a model: seed, strategy, precision, allocator.

    The strategy comes before anything else touches TensorFlow's devices:
    MultiWorkerMirroredStrategy cannot be set up once TensorFlow has started.
    The precision policy comes after it, because "auto" depends on the device,
    and the CPU allocator after that, because it depends on whether XLA
    compiles the steps (memory.py), and before the first tensor is allocated.

    Args:
      seed: set_random_seed()'s seed, or None.
      tpu: A distribution.TpuConfig.
      mixed_precision: One of precision.PRECISIONS.
      jit_compile: True, False or None (auto), as the run's steps will be
        compiled (xla.resolve_jit_compile).

    Returns:
      The run's Runtime: its strategy, precision policy and XLA choice.
    """
    set_random_seed(seed)
    runtime = Runtime.resolve(tpu.resolve_strategy(), mixed_precision, jit_compile)
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


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """How a Trainer trains: one object instead of a dozen arguments.

    Attributes:
      output_dir: Checkpoints, summaries and results go here.
      num_train_steps: Optimizer updates in all; the schedule decays to 0 there.
      num_warmup_steps: Linear warmup length.
      learning_rate: Peak learning rate.
      optimizer: "adamw" or "lamb".
      adam_bias_correction: Adam's bias correction (the original had none).
      decay_after_warmup: Decay the learning rate from the end of warmup
        (Hugging Face's schedule), not from step 0 (the original's).
      inference_precision: What predictions compute in, one of
        precision.INFERENCE_PRECISIONS; float32 whatever training used.
      gradient_accumulation_steps: Micro-batches per optimizer update.
      iterations_per_loop: The most steps per tf.function call (host round trip).
      save_checkpoints_steps: Checkpoint interval, in steps.
      log_every_secs: If set, each loop runs as many steps as take about this
        long, measured on the loops before (the first loop is one step); at
        most iterations_per_loop. None: every loop is iterations_per_loop.
      save_checkpoints_secs: If set, a checkpoint is also saved after the
        first loop that ends this long after the last save.
      keep_checkpoint_max: How many checkpoints to keep.

    Whether the steps are XLA-compiled is the Runtime's (jit_compile).
    """

    output_dir: str
    num_train_steps: int
    num_warmup_steps: int = 0
    learning_rate: float = 5e-5
    optimizer: str = "adamw"
    adam_bias_correction: bool = True
    decay_after_warmup: bool = True
    gradient_accumulation_steps: int = 1
    iterations_per_loop: int = ITERATIONS_PER_LOOP
    save_checkpoints_steps: int = SAVE_CHECKPOINTS_STEPS
    log_every_secs: float | None = None
    save_checkpoints_secs: float | None = None
    keep_checkpoint_max: int = 5
    inference_precision: str = "float32"

    @classmethod
    def for_strategy(cls, strategy, iterations_per_loop=None, save_checkpoints_steps=None,
                     log_every_secs=None, save_checkpoints_secs=None, **fields):
        """A TrainingConfig whose logging and saving cadence suits the device.

        Each cadence argument is None when the user left it unset. On a TPU a
        host round trip is expensive, and the original's cadence stays: a
        loop and a checkpoint every 1000 steps. On a CPU or GPU, 1000 steps
        can take an hour: there each loop is sized to take about
        LOG_EVERY_SECS and a checkpoint is also saved every
        SAVE_CHECKPOINTS_SECS, unless the user gave iterations_per_loop
        (respectively save_checkpoints_steps): who sets the original's
        setting gets the original's behaviour.

        Args:
          strategy: The run's strategy.
          iterations_per_loop: Given, or None.
          save_checkpoints_steps: Given, or None.
          log_every_secs: Given, or None.
          save_checkpoints_secs: Given, or None.
          **fields: The other fields of TrainingConfig.

        Returns:
          A TrainingConfig.
        """
        on_tpu = isinstance(strategy, tf.distribute.TPUStrategy)
        if log_every_secs is None and not (on_tpu or iterations_per_loop is not None):
            log_every_secs = LOG_EVERY_SECS
        if save_checkpoints_secs is None and not (on_tpu or save_checkpoints_steps is not None):
            save_checkpoints_secs = SAVE_CHECKPOINTS_SECS
        if iterations_per_loop is None:
            iterations_per_loop = ITERATIONS_PER_LOOP
        if save_checkpoints_steps is None:
            save_checkpoints_steps = SAVE_CHECKPOINTS_STEPS
        return cls(iterations_per_loop=iterations_per_loop,
                   save_checkpoints_steps=save_checkpoints_steps,
                   log_every_secs=log_every_secs, save_checkpoints_secs=save_checkpoints_secs,
                   **fields)
