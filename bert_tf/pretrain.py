"""Pretraining with masked LM and next-sentence prediction, as run_pretraining.py does it.

run() takes a configs.PretrainingConfig through the whole job it asks for:
it checks the settings, the model's files and every record before any model
is built, trains on input_file (resuming from the newest checkpoint in
output_dir by itself), evaluates on eval_input_file and writes
eval_results.txt; it returns a PretrainingResult. It is a PretrainingJob
through runner.run, the phases every training job goes through, with
PretrainingTask (tasks/pretraining.py) as its task and
data.pretraining.PretrainingData as its data, as a fine-tuning job has its
family's. run_pretraining.py is its flags (script_flags.pretraining_flags()),
their config() and run(); the notebook and Python callers build the
PretrainingConfig directly. The checks, in order:
  check_actions()   refuses a run with nothing to do, no model config, or
                    settings that do not fit (check_lengths(),
                    check_masking(), which the script's flag validators
                    run too);
  check_vocab()     the vocab (--vocab_file, or the one beside the model's
                    config) against the model's vocab_size, before the
                    records' ids are checked against it (PretrainingData).

Errors in the user's input raise PretrainingError (a ValueError), the
data's PretrainingRecordsError, or the ConfigError and CheckpointError of
the model's files, with a message that names the flag or file.
"""

import dataclasses
import os

from absl import logging

