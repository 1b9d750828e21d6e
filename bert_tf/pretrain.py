"""Pretraining with masked LM and next-sentence prediction, as run_pretraining.py does it.

run() takes a PretrainingConfig through the whole job it asks for: it checks
the records against the settings before any model is built, trains on
input_file (resuming from the newest checkpoint in output_dir by itself),
evaluates on eval_input_file and writes eval_results.txt; it returns a
PretrainingResult. run_pretraining.py is its flags,
script_flags.pretraining_config() and run(); the notebook and Python
callers build the PretrainingConfig directly. The steps it is made of, in
order:
  check_actions()   refuses a run with nothing to do, no model config, or
                    settings that do not fit (check_lengths(),
                    check_masking(), which the script's flag validators
                    run too);
  setup()           seed, strategy, precision and XLA (the run's
                    run_setup.Runtime), before any model is built;
  check_records()   the records against max_seq_length and
                    max_predictions_per_seq;
  dataset_fn()      the input pipeline for Trainer.train / evaluate.

Errors in the user's input raise PretrainingError (a ValueError), or the
ConfigError and CheckpointError of the model's files, with a message that
names the flag or file.
"""

import dataclasses
import functools
import os

from absl import logging

from bert_tf import finetune
from bert_tf.model import checkpoints
from bert_tf.pretraining_data.config import PretrainingDataConfig
from bert_tf.records import input_pipeline
from bert_tf.tasks import PretrainingTask
from bert_tf.training import distribution, run_checks, run_dir, run_setup, training_loop

# The settings the trainer shares with the data builder and the fine-tuning
# scripts take their defaults from those: each default is written once.
DATA = PretrainingDataConfig
FINETUNE = finetune.FinetuneConfig
TRAINING = run_setup.TrainingConfig


class PretrainingError(ValueError):
    """A setting or input that pretraining cannot run with; the message says which."""


@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """Everything a pretraining run is asked to do.

    Each field is named as run_pretraining.py's flag that sets it
    (script_flags.pretraining_config() builds one from the flags), and its
    default is that flag's (the flags take theirs from here, and from the
    data builder's and fine-tuning's configs for the settings they share).

    Attributes:
      input_file: TFRecords of create_pretraining_data.py (this one's or
        the original's): comma-separated patterns, globs allowed.
      output_dir: Checkpoints, summaries and eval_results.txt go here; a
        run resumes from the newest checkpoint here.
      eval_input_file: The records to evaluate on; None: input_file.
      bert_config_file: The encoder's config; None: the one beside
        init_checkpoint.
      init_checkpoint: The initial weights (any format checkpoints.py
        reads), or None for random weights.
      max_seq_length: Tokens per record, as the records were written.
      max_predictions_per_seq: Masked positions per record, as written.
      do_train, do_eval: What the run does.
      train_batch_size, eval_batch_size: Global batches.
      num_train_steps: Optimizer updates in all; a resumed run stops there
        too, and the learning rate decays to 0 there.
      num_warmup_steps: Steps of linear learning-rate warmup.
      max_eval_steps: Evaluate on at most this many batches.
      dynamic_masking: Draw new masks for each training batch from the
        unmasked tokens (RoBERTa's way); evaluation keeps the stored masks.
      vocab_file: With dynamic_masking: the data's vocab.txt.
      masked_lm_prob: With dynamic_masking: the share of tokens to mask.
      learning_rate, optimizer, adam_bias_correction, decay_after_warmup,
        gradient_accumulation_steps, keep_checkpoint_max, inference_precision:
        As in run_setup.TrainingConfig.
      jit_compile: XLA for the train and eval steps: True, False or None
        (auto: by device and precision; see run_setup.Runtime).
      iterations_per_loop, save_checkpoints_steps, log_every_secs,
        save_checkpoints_secs: The cadence, each None where not given (see
        run_setup.TrainingConfig.for_strategy).
      mixed_precision: Training's precision, one of precision.PRECISIONS.
      seed: Seeds the initial weights, dropout and shuffling; None: every
        run differs.
      tpu: Which TPU to use, if any.
      allow_random_weights: Evaluate even where the weights would be random
        (no checkpoint in output_dir, no init_checkpoint, no training).
    """

    input_file: str
    output_dir: str
    eval_input_file: str | None = None
    bert_config_file: str | None = None
    init_checkpoint: str | None = None
    max_seq_length: int = FINETUNE.max_seq_length
    max_predictions_per_seq: int = DATA.max_predictions_per_seq
    do_train: bool = False
    do_eval: bool = False
    train_batch_size: int = FINETUNE.train_batch_size
    eval_batch_size: int = FINETUNE.eval_batch_size
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    max_eval_steps: int = 100
    dynamic_masking: bool = False
    vocab_file: str | None = None
    masked_lm_prob: float = DATA.masked_lm_prob
    learning_rate: float = TRAINING.learning_rate
    optimizer: str = TRAINING.optimizer
    adam_bias_correction: bool = TRAINING.adam_bias_correction
    decay_after_warmup: bool = TRAINING.decay_after_warmup
    gradient_accumulation_steps: int = TRAINING.gradient_accumulation_steps
    iterations_per_loop: int | None = None
    save_checkpoints_steps: int | None = None
    log_every_secs: float | None = None
    save_checkpoints_secs: float | None = None
    keep_checkpoint_max: int = TRAINING.keep_checkpoint_max
    jit_compile: bool | None = FINETUNE.jit_compile
    mixed_precision: str = FINETUNE.mixed_precision
    inference_precision: str = TRAINING.inference_precision
    seed: int | None = None
    tpu: distribution.TpuConfig = distribution.TpuConfig()
    allow_random_weights: bool = False

    def training_config(self, strategy):
        """The Trainer's run_setup.TrainingConfig for this run.

        Args:
          strategy: The run's strategy, for the cadence.

        Returns:
          A run_setup.TrainingConfig.
        """
        settings = {name: getattr(self, name) for name in run_setup.USER_SETTINGS}
        return run_setup.TrainingConfig.for_strategy(
            strategy, output_dir=self.output_dir, num_train_steps=self.num_train_steps,
            num_warmup_steps=self.num_warmup_steps, **settings)


