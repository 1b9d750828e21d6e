"""Fine-tuning as a runner.Job: train, choose the model, evaluate, predict, export.

run() takes a FinetuneConfig, a task and its data through runner.run, the
phases every training job goes through; FinetuneJob holds what the phases
share (the Trainer, the best-model keeper, the SplitCache).
"""

import contextlib
import dataclasses
import os

from absl import logging

from bert_tf import runner
from bert_tf.finetune.checks import (
    FinetuneError,
    check_actions,
    check_config,
    check_lengths,
    splits_to_read,
    train_steps,
)
from bert_tf.finetune.splits import SplitCache, records_dir
from bert_tf.finetune.start import create_trainer, flagged_settings, task_settings
from bert_tf.serving import export
from bert_tf.training import best_checkpoint, run_checks, run_dir, training_loop


@dataclasses.dataclass(frozen=True)
class TrainingProgress:
    """What run() reports after each chunk of training, and once before the first.

    Attributes:
      trainer: The Trainer (its global_step, load_report, ...).
      num_train_steps: The step training ends at.
      history: The chunk's loop records (Trainer.train's); empty before
        training.
      metrics: The first eval split's metrics (the data's score()) at this
        step when the run evaluates, else None.
    """

    trainer: training_loop.Trainer
    num_train_steps: int
    history: tuple = ()
    metrics: dict | None = None


@dataclasses.dataclass(frozen=True)
class FinetuneResult:
    """What run() did, for a caller that looks further (the notebook's plots).

    Attributes:
      trainer: The Trainer, at its final step.
      eval_results: What eval_results.txt holds (without global_step), or
        None when the run did not evaluate.
      predictions: {split: predict()'s dict} of every split evaluated or
        predicted.
    """

    trainer: training_loop.Trainer
    eval_results: dict | None
    predictions: dict


def _train_in_chunks(trainer, train_fn, num_train_steps, global_batch_size, num_chunks=1,
                    every_steps=0):
    """Trains to num_train_steps in equal chunks, and at every multiple of every_steps,
    pausing after each.

    A resumed run skips the chunks it has done; the last chunk always runs,
    so that a run already at num_train_steps still has its settings checked
    against the folder's (Trainer.train), with nothing left to train. The
    caller looks at the model between chunks (run()'s after_chunk).

    Args:
      trainer: The Trainer.
      train_fn: splits.dataset_fn() of the training records.
      num_train_steps: The last step.
      global_batch_size: Examples per optimizer update.
      num_chunks: How many pauses.
      every_steps: Pause at each multiple of it as well; 0: not.

    Yields:
      Each chunk's history (see Trainer.train), after the chunk.
    """
    ends = {max(1, round(num_train_steps * (i + 1) / num_chunks)) for i in range(num_chunks)}
    if every_steps:
        ends.update(range(every_steps, num_train_steps, every_steps))
    ends = sorted(ends)
    for end in ends:
        if end > trainer.global_step or end == ends[-1]:
            yield trainer.train(train_fn, end, global_batch_size, last_step=num_train_steps)


def _export_model(export_dir, trainer, files, max_seq_length, shapes="dynamic"):
    """Writes the task's raw-text SavedModel from the trained model.

    The export computes under the trainer's inference policy, and is
    XLA-compiled only when the run's Runtime was asked for XLA
    (--jit_compile=true; auto and false export without it: served_model.py says
    why).

    Args:
      export_dir: Destination folder: missing, empty or an earlier SavedModel,
        which is replaced (export.save_model).
      trainer: The trained Trainer.
      files: The ModelFiles (vocab and casing the SavedModel tokenizes with).
      max_seq_length: As in training.
      shapes: One of served_model.SHAPES (--export_shapes).

    Returns:
      export_dir.
    """
    logging.info("Exporting to %s (computing in %s)", export_dir, trainer.inference.policy)
    return export.export_task(export_dir, trainer.task, trainer.encoder, trainer.heads,
                              files.vocab_file, files.do_lower_case, max_seq_length,
                              trainer.inference.policy, shapes,
                              trainer.runtime.requested_jit_compile is True)