from bert_tf import runner
from bert_tf.checkpoints import checkpoints, model_names
from bert_tf.data.pretraining import PretrainingData, masking_config
from bert_tf.pretraining_data import PretrainingDataConfig
from bert_tf.runtime import run_setup
from bert_tf.tasks import PretrainingTask
from bert_tf.text import tokenization
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

    Without dynamic_masking the records' own masks are used, so a
    masked_lm_prob other than the default would be ignored: it is refused.

    Args:
      dynamic_masking: Whether the run masks anew.
      vocab_file: The data's vocab.txt.
      masked_lm_prob: The share of the tokens to mask.

    Raises:
      PretrainingError: naming the flag that does not fit.
    """
    if not dynamic_masking:
        if masked_lm_prob != PretrainingDataConfig.masked_lm_prob:
            raise PretrainingError(
                f"--masked_lm_prob={masked_lm_prob:g} applies only with --dynamic_masking: "
                "the records hold the masks that create_pretraining_data.py drew; add "
                "--dynamic_masking, or drop --masked_lm_prob")
        return
    if not vocab_file:
        raise PretrainingError("--dynamic_masking needs --vocab_file")
    try:
        masking_config(vocab_file, masked_lm_prob)
    except ValueError as e:
        raise PretrainingError(f"--dynamic_masking: {e}") from None


def find_vocab(config):
    """The vocab a pretraining run's model goes with, where one is known.

    Args:
      config: A PretrainingConfig.

    Returns:
      --vocab_file, else a vocab.txt beside --bert_config_file or
      --init_checkpoint (learn_vocab.py's and Google's folders keep it
      there), else None.
    """
    if config.masking.vocab_file:
        return config.masking.vocab_file
    bert_config_file = config.model.bert_config_file
    if bert_config_file:
        beside = os.path.join(os.path.dirname(bert_config_file), "vocab.txt")
        if os.path.isfile(beside):
            return beside
    if config.model.init_checkpoint:
        try:
            return checkpoints.find_vocab(config.model.init_checkpoint)
        except ValueError:
            return None
    return None


def check_vocab(config, bert_config):
    """Checks the run's vocab against the model's vocab_size, before the first step.

    A vocab of another size than the model's embedding table would be
    refused only when the pretrained model is fine-tuned; with
    dynamic_masking, its ids would fail (or, on a GPU, read zeros) inside the
    first step.

    Args:
      config: A PretrainingConfig.
      bert_config: The model's BertConfig.

    Raises:
      PretrainingError: naming the vocab, both sizes and what to change.
    """
    vocab_file = find_vocab(config)
    if vocab_file is None:
        return
    num_tokens = len(tokenization.load_vocab(vocab_file))
    try:
        bert_config.check_vocab_size(num_tokens, vocab_file)
    except ValueError as e:
        raise PretrainingError(
            f"{e}; set vocab_size to {num_tokens} in the model's bert_config.json, or give "
            "the vocab the model was made with") from None


def setup(config):
    """Seeds, picks the strategy, the precision and XLA: run_setup.prepare() of the config.

    Args:
      config: A PretrainingConfig.

    Returns:
      The run's run_setup.Runtime.
    """
    return run_setup.prepare(config.runtime)


def with_local_checkpoint(config):
    """The config with its init_checkpoint's name turned into the local path, downloaded once.

    Args:
      config: A PretrainingConfig.

    Returns:
      The PretrainingConfig, whose model.init_checkpoint is a path
      (model_names.local_path).

    Raises:
      ModelNameError: for a name that resolves to nothing, or that cannot
        be fetched (one line).
    """
    local = model_names.local_path(config.model.init_checkpoint)
    if local == config.model.init_checkpoint:
        return config
    return dataclasses.replace(
        config, model=dataclasses.replace(config.model, init_checkpoint=local))


class PretrainingJob(runner.Job):
    """Pretraining, phase by phase (runner.run drives it); see run().

    Attributes:
      config: The PretrainingConfig.
      runtime: The run's run_setup.Runtime (setup()'s unless given).
      data: The PretrainingData, once prepared.
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
        self.data = None
        self.trainer = None
        self.micro_batch = None
        self.history = ()

    @property
    def actions(self):
        return runner.Actions(train=self.config.run.do_train, evaluate=self.config.run.do_eval)

    def check(self):
        check_actions(self.config)

    def prepare(self):
        """Sets up the runtime, checks the model's config and vocab, the batches and every
        record, then builds the Trainer, resumed from output_dir or initialized."""
        self.config = with_local_checkpoint(self.config)
        config = self.config
        run, model, batches = config.run, config.model, config.batches
        if self.runtime is None:
            self.runtime = setup(config)
        strategy = self.runtime.strategy
        bert_config = checkpoints.find_config(model.init_checkpoint, model.bert_config_file)
        bert_config.check_max_seq_length(model.max_seq_length)
        check_vocab(config, bert_config)
        self.micro_batch = run_setup.validate_batch_sizes(
            strategy, batches.train_batch_size, config.optimizer.gradient_accumulation_steps,
            do_train=run.do_train, eval_batch_size=batches.eval_batch_size)
        data = PretrainingData(config.data, config.masking, model.max_seq_length,
                               bert_config.vocab_size)
        data.read(([data.train_split] if run.do_train else [])
                  + (list(data.eval_splits) if run.do_eval else []))
        self.data = data
        self.trainer = training_loop.Trainer(
            PretrainingTask(model.max_seq_length, config.data.max_predictions_per_seq),
            bert_config, self.runtime, config.training_config(strategy))
        try:
            self.trainer.restore(model.init_checkpoint)
        except checkpoints.CheckpointError as e:  # names the variable
            raise checkpoints.CheckpointError(f"--init_checkpoint: {e}") from None
        except run_dir.RunDirError as e:
            # output_dir's model has other shapes: the config to change is the one given.
            source = (f"--bert_config_file={model.bert_config_file}" if model.bert_config_file
                      else f"the config of --init_checkpoint={model.init_checkpoint}")
            raise run_dir.RunDirError(f"{source}: {e}") from None
        if self.trainer.is_chief:
            bert_config.to_json_file(os.path.join(run.output_dir, "bert_config.json"))
            if run.do_train:
                # Training on in a folder means training on the same records.
                run_dir.check_settings(run.output_dir, "training data",
                                       data.training_settings(),
                                       resuming=self.trainer.global_step > 0)

    def train(self):
        config, data = self.config, self.data
        global_batch = config.batches.train_batch_size
        logging.info("Training on %s: %d steps, batch %d (%d per replica and micro-batch).",
                     data.describe(data.train_split), config.num_train_steps, global_batch,
                     self.micro_batch)
        micro_batches = global_batch // config.optimizer.gradient_accumulation_steps
        self.history = tuple(self.trainer.train(
            data.dataset_fn(data.train_split, micro_batches), config.num_train_steps,
            global_batch))

    def choose_model(self):
        """Pretraining evaluates its newest model, the one the Trainer holds."""

    def evaluate(self):
        data = self.data
        results = self.trainer.evaluate(
            data.dataset_fn(data.eval_splits[0], self.config.batches.eval_batch_size),
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