@dataclasses.dataclass(frozen=True)
class PretrainingResult:
    """What run() did.

    Attributes:
      trainer: The Trainer, at its final step.
      history: Trainer.train's records, one per loop; empty when the run
        did not train, or was already at num_train_steps.
      eval_results: The evaluation's metrics with global_step (what
        eval_results.txt holds), or None when the run did not evaluate.
    """

    trainer: training_loop.Trainer
    history: tuple
    eval_results: dict | None


def check_actions(config):
    """Refuses a run that has nothing to do, or settings that cannot work together.

    Args:
      config: A PretrainingConfig.

    Raises:
      PretrainingError: naming the flags to give or change.
      run_checks.RunCheckError: evaluation of random weights not asked for,
        or training at a learning rate of 0.
    """
    if not config.do_train and not config.do_eval:
        raise PretrainingError("at least one of --do_train or --do_eval must be True")
    if not config.bert_config_file and not config.init_checkpoint:
        raise PretrainingError("give --bert_config_file, or an --init_checkpoint that has one")
    check_lengths(config.max_seq_length, config.max_predictions_per_seq)
    check_masking(config.dynamic_masking, config.vocab_file, config.masked_lm_prob)
    run_checks.check_learning_rate(config.do_train, config.learning_rate)
    run_checks.check_weights_source(
        config.output_dir, config.init_checkpoint, config.do_train, config.do_eval,
        allow_random_weights=config.allow_random_weights)
    if config.do_train:
        run_checks.warn_warmup(config.num_train_steps, config.num_warmup_steps,
                               config.learning_rate)


def check_lengths(max_seq_length, max_predictions_per_seq):
    """Checks that a record can hold its masked positions.

    Args:
      max_seq_length: Tokens per record.
      max_predictions_per_seq: Masked positions per record.

    Raises:
      PretrainingError: if they cannot.
    """
    if max_predictions_per_seq > max_seq_length:
        raise PretrainingError("--max_predictions_per_seq cannot exceed --max_seq_length")


def check_masking(dynamic_masking, vocab_file, masked_lm_prob):
    """Checks at start-up, not at the first training step, that masking can be set up.

    Args:
      dynamic_masking: Whether the run masks anew (else nothing to check).
      vocab_file: The data's vocab.txt.
      masked_lm_prob: The share of the tokens to mask.

    Raises:
      PretrainingError: naming the flag that does not fit.
    """
    if not dynamic_masking:
        return
    if not vocab_file:
        raise PretrainingError("--dynamic_masking needs --vocab_file")
    try:
        masking_config(vocab_file, masked_lm_prob)
    except ValueError as e:
        raise PretrainingError(f"--dynamic_masking: {e}") from None


@functools.cache
def masking_config(vocab_file, masked_lm_prob):
    """The DynamicMaskingConfig of a vocab, read once for the checks and every input pipeline.

    Args:
      vocab_file: The data's vocab.txt.
      masked_lm_prob: The share of the tokens to mask.

    Returns:
      A dynamic_masking.DynamicMaskingConfig.

    Raises:
      ValueError: for a vocab or share that masking cannot use.
    """
    # Imported here: tensorflow_text (about 116 MB resident) loads only for
    # dynamic masking, not with every script that defines the flags.
    from bert_tf.records.dynamic_masking import DynamicMaskingConfig

    return DynamicMaskingConfig.from_vocab_file(vocab_file, masked_lm_prob)


def setup(config):
    """Seeds, picks the strategy, the precision and XLA: run_setup.prepare() of the config.

    Args:
      config: A PretrainingConfig.

    Returns:
      The run's run_setup.Runtime.
    """
    return run_setup.prepare(config.seed, config.tpu, config.mixed_precision,
                             config.jit_compile)