def run(config, task, data, files, runtime, num_chunks=1, after_chunk=None):
    """Fine-tunes, evaluates, predicts and exports, as the config asks.

    Every split the run needs is read and checked before training, so that a
    missing file or a bad row in a dev or test set fails now, not after the
    training. Each split's records are written once, to output_dir on the
    chief (records_dir()); dev and test records are padded to full batches,
    and with dynamic_padding written shortest first (predict() gives their
    predictions back in input order).
    Splits of one data.source() are predicted once, and their output files
    written once.

    With eval_every_steps, training pauses every that many steps (and at its
    end) to score the first dev split; a best_checkpoint.BestKeeper logs it,
    adds it to eval_history.tsv and TensorBoard's eval summaries, keeps the
    best model by the data's main metric in output_dir/best, and stops
    training once early_stopping_patience evaluations passed without a gain.
    Whenever output_dir's best stands for its run (best_checkpoint.kept_best:
    this run's, or an earlier one's on the same folder), evaluation,
    prediction and export use it, and eval_results.txt gives its step.

    The run goes through runner.run's phases, each a method of one
    FinetuneJob, which keeps what every phase shares (SplitCache: each
    split's records and predictions, made once): check, prepare (reading,
    the trainer), train (with the evaluations during training), the best
    model, evaluate, predict, export.

    Args:
      config: A FinetuneConfig.
      task: A tasks.Task.
      data: Its protocol.FinetuneData, of the same max_seq_length.
      files: start()'s ModelFiles.
      runtime: start()'s run_setup.Runtime.
      num_chunks: Train in this many equal chunks (_train_in_chunks()).
      after_chunk: Called with a TrainingProgress after each chunk, and once
        before training when it starts from step 0; with do_eval, the first
        eval split is scored for it each time (a notebook's progress bar and
        curves), and with eval_every_steps, after each evaluation during
        training, with its metrics.

    Returns:
      A FinetuneResult.

    Raises:
      FinetuneError: for a training set that makes no step, an export alone
        of a folder without a run, or a task, data and config of different
        max_seq_length.
    """
    return runner.run(FinetuneJob(config, task, data, files, runtime, num_chunks,
                                  after_chunk))


