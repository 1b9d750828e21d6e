"""The parts that every training run's config is made of, each setting declared once.

A job's config (jobs.py: PretrainingConfig, FinetuneConfig) is these parts
plus its own settings; each part is a frozen dataclass whose fields are
setting()s, named as the scripts' flags, with the original repository's
defaults where it had the flag:

  RunSettings       the run's folder and what it does (train, evaluate)
  ModelSettings     the model a run starts from, and its sequence length
  VocabSettings     how text becomes the model's word pieces (fine-tuning)
  BatchSizes        the training and evaluation batches
  OptimizerSettings the optimizer and its learning rate: what training's result depends on
  CadenceSettings   how often a run logs and saves, and how many checkpoints it keeps
  RuntimeSettings   precision, XLA, seed and TPU (TpuConfig): where and how a run computes
"""

import dataclasses

import tensorflow as tf

from bert_tf.runtime import cpu, precision, tpu_rules, xla
from bert_tf.settings import required_setting, setting
from bert_tf.training import optimization

# The original's cadence: a loop of steps per host round trip, and a
# checkpoint, every 1000 steps. Off a TPU, unless those are given, loops are
# sized to log every LOG_EVERY_SECS and a checkpoint is also saved every
# SAVE_CHECKPOINTS_SECS (CadenceSettings.for_strategy).
ITERATIONS_PER_LOOP = 1000
SAVE_CHECKPOINTS_STEPS = 1000
LOG_EVERY_SECS = 30.0
SAVE_CHECKPOINTS_SECS = 600.0


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The run's folder and what the run does there.

    Attributes:
      output_dir: Checkpoints, summaries and results go here; a run resumes
        from the newest checkpoint here.
      do_train, do_eval: Whether the run trains, and evaluates.
      allow_random_weights: Evaluate, predict or export even where the
        weights, or the task's head, would be random (run_checks).
    """

    output_dir: str = required_setting(
        "Where checkpoints, summaries and results are written. A run resumes from the newest "
        "checkpoint here by itself.")
    do_train: bool = setting(False, "Whether to run training.")
    do_eval: bool = setting(False, "Whether to run eval on the dev set.")
    allow_random_weights: bool = setting(
        False,
        "Evaluate, predict or export even with random weights: without it, --do_eval, "
        "--do_predict and --export_dir need a checkpoint in --output_dir, --do_train, or an "
        "--init_checkpoint that holds the task's head.")


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    """The model a run starts from, and the length of its sequences.

    Attributes:
      init_checkpoint: The initial weights (any format checkpoints.py
        reads), or None for random weights.
      bert_config_file: The encoder's config; None: the one beside
        init_checkpoint.
      max_seq_length: Tokens per sequence, [CLS] and [SEP] included.
    """

    init_checkpoint: str | None = setting(
        None,
        "Initial weights: an original Google bert_model.ckpt, a Hugging Face folder "
        "(config.json + model.safetensors), or a bert_tf checkpoint.")
    bert_config_file: str | None = setting(
        None,
        "bert_config.json of the model (the original's or a Hugging Face config.json). "
        "Optional when init_checkpoint is a Hugging Face folder or has one beside it.")
    # Bounds are checked when the flags are parsed, before any work: a
    # --max_seq_length=2 would turn every example into [CLS][SEP].
    max_seq_length: int = setting(
        128,
        "Tokens per sequence after WordPiece, [CLS]/[SEP] included. "
        "Longer inputs are truncated, shorter ones padded.", lower_bound=4)


@dataclasses.dataclass(frozen=True)
class VocabSettings:
    """How text becomes the model's word pieces.

    Attributes:
      vocab_file: None: the vocab.txt beside init_checkpoint.
      do_lower_case: None: the init_checkpoint folder's record, else True.
    """

    vocab_file: str | None = setting(
        None,
        "vocab.txt the model was trained with; default: the vocab.txt beside "
        "--init_checkpoint (Google's and Hugging Face folders have one).")
    do_lower_case: bool | None = setting(
        None,
        "Lower-case the input: True for uncased models, False for cased ones. Default: a "
        "Hugging Face --init_checkpoint folder's tokenizer_config.json setting, else True.",
        flag_default=True)


@dataclasses.dataclass(frozen=True)
class BatchSizes:
    """The global batches of training and evaluation.

    Attributes:
      train_batch_size: Examples per optimizer update, over all replicas.
      eval_batch_size: Examples per evaluation step, over all replicas.
    """

    train_batch_size: int = setting(32, "Total (global) batch size for training.",
                                    lower_bound=1)
    eval_batch_size: int = setting(8, "Total batch size for eval.", lower_bound=1)


@dataclasses.dataclass(frozen=True)
class OptimizerSettings:
    """The optimizer and its learning rate: what a training's result depends on, with the
    step counts.

    The original's settings keep their defaults, except where the original
    has a known flaw: Adam's bias correction is on, and the learning rate
    decays from the end of warmup.

    Attributes:
      learning_rate: The peak learning rate.
      optimizer: "adamw" or "lamb" (optimization.OPTIMIZERS).
      adam_bias_correction: Adam's bias correction (the original had none).
      decay_after_warmup: Decay the learning rate from the end of warmup
        (Hugging Face's schedule), not from step 0 (the original's).
      gradient_accumulation_steps: Micro-batches per optimizer update.
    """

    learning_rate: float = setting(
        5e-5, "The peak learning rate (of AdamW or LAMB), after warmup.",
        check=lambda value: value >= 0, check_message="--learning_rate must not be negative")
    optimizer: str = setting(
        "adamw",
        "adamw: the original's Adam with decoupled weight decay; lamb: for large batches.",
        choices=tuple(optimization.OPTIMIZERS))
    adam_bias_correction: bool = setting(
        True,
        "Apply Adam's bias correction, which the original omitted; "
        "--noadam_bias_correction gives the original's update.")
    decay_after_warmup: bool = setting(
        True,
        "Decay the learning rate linearly from its peak at the end of warmup to 0 "
        "(Hugging Face's schedule). --nodecay_after_warmup gives the original's, whose decay "
        "runs from step 0, so that the rate drops to 1 - warmup_proportion of the peak "
        "after warmup and stays that much lower.")
    gradient_accumulation_steps: int = setting(
        1,
        "Micro-batches per update: train_batch_size is split into this many pieces, so "
        "that a large batch fits in memory.", lower_bound=1)


@dataclasses.dataclass(frozen=True)
class CadenceSettings:
    """How often a run logs and saves, and how many checkpoints it keeps.

    The four cadence settings are None where the user left them to the
    device (for_strategy() fills them in).

    Attributes:
      iterations_per_loop: The most steps per tf.function call (host round trip).
      save_checkpoints_steps: Checkpoint interval, in steps.
      log_every_secs: If set, each loop runs as many steps as take about this
        long, measured on the loops before (the first loop is one step); at
        most iterations_per_loop. None: every loop is iterations_per_loop.
      save_checkpoints_secs: If set, a checkpoint is also saved after the
        first loop that ends this long after the last save.
      keep_checkpoint_max: How many checkpoints to keep.
    """

    iterations_per_loop: int | None = setting(
        None,
        "The most steps per tf.function call (one host round trip); a progress line is "
        "logged once per loop.", lower_bound=1, flag_default=ITERATIONS_PER_LOOP)
    save_checkpoints_steps: int | None = setting(
        None, "Save a checkpoint every this many steps, and at the end.", lower_bound=1,
        flag_default=SAVE_CHECKPOINTS_STEPS)
    log_every_secs: float | None = setting(
        None,
        "On a CPU or GPU, unless --iterations_per_loop is given: size each loop from the "
        "measured step time to take about this long, so that a progress line (step, loss, "
        "lr, examples/s, time left) comes this often. On a TPU only when given.",
        lower_bound=0.0, flag_default=LOG_EVERY_SECS)
    save_checkpoints_secs: float | None = setting(
        None,
        "On a CPU or GPU, unless --save_checkpoints_steps is given: also save a "
        "checkpoint once this long has passed since the last one, so that a killed run "
        "loses at most this much. On a TPU only when given.", lower_bound=0.0,
        flag_default=SAVE_CHECKPOINTS_SECS)
    keep_checkpoint_max: int = setting(5, "How many checkpoints to keep.", lower_bound=1)

    def for_strategy(self, strategy):
        """The cadence that suits the device, where the user left it unset.

        On a TPU a host round trip is expensive, and the original's cadence
        stays: a loop and a checkpoint every 1000 steps. On a CPU or GPU, 1000
        steps can take an hour: there each loop is sized to take about
        LOG_EVERY_SECS and a checkpoint is also saved every
        SAVE_CHECKPOINTS_SECS, unless the user gave iterations_per_loop
        (respectively save_checkpoints_steps): who sets the original's
        setting gets the original's behaviour.

        Args:
          strategy: The run's strategy.

        Returns:
          A CadenceSettings whose iterations_per_loop and
          save_checkpoints_steps are set; log_every_secs and
          save_checkpoints_secs are None where off.
        """
        on_tpu = isinstance(strategy, tf.distribute.TPUStrategy)
        log_every_secs, save_checkpoints_secs = self.log_every_secs, self.save_checkpoints_secs
        if log_every_secs is None and not (on_tpu or self.iterations_per_loop is not None):
            log_every_secs = LOG_EVERY_SECS
        if save_checkpoints_secs is None and not (
                on_tpu or self.save_checkpoints_steps is not None):
            save_checkpoints_secs = SAVE_CHECKPOINTS_SECS
        iterations_per_loop, save_checkpoints_steps = (
            self.iterations_per_loop, self.save_checkpoints_steps)
        if iterations_per_loop is None:
            iterations_per_loop = ITERATIONS_PER_LOOP
        if save_checkpoints_steps is None:
            save_checkpoints_steps = SAVE_CHECKPOINTS_STEPS
        return dataclasses.replace(
            self, iterations_per_loop=iterations_per_loop,
            save_checkpoints_steps=save_checkpoints_steps, log_every_secs=log_every_secs,
            save_checkpoints_secs=save_checkpoints_secs)


@dataclasses.dataclass(frozen=True)
class TpuConfig:
    """Which TPU to use, in the original's terms (the original's TPU flags, and --tpu).

    distribution.resolve_strategy() takes these as its arguments.

    Attributes:
      tpu: A TPU name, grpc:// address or "local"; None: detect one.
      use_tpu: The original's flag: require a TPU.
      tpu_name: The original's name or address of the Cloud TPU.
      tpu_zone: Its GCE zone.
      gcp_project: Its GCP project.
      master: The original's TPU master address (grpc://...).
      num_tpu_cores: The original's flag, checked against the TPU's cores.
    """

    tpu: str | None = setting(
        None,
        "TPU to use: a name or grpc:// address, or 'local' on a TPU VM. Empty: "
        "detect one (Colab, TPU VM), else use the GPUs, else the CPU.")
    use_tpu: bool = setting(
        False,
        "Original flag. Require a TPU; with --tpu_name or --master naming it. A TPU "
        "that is found is used even without this flag.")
    tpu_name: str | None = setting(None, "Original flag: the Cloud TPU name or address.")
    tpu_zone: str | None = setting(None, "Original flag: GCE zone of the Cloud TPU.")
    gcp_project: str | None = setting(None, "Original flag: GCP project of the Cloud TPU.")
    master: str | None = setting(None, "Original flag: TPU master address (grpc://...).")
    num_tpu_cores: int = setting(
        8,
        "Original flag: TPU cores to use. TPUStrategy uses every core of the TPU (1 on "
        "Colab's v5e-1, 8 on a v2-8 or v3-8); the replica count it uses is logged.")


@dataclasses.dataclass(frozen=True)
class RuntimeSettings:
    """Where and how a run computes: precision, XLA, seed and TPU.

    run_setup.prepare() turns these into the run's Runtime (the strategy,
    the dtype policy and the XLA choice), once, before any model is built.

    Attributes:
      mixed_precision: Training's precision, one of precision.PRECISIONS.
      inference_precision: What predictions, evaluations and exports
        compute in, one of precision.INFERENCE_PRECISIONS; float32 whatever
        training used.
      jit_compile: XLA for the train, eval and predict steps: True, False
        or None (auto: by device and precision; see run_setup.Runtime).
      seed: Seeds the initial weights, dropout and shuffling; None: every
        run differs.
      tpu: Which TPU to use, if any.
    """

    mixed_precision: str = setting(
        "auto",
        "Training's precision. auto: bfloat16 on TPU, float16 with loss scaling on GPU; on a "
        "CPU, bfloat16 where it multiplies bfloat16 faster than float32 (amx_bf16 in "
        "/proc/cpuinfo, or avx512_bf16 on AMD; not avx512_bf16 alone on Intel, where float32 "
        f"is faster; {cpu.CPU_BFLOAT16_ENV}=1 or 0 overrides the detection), else "
        "float32.", choices=precision.PRECISIONS)
    inference_precision: str = setting(
        "float32",
        "What outputs compute in (--do_eval and --do_predict, --export_dir SavedModels, "
        "extract_features.py's features), from the same weights: float32 on every device by "
        "default; bfloat16 or float16 (faster where the device multiplies them natively, "
        "outputs different from float32's in the second or third digit); as_trained: "
        "training's precision.", choices=tuple(precision.INFERENCE_PRECISIONS))
    jit_compile: bool | None = setting(
        None,
        "Compile the train, eval and predict steps with XLA. auto: yes, except in bfloat16 "
        "on a CPU, where XLA's CPU backend leaves the bfloat16 matrix units unused, and in "
        "float32 on a CPU with amx_bf16 or avx512_bf16, where TensorFlow's own kernels are "
        "faster; "
        "--export_dir SavedModels are XLA-compiled only with true. With "
        "--dynamic_padding on a CPU, false is faster (XLA compiles once per batch length). "
        f"On a TPU every step is compiled anyway; {tpu_rules.ENV}=1 applies the TPU's rules "
        "on any device (every step compiled, static input shapes checked).",
        choices=xla.JIT_COMPILE_CHOICES, case_sensitive=False, flag_default="auto",
        parse=xla.parse_jit_compile)
    seed: int | None = setting(
        None,
        "Seed for the initial head weights, dropout and shuffling, for "
        "repeatable runs; by default every run differs.")
    tpu: TpuConfig = TpuConfig()