def check_records(flag_name, patterns, config):
    """Checks that the files hold records the config fits.

    A missing, truncated or corrupt file, or a max_seq_length or
    max_predictions_per_seq other than the data's, would otherwise fail only
    after the model is built, in the middle of training.

    Args:
      flag_name: The flag that named the files, for the message.
      patterns: Its value: comma-separated file patterns.
      config: A PretrainingConfig.

    Raises:
      PretrainingError: naming the flag, the file and what does not fit.
    """
    try:
        input_pipeline.check_pretraining_records(
            patterns, config.max_seq_length, config.max_predictions_per_seq)
    except ValueError as e:
        raise PretrainingError(f"--{flag_name}: {e}") from None


def dataset_fn(config, patterns, batch_size, is_training):
    """The input pipeline of some records, for distribute_datasets_from_function.

    Args:
      config: A PretrainingConfig.
      patterns: Comma-separated file patterns.
      batch_size: The global batch (a micro-batch when accumulating).
      is_training: Repeat and shuffle, and mask anew with dynamic_masking.

    Returns:
      A function (tf.distribute.InputContext) -> tf.data.Dataset.
    """
    masking = None
    if config.dynamic_masking and is_training:
        masking = masking_config(config.vocab_file, config.masked_lm_prob)

    def fn(input_context):
        # Looked up at each call, so that a test can replace the reader.
        return input_pipeline.pretraining_dataset(
            patterns, input_context.get_per_replica_batch_size(batch_size),
            config.max_seq_length, config.max_predictions_per_seq, is_training,
            input_context=input_context, dynamic_masking=masking)
    return fn


def training_data_settings(config):
    """What the training input is: run_dir's "training data" group of settings.

    Args:
      config: A PretrainingConfig.

    Returns:
      A dict: the input files' fingerprints and how they are read.
    """
    settings = {"input_files": run_dir.fingerprints(input_pipeline.expand_patterns(
                    config.input_file)),
                "max_seq_length": config.max_seq_length,
                "max_predictions_per_seq": config.max_predictions_per_seq,
                "dynamic_masking": config.dynamic_masking}
    if config.dynamic_masking:
        settings["masked_lm_prob"] = config.masked_lm_prob
    return settings


def run(config, runtime=None):
    """Pretrains and/or evaluates, as the config asks.

    The model's config, the batch sizes and every record are checked before
    the model is built. Training resumes from the newest checkpoint in
    output_dir, else starts from init_checkpoint (or random weights);
    output_dir then holds the checkpoints, bert_config.json, TensorBoard
    summaries and, with do_eval, eval_results.txt.

    Args:
      config: A PretrainingConfig.
      runtime: setup()'s run_setup.Runtime, for a caller that runs several
        jobs in one process; None: setup(config) makes it.

    Returns:
      A PretrainingResult.

    Raises:
      PretrainingError, ConfigError, CheckpointError: naming the flag or
        file that does not fit.
    """
    check_actions(config)
    if runtime is None:
        runtime = setup(config)
    strategy = runtime.strategy
    bert_config = checkpoints.find_config(config.init_checkpoint, config.bert_config_file)
    bert_config.check_max_seq_length(config.max_seq_length)
    micro_batch = run_setup.validate_batch_sizes(
        strategy, config.train_batch_size, config.gradient_accumulation_steps,
        do_train=config.do_train, eval_batch_size=config.eval_batch_size)
    if config.do_train:
        check_records("input_file", config.input_file, config)
    eval_flag = "eval_input_file" if config.eval_input_file else "input_file"
    eval_patterns = config.eval_input_file or config.input_file
    if config.do_eval:
        check_records(eval_flag, eval_patterns, config)

    trainer = training_loop.Trainer(
        PretrainingTask(config.max_seq_length, config.max_predictions_per_seq), bert_config,
        runtime, config.training_config(strategy))
    try:
        trainer.restore(config.init_checkpoint)
    except ValueError as e:  # CheckpointError: names the variable
        raise ValueError(f"--init_checkpoint: {e}") from None
    if trainer.is_chief:
        bert_config.to_json_file(os.path.join(config.output_dir, "bert_config.json"))
        if config.do_train:
            # Training on in a folder means training on the same records.
            run_dir.check_settings(config.output_dir, "training data",
                                   training_data_settings(config),
                                   resuming=trainer.global_step > 0)

    history = []
    if config.do_train:
        logging.info("Training: %d steps, batch %d (%d per replica and micro-batch).",
                     config.num_train_steps, config.train_batch_size, micro_batch)
        micro_batches = config.train_batch_size // config.gradient_accumulation_steps
        history = trainer.train(dataset_fn(config, config.input_file, micro_batches, True),
                                config.num_train_steps, config.train_batch_size)
    results = None
    if config.do_eval:
        results = trainer.evaluate(
            dataset_fn(config, eval_patterns, config.eval_batch_size, False),
            max_steps=config.max_eval_steps)
        trainer.write_eval_results(results)
    return PretrainingResult(trainer, tuple(history), results)
