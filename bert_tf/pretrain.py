"""Pretraining with masked LM and next-sentence prediction, as run_pretraining.py does it.

run() takes a configs.PretrainingConfig through the whole job it asks for:
it checks the records against the settings before any model is built, trains
on input_file (resuming from the newest checkpoint in output_dir by itself),
evaluates on eval_input_file and writes eval_results.txt; it returns a
PretrainingResult. It is a PretrainingJob through runner.run, the phases
every training job goes through. run_pretraining.py is its flags
(script_flags.pretraining_flags()), their config() and run(); the notebook
and Python callers build the PretrainingConfig directly. The steps it is made of, in
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

from bert_tf import runner
from bert_tf.checkpoints import checkpoints
from bert_tf.data.fingerprints import fingerprints
from bert_tf.records import input_pipeline
from bert_tf.runtime import run_setup
from bert_tf.tasks import PretrainingTask
from bert_tf.training import run_checks, run_dir, training_loop


class PretrainingError(ValueError):
    """A setting or input that pretraining cannot run with; the message says which."""


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
    run, model, masking = config.run, config.model, config.masking
    if not run.do_train and not run.do_eval:
        raise PretrainingError("at least one of --do_train or --do_eval must be True")
    if not model.bert_config_file and not model.init_checkpoint:
        raise PretrainingError("give --bert_config_file, or an --init_checkpoint that has one")
    check_lengths(model.max_seq_length, config.data.max_predictions_per_seq)
    check_masking(masking.dynamic_masking, masking.vocab_file, masking.masked_lm_prob)
    run_checks.check_learning_rate(run.do_train, config.optimizer.learning_rate)
    run_checks.check_weights_source(
        run.output_dir, model.init_checkpoint, run.do_train, run.do_eval,
        allow_random_weights=run.allow_random_weights)
    if run.do_train:
        run_checks.warn_warmup(config.num_train_steps, config.num_warmup_steps,
                               config.optimizer.learning_rate)


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
    return run_setup.prepare(config.runtime)


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
            patterns, config.model.max_seq_length, config.data.max_predictions_per_seq)
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
    if config.masking.dynamic_masking and is_training:
        masking = masking_config(config.masking.vocab_file, config.masking.masked_lm_prob)

    def fn(input_context):
        # Looked up at each call, so that a test can replace the reader.
        return input_pipeline.pretraining_dataset(
            patterns, input_context.get_per_replica_batch_size(batch_size),
            config.model.max_seq_length, config.data.max_predictions_per_seq, is_training,
            input_context=input_context, dynamic_masking=masking)
    return fn


def training_data_settings(config):
    """What the training input is: run_dir's "training data" group of settings.

    Args:
      config: A PretrainingConfig.

    Returns:
      A dict: the input files' fingerprints and how they are read.
    """
    settings = {"input_files": fingerprints(input_pipeline.expand_patterns(
                    config.data.input_file)),
                "max_seq_length": config.model.max_seq_length,
                "max_predictions_per_seq": config.data.max_predictions_per_seq,
                "dynamic_masking": config.masking.dynamic_masking}
    if config.masking.dynamic_masking:
        settings["masked_lm_prob"] = config.masking.masked_lm_prob
    return settings


class PretrainingJob(runner.Job):
    """Pretraining, phase by phase (runner.run drives it); see run().

    Attributes:
      config: The PretrainingConfig.
      runtime: The run's run_setup.Runtime (setup()'s unless given).
      trainer: The Trainer, once prepared.
      micro_batch: The per-replica micro-batch of training, once prepared.
      history: Trainer.train's records, once trained.
    """

    def __init__(self, config, runtime=None):
        """A job of the config.

        Args:
          config: A PretrainingConfig.
          runtime: setup()'s run_setup.Runtime, for a caller that runs
            several jobs in one process; None: prepare() makes it.
        """
        self.config = config
        self.runtime = runtime
        self.trainer = None
        self.micro_batch = None
        self.history = ()

    @property
    def actions(self):
        return runner.Actions(train=self.config.run.do_train, evaluate=self.config.run.do_eval)

    def check(self):
        check_actions(self.config)

    def prepare(self):
        """Sets up the runtime, checks the model's config, the batches and every record,
        then builds the Trainer, resumed from output_dir or initialized."""
        config = self.config
        run, data, model, batches = config.run, config.data, config.model, config.batches
        if self.runtime is None:
            self.runtime = setup(config)
        strategy = self.runtime.strategy
        bert_config = checkpoints.find_config(model.init_checkpoint, model.bert_config_file)
        bert_config.check_max_seq_length(model.max_seq_length)
        self.micro_batch = run_setup.validate_batch_sizes(
            strategy, batches.train_batch_size, config.optimizer.gradient_accumulation_steps,
            do_train=run.do_train, eval_batch_size=batches.eval_batch_size)
        if run.do_train:
            check_records("input_file", data.input_file, config)
        if run.do_eval:
            check_records("eval_input_file" if data.eval_input_file else "input_file",
                          self.eval_patterns, config)
        self.trainer = training_loop.Trainer(
            PretrainingTask(model.max_seq_length, data.max_predictions_per_seq), bert_config,
            self.runtime, config.training_config(strategy))
        try:
            self.trainer.restore(model.init_checkpoint)
        except ValueError as e:  # CheckpointError: names the variable
            raise ValueError(f"--init_checkpoint: {e}") from None
        if self.trainer.is_chief:
            bert_config.to_json_file(os.path.join(run.output_dir, "bert_config.json"))
            if run.do_train:
                # Training on in a folder means training on the same records.
                run_dir.check_settings(run.output_dir, "training data",
                                       training_data_settings(config),
                                       resuming=self.trainer.global_step > 0)

    @property
    def eval_patterns(self):
        """The records evaluation reads: eval_input_file, else input_file (the original's)."""
        return self.config.data.eval_input_file or self.config.data.input_file

    def train(self):
        config = self.config
        global_batch = config.batches.train_batch_size
        logging.info("Training: %d steps, batch %d (%d per replica and micro-batch).",
                     config.num_train_steps, global_batch, self.micro_batch)
        micro_batches = global_batch // config.optimizer.gradient_accumulation_steps
        self.history = tuple(self.trainer.train(
            dataset_fn(config, config.data.input_file, micro_batches, True),
            config.num_train_steps, global_batch))

    def choose_model(self):
        """Pretraining evaluates its newest model, the one the Trainer holds."""

    def evaluate(self):
        results = self.trainer.evaluate(
            dataset_fn(self.config, self.eval_patterns, self.config.batches.eval_batch_size,
                       False),
            max_steps=self.config.data.max_eval_steps)
        self.trainer.write_eval_results(results)
        return results

    def result(self, eval_results):
        return PretrainingResult(self.trainer, self.history, eval_results)


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
    return runner.run(PretrainingJob(config, runtime))