class FinetuneJob(runner.Job):
    """One fine-tuning run, phase by phase (runner.run drives it); see run().

    Attributes:
      config, task, data, files, runtime, num_chunks, after_chunk: run()'s.
      trainer: The Trainer, once prepared.
      num_train_steps, num_warmup_steps: train_steps()' (0, 0 without training).
      keeper: The best_checkpoint.BestKeeper with eval_every_steps, else None.
      cache: The run's SplitCache, inside workspace().
      best: The best_checkpoint.Best that choose_model() loaded, or None.
    """

    def __init__(self, config, task, data, files, runtime, num_chunks=1, after_chunk=None):
        """A job of run()'s arguments; see run()."""
        self.config = config
        self.task = task
        self.data = data
        self.files = files
        self.runtime = runtime
        self.num_chunks = num_chunks
        self.after_chunk = after_chunk
        self.trainer = None
        self.num_train_steps, self.num_warmup_steps = 0, 0
        self.keeper = None
        self.cache = None
        self.best = None

    @property
    def actions(self):
        config = self.config
        return runner.Actions(train=config.run.do_train, evaluate=config.run.do_eval,
                              predict=config.do_predict,
                              export=bool(config.export.export_dir))

    def check(self):
        """Refuses a run with nothing to do, settings that cannot work together, or a
        task and data of another max_seq_length, before any work."""
        check_actions(self.config)
        check_config(self.config)
        check_lengths(self.config, self.task, self.data)

    def prepare(self):
        """Reads and checks the splits and builds the trainer, before any work."""
        config, data = self.config, self.data
        data.read(splits_to_read(data, config))
        evaluates_during_training = config.run.do_train and config.eval_every_steps > 0
        for split in data.eval_splits if config.run.do_eval or evaluates_during_training else ():
            # Before any training or prediction: a file without answers cannot be scored.
            data.check_scorable(split)
        if config.run.do_train:
            self.num_train_steps, self.num_warmup_steps = train_steps(
                data.num_train_examples(), config.batches.train_batch_size,
                config.num_train_epochs, config.warmup_proportion)
        trainer = create_trainer(
            self.task, self.files, self.runtime,
            config.training_config(max(self.num_train_steps, 1), self.num_warmup_steps,
                                   self.runtime.strategy),
            finetune_config=config, settings=task_settings(self.task, data, self.files),
            flags=flagged_settings(data))
        self.trainer = trainer
        if trainer.is_chief:
            run_checks.remove_stale_eval_results(
                trainer.output_dir,
                model_changes=(config.run.do_train and not config.run.do_eval
                               and trainer.global_step < self.num_train_steps),
                outputs_change=(data.eval_writes_outputs and config.do_predict
                                and not config.run.do_eval))
        if evaluates_during_training and trainer.is_chief:
            # The best model and eval_history.tsv hold the dev set's scores: going on with
            # another's would compare its scores with the old set's best.
            run_dir.check_settings(trainer.output_dir, "eval data", data.eval_settings(),
                                   resuming=trainer.global_step > 0, flags=flagged_settings(data))
        if evaluates_during_training:
            self.keeper = best_checkpoint.BestKeeper(
                trainer.output_dir, data.main_metric, config.early_stopping_patience,
                trainer.global_step, trainer.is_chief, trainer.encoder, trainer.heads)
        if config.run.do_train and trainer.is_chief:
            # Training on in a folder means training on the same data, cut alike.
            run_dir.check_settings(trainer.output_dir, "training data", data.training_settings(),
                                   resuming=trainer.global_step > 0)
            data.write_run_files(trainer.output_dir)

    @contextlib.contextmanager
    def workspace(self):
        """The run's records folder (records_dir()) and its SplitCache, while the run
        trains, evaluates and predicts."""
        with records_dir(self.trainer) as folder:
            self.cache = SplitCache(self.config, self.task, self.data, self.trainer, folder)
            yield

    def train(self):
        """Trains in chunks, evaluating when due and reporting after each; stops early
        when the keeper says so."""
        config, data, trainer, keeper = self.config, self.data, self.trainer, self.keeper
        num_chunks, after_chunk = self.num_chunks, self.after_chunk
        logging.info("Training on %s: %d steps, %d warmup.", data.describe(data.train_split),
                     self.num_train_steps, self.num_warmup_steps)
        micro_batch = (config.batches.train_batch_size
                       // config.optimizer.gradient_accumulation_steps)
        train_fn, _ = self.cache.input_fn(data.train_split, micro_batch, True)
        if after_chunk and trainer.global_step == 0:
            self._report(after_chunk, ())
        self._evaluate_if_due()
        # A run that stopped early stays stopped when its command runs again.
        stopped = keeper is not None and keeper.should_stop()
        chunks = () if stopped else _train_in_chunks(
            trainer, train_fn, self.num_train_steps, config.batches.train_batch_size, num_chunks,
            every_steps=config.eval_every_steps)
        for history in chunks:
            metrics = self._evaluate_if_due()
            if after_chunk:
                self._report(after_chunk, history, metrics)
            if keeper is not None and keeper.should_stop():
                stopped = True
                break
        if stopped:
            logging.info("Stopped early at step %d: no gain in %d evaluations, best at "
                         "step %d.", trainer.global_step, keeper.evaluations_without_gain,
                         keeper.best.step if keeper.best else 0)
        if keeper is not None and keeper.best is not None:
            logging.info("The best model: %s, kept in %s.", keeper.best.describe(),
                         os.path.dirname(keeper.best.path))

    def _score_first_eval_split(self):
        """The first eval split's metrics of the model as it is now."""
        return self.cache.score_now(
            self.data.eval_splits[0], self.config.batches.eval_batch_size,
            # The final model's: the evaluation after training reuses them,
            # unless a best model replaces it.
            keep=self.trainer.global_step >= self.num_train_steps)

    def _evaluate_if_due(self):
        """With eval_every_steps: scores the model at a step due, and keeps it if best.

        Due: a multiple of eval_every_steps, or the last step, not yet
        evaluated (a resumed run evaluates the step it resumes at, if a kill
        came between its checkpoint and its evaluation).

        Returns:
          The metrics, or None when nothing was due.
        """
        step = self.trainer.global_step
        if self.keeper is None or step == 0 or self.keeper.evaluated(step):
            return None
        if step % self.config.eval_every_steps and step < self.num_train_steps:
            return None
        metrics = self._score_first_eval_split()
        try:
            self.keeper.record(step, metrics)
        except ValueError as e:
            raise FinetuneError(str(e)) from None
        self.trainer.write_summaries("eval", metrics)
        return metrics

    def _report(self, after_chunk, history, metrics=None):
        """Calls after_chunk, with the first eval split's metrics when the run evaluates."""
        if metrics is None and self.config.run.do_eval:
            metrics = self._score_first_eval_split()
        after_chunk(TrainingProgress(self.trainer, self.num_train_steps, tuple(history),
                                     metrics))

    def choose_model(self):
        """Loads the best model kept in output_dir, where it stands for the run (self.best);
        else the newest model stays."""
        trainer = self.trainer
        # Only evaluation during training, which needs a main metric, keeps a history.
        evaluated = best_checkpoint.read_history(trainer.output_dir)
        best = best_checkpoint.kept_best(trainer.output_dir, trainer.global_step,
                                         self.data.main_metric if evaluated else None)
        self.best = best
        if best is not None:
            best_checkpoint.restore(best, trainer.encoder, trainer.heads)
            # Predictions of the last model, made during training, are not the best's.
            self.cache.forget_predictions()
            logging.info("Evaluating, predicting and exporting with the best model, %s, "
                         "from %s (the newest checkpoint, step %d, stays for training on).",
                         best.describe(), os.path.dirname(best.path), trainer.global_step)

    def evaluate(self):
        """Scores every eval split and writes eval_results.txt, with the step of the model
        scored (the best one's, where choose_model() loaded it).

        Returns:
          The results, as eval_results.txt holds them (without global_step).
        """
        data = self.data
        results = {}
        for split in data.eval_splits:
            split_predictions = self.cache.predictions(split, self.config.batches.eval_batch_size)
            if data.eval_writes_outputs:
                self.cache.write_outputs(split)
            metrics = data.score(split_predictions, data.references(split))
            # Several dev sets (MNLI's matched and mismatched) share one file.
            prefix = f"{split}_" if len(data.eval_splits) > 1 else ""
            results.update({prefix + name: value for name, value in metrics.items()})
        best = self.best
        self.trainer.write_eval_results(results, step=best.step if best else None)
        return results

    def predict(self):
        """Predicts every predict split and writes its output files."""
        for split in self.data.predict_splits:
            self.cache.predictions(split, self.config.predict_batch_size)
            self.cache.write_outputs(split)

    def export(self):
        """Writes the raw-text SavedModel, on the chief."""
        if self.trainer.is_chief:
            _export_model(self.config.export.export_dir, self.trainer, self.files,
                          self.config.model.max_seq_length,
                          shapes=self.config.export.export_shapes)

    def result(self, eval_results):
        return FinetuneResult(self.trainer, eval_results, self.cache.predicted(
            splits_to_read(self.data, self.config)))
