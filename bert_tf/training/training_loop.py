"""One training loop for every task.

A Trainer holds a BertModel, a task's heads and the optimizer, all created
under one tf.distribute strategy, and the run's checkpoints
(training_checkpoints.py). It runs up to `iterations_per_loop` steps per
tf.function call (one host round trip per loop, as TPUEstimator did) and
logs one progress line per loop; it saves every `save_checkpoints_steps`
(and, off a TPU, every `save_checkpoints_secs`), and on a new start resumes
from the newest checkpoint in `output_dir` by itself. Off a TPU, unless the
user gave `iterations_per_loop`, each loop is sized from the measured step
time to take about `log_every_secs`; the first loop is one step, so that the
first line comes right after compilation (configs.TrainingConfig). The task
(tasks/base.py) supplies the heads, the forward pass, the loss, the metrics
and the predictions; nothing here depends on which task runs. Evaluation
and prediction are the Trainer's Inference (inference.py), over the same
model.

Under MultiWorkerMirroredStrategy every worker runs this same loop; only
the chief writes to `output_dir` (training_checkpoints.py says how the
others save).

Each replica computes its gradients in one tf.function, XLA-compiled as
the run's Runtime says (run_setup.py) (always under the TPU's rules, tpu_rules.py);
applying them stays outside XLA because the cross-replica all-reduce of
MirroredStrategy cannot be compiled.
"""

import dataclasses
import os
import time

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.checkpoints import checkpoints
from bert_tf.model.modeling import BertModel
from bert_tf.runtime import distribution, interrupts, memory, precision, tpu_rules
from bert_tf.training import inference, optimization, run_dir
from bert_tf.training.progress import format_duration, loop_steps
from bert_tf.training.training_checkpoints import TrainingCheckpoints

keras = tf.keras


class Trainer:
    """Trains, evaluates and predicts with one task under one strategy.

    Typical use:
      trainer = Trainer(task, bert_config, runtime, TrainingConfig(output_dir, steps))
      trainer.restore(init_checkpoint)
      trainer.train(train_dataset_fn, num_train_steps)
      results = trainer.evaluate(eval_dataset_fn, max_steps)
      predictions = trainer.inference.predict(predict_dataset_fn)

    Attributes:
      is_chief: Whether this process writes to output_dir (see
        distribution.is_chief); scripts write their own files only then.
      inference: The inference.Inference of the model being trained.
      training_checkpoints: The training_checkpoints.TrainingCheckpoints of
        the run: what is saved, where, and how it resumes.
      load_report: The checkpoints.LoadReport of the init_checkpoint that
        restore() loaded, or None when it resumed or started from scratch.
    """

    def __init__(self, task, bert_config, runtime, config):
        """Builds the model, heads and optimizer in the strategy scope, and their checkpoints.

        Args:
          task: A tasks.Task.
          bert_config: The encoder's BertConfig.
          runtime: A run_setup.Runtime (run_setup.prepare()'s): the strategy,
            the precision policy the model is built under, and whether the
            steps are XLA-compiled.
          config: A configs.TrainingConfig.
        """
        strategy = runtime.strategy
        self.task = task
        self.runtime = runtime
        self.strategy = strategy
        self.config = config
        self.output_dir = config.output_dir
        self.is_chief = distribution.is_chief(strategy)
        self.load_report = None
        self.init_checkpoint = None
        if self.is_chief:
            # Before anything is written: a second run on this folder stops here.
            run_dir.lock(config.output_dir)
            run_dir.remove_debris(config.output_dir)
        self.iterations_per_loop = config.cadence.iterations_per_loop
        self.save_checkpoints_steps = config.cadence.save_checkpoints_steps
        self.accumulation_steps = config.optimizer.gradient_accumulation_steps
        with strategy.scope(), precision.building_under(runtime.policy):
            self.encoder = BertModel(bert_config)
            self.heads = task.create_heads(self.encoder)
            settings = config.optimizer
            self.optimizer = optimization.create_optimizer(
                settings.learning_rate, config.num_train_steps, config.num_warmup_steps,
                optimizer_type=settings.optimizer, bias_correction=settings.adam_bias_correction,
                decay_after_warmup=settings.decay_after_warmup)
            if runtime.policy == "mixed_float16":
                self.optimizer = keras.optimizers.LossScaleOptimizer(self.optimizer)
            # Slots must exist before the first distributed step.
            self.optimizer.build(self.trainable_variables)
            self.accumulator = None
            if self.accumulation_steps > 1:
                self.accumulator = optimization.GradientAccumulator(
                    self.trainable_variables, self.accumulation_steps)
            self.train_metrics = {"loss": keras.metrics.Mean()}
        self._train_input = None
        # One TensorBoard writer per summaries folder, for the Trainer's life:
        # training in chunks and evaluating between them add to one file each.
        self._writers = {}
        self.training_checkpoints = TrainingCheckpoints(
            strategy, config.output_dir, config.cadence.keep_checkpoint_max, self.encoder,
            self.heads, self.optimizer)
        # Under the TPU's rules (tpu_rules.py) every step is XLA-compiled
        # (the Runtime's choice) and every input checked for static shapes,
        # as a TPU needs.
        self.tpu_rules = tpu_rules.enforced(strategy)
        jit_compile = runtime.jit_compile
        logging.info("XLA for the train, eval and predict steps: %s%s",
                     "on" if jit_compile else "off",
                     " (the TPU's rules)" if self.tpu_rules
                     else " (auto)" if runtime.requested_jit_compile is None else "")
        self._compute_gradients = tf.function(self._gradients, jit_compile=jit_compile)
        self._train_loop = tf.function(self._train_loop_fn)
        self._jit_compile = jit_compile
        # Evaluation and prediction, compiled like the gradients, under the
        # policy predictions and exports compute in (float32 unless asked
        # otherwise; precision.inference_policy logs it when it is not).
        self.inference = inference.Inference(
            task, self.encoder, self.heads, strategy, jit_compile,
            precision.inference_policy(config.inference_precision, runtime.policy))

    @property
    def global_step(self):
        """Optimizer updates done so far (restored with the checkpoint)."""
        return int(self.optimizer.iterations.numpy())

    @property
    def trainable_variables(self):
        """Encoder and head variables, in a fixed order."""
        variables = list(self.encoder.trainable_variables)
        for name in sorted(self.heads):
            variables += self.heads[name].trainable_variables
        return variables

    def restore(self, init_checkpoint=None):
        """Resumes from output_dir if it has a checkpoint, else loads init_checkpoint.

        Resuming restores everything (weights, optimizer slots, step), so a
        run killed at any point continues where its last checkpoint was.

        Args:
          init_checkpoint: Any format checkpoints.load_weights reads, or None
            to start from random weights.

        Returns:
          "resumed", "initialized" or "from scratch".
        """
        latest = self.training_checkpoints.latest()
        self.init_checkpoint = init_checkpoint
        if self.is_chief:
            # Another model's checkpoint would fail to restore with a shape
            # error, or restore into a model it was not trained for.
            run_dir.check_settings(self.output_dir, "model", self._model_settings(),
                                   resuming=bool(latest))
        if latest:
            latest = self.training_checkpoints.restore_latest()
            logging.info("Resumed from %s at step %d", latest, self.global_step)
            return "resumed"
        if init_checkpoint:
            self.load_report = checkpoints.load_weights(init_checkpoint, self.encoder, self.heads)
            return "initialized"
        logging.info("No checkpoint in %s and no init_checkpoint: random weights.",
                     self.output_dir)
        return "from scratch"

    def _model_settings(self):
        """What the checkpoints' shapes depend on: the encoder's config and the heads."""
        return {"bert_config": self.encoder.config.to_dict(),
                "task": type(self.task).__name__,
                "heads": {name: {w.path: list(w.shape) for w in head.weights}
                          for name, head in sorted(self.heads.items())}}

    def _training_settings(self, global_batch_size):
        """What the training's result depends on (not how often it logs or saves)."""
        return {"num_train_steps": self.config.num_train_steps,
                "num_warmup_steps": self.config.num_warmup_steps,
                **dataclasses.asdict(self.config.optimizer),
                "train_batch_size": global_batch_size, "init_checkpoint": self.init_checkpoint}

    def _gradients(self, features):
        """One replica's loss and gradients on one (micro-)batch."""
        with tf.GradientTape() as tape:
            outputs = self.task.forward(self.encoder, self.heads, features, training=True)
            losses = self.task.losses(features, outputs)
            # The optimizer sums gradients over replicas: divide so that the
            # sum is the mean. (The accumulator averages micro-batches.)
            loss = losses["loss"] / self.strategy.num_replicas_in_sync
            if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
                loss = self.optimizer.scale_loss(loss)
        return losses, tape.gradient(loss, self.trainable_variables)

    def _replica_step(self, features):
        """One micro-batch: computes gradients, and applies an update when due.

        Without accumulation every call applies. With it, the accumulator
        applies the mean of every gradient_accumulation_steps micro-batches,
        so the update equals one step on the whole batch.
        """
        losses, grads = self._compute_gradients(features)
        self.train_metrics["loss"].update_state(losses["loss"])
        if self.accumulator is None:
            self.optimizer.apply(grads, self.trainable_variables)
        else:
            self.accumulator.add(grads)
            self.accumulator.apply_if_ready(self.optimizer)

    def _train_loop_fn(self, iterator, steps):
        """Runs `steps` optimizer updates (of all their micro-batches) in one call."""
        for _ in tf.range(steps * self.accumulation_steps):
            self.strategy.run(self._replica_step, args=(next(iterator),))

    def train(self, dataset_fn, num_train_steps, global_batch_size, last_step=None):
        """Trains until num_train_steps, checkpointing and logging on the way.

        Args:
          dataset_fn: A function (tf.distribute.InputContext) -> tf.data.Dataset
            of per-replica micro-batches, repeated
            (see tf.distribute.Strategy.distribute_datasets_from_function).
            Read on the first call only: later calls continue its input.
          num_train_steps: The step to stop at (resumed runs count from their step).
          global_batch_size: Examples per optimizer update, for examples/s.
          last_step: The step the whole run ends at, which the progress lines
            count to and the time left is reckoned to, where this call trains
            one chunk of it; None: num_train_steps.

        Returns:
          The history: one dict per loop with step, loss (the mean over the
          loop), learning_rate and examples_per_second; empty when the run
          was already at num_train_steps.
        """
        if self.is_chief:
            # A finished run's folder, rerun with another learning rate, must not
            # pass off the old model as the new one's ("nothing to train"). A
            # longer run goes on, as the original's Estimator did with a larger
            # max_steps: its schedule is stretched to the new end.
            run_dir.check_settings(self.output_dir, "training",
                                   self._training_settings(global_batch_size),
                                   resuming=self.global_step > 0,
                                   may_grow=("num_train_steps", "num_warmup_steps"))
        writer = self._summary_writer("train")
        self.training_checkpoints.open()
        iterator = self._training_input(dataset_fn)
        history = []
        step = self.global_step
        last_step = num_train_steps if last_step is None else last_step
        if step >= num_train_steps:
            logging.info("Already at step %d of %d: nothing to train.", step, num_train_steps)
        # The seconds per step of the last loop; None until a loop has run.
        step_seconds = None
        last_save = time.time()
        # Ctrl-C and SIGTERM stop the run between two loops (interrupts.py).
        with interrupts.held() as raise_if_stopped:
            try:
                while step < num_train_steps:
                    raise_if_stopped()
                    to_checkpoint = self.save_checkpoints_steps - step % self.save_checkpoints_steps
                    fitting = loop_steps(step_seconds, self.iterations_per_loop,
                                         self.config.cadence.log_every_secs)
                    steps = min(fitting, num_train_steps - step, to_checkpoint)
                    record, step_seconds = self._timed_loop(iterator, steps, global_batch_size)
                    step = record["step"]
                    history.append(record)
                    # The first loop's time includes compiling: no estimate from it.
                    left = (f"  {format_duration((last_step - step) * step_seconds)} left"
                            if len(history) > 1 else "")
                    logging.info("step %d/%d  loss %.4f  lr %.3g  %.1f examples/s%s", step,
                                 last_step, record["loss"], record["learning_rate"],
                                 record["examples_per_second"], left)
                    with writer.as_default(step=step):
                        for name in ("loss", "learning_rate", "examples_per_second"):
                            tf.summary.scalar(name, record[name])
                    secs = self.config.cadence.save_checkpoints_secs
                    due = secs is not None and time.time() - last_save >= secs
                    if due or step % self.save_checkpoints_steps == 0 or step >= num_train_steps:
                        self.training_checkpoints.save(step)
                        last_save = time.time()
                # One that came during the last loop stops the run here.
                raise_if_stopped()
            except KeyboardInterrupt as interrupt:
                # Ctrl-C or SIGTERM: cli.run prints this in its one line.
                interrupt.add_note(self.training_checkpoints.resume_note(self.global_step))
                raise
        writer.flush()
        self.training_checkpoints.close()
        return history

    def _timed_loop(self, iterator, steps, global_batch_size):
        """Runs one loop of `steps` optimizer updates and measures it.

        Args:
          iterator: The training input (_training_input).
          steps: Optimizer updates in this loop.
          global_batch_size: Examples per update, for examples/s.

        Returns:
          (record, step_seconds): the loop's history record (step after it,
          its mean loss, the learning rate, examples/s) and its seconds per
          step.
        """
        start = time.time()
        with memory.releasing_free_memory(enabled=self._jit_compile):
            self._train_loop(iterator, tf.constant(steps, tf.int32))
        elapsed = time.time() - start
        record = {"step": self.global_step, "loss": float(self.train_metrics["loss"].result()),
                  "learning_rate": float(self.optimizer.learning_rate),
                  "examples_per_second": steps * global_batch_size / elapsed}
        self.train_metrics["loss"].reset_state()
        return record, elapsed / steps

    def _training_input(self, dataset_fn):
        """The iterator over the training input: one per Trainer, and per run.

        Later train() calls (training in chunks) go on where the last one
        stopped, and so does a run resumed from a checkpoint: the iterator's
        position (shuffle buffer included) is saved with every checkpoint.
        With the same --seed, a run killed and resumed thus sees the batches
        an uninterrupted run sees, in the same order. TPUStrategy and
        multi-worker training keep no input position: a resumed run reads
        its input from the start again.

        Args:
          dataset_fn: train()'s; used on the first call only.

        Returns:
          A distributed iterator.
        """
        if self._train_input is None:
            self._train_input = self.training_checkpoints.track_input(
                iter(inference.distribute(self.strategy, dataset_fn, "training")))
        return self._train_input

    def _summary_writer(self, name):
        """The TensorBoard writer of output_dir/name; off the chief, one that writes nothing."""
        if name not in self._writers:
            self._writers[name] = (
                tf.summary.create_file_writer(os.path.join(self.output_dir, name))
                if self.is_chief else tf.summary.create_noop_writer())
        return self._writers[name]

    def evaluate(self, dataset_fn, max_steps=None):
        """The model's metrics on a set at this step, logged and summarized.

        inference.evaluate() streams the task's metrics; they go to
        TensorBoard's eval summaries at the current step and to the log.
        write_eval_results() writes them to eval_results.txt.

        Args:
          dataset_fn: As for train(), but finite (not repeated).
          max_steps: Stop after this many batches (the original's max_eval_steps).

        Returns:
          A dict of metric values, with global_step.
        """
        results = self.inference.evaluate(dataset_fn, max_steps)
        results["global_step"] = self.global_step
        self.write_summaries("eval", results)
        logging.info("Eval: %s", ", ".join(f"{k} = {v:.4g}" for k, v in sorted(results.items())))
        return results

    def write_summaries(self, name, values):
        """Writes scalars to TensorBoard's output_dir/name summaries at the current step.

        Args:
          name: The summaries' folder, e.g. "eval".
          values: {tag: number}.
        """
        writer = self._summary_writer(name)
        with writer.as_default(step=self.global_step):
            for tag, value in values.items():
                tf.summary.scalar(tag, value)
        writer.flush()

    def write_eval_results(self, results, step=None):
        """Writes output_dir/eval_results.txt on the chief, and prints it.

        Call it once with every split's numbers: a run that fails on the way
        thus leaves no results file that looks complete.

        Args:
          results: {name: number}; global_step is added.
          step: The step of the model scored, when it is not the trainer's
            own (an earlier, best model); None: global_step.
        """
        if not self.is_chief:
            return
        results = {"global_step": self.global_step if step is None else step, **results}
        io_utils.write_results(os.path.join(self.output_dir, "eval_results.txt"), results)
        for key in sorted(results):
            print(f"{key} = {results[key]}")
