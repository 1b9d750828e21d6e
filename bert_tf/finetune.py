"""Fine-tuning, as every task script and the notebook do it.

run() takes a FinetuneConfig, a task (tasks/) and its data (a
finetune_data.FinetuneData) through the whole sequence the config asks for:
train, evaluate, predict, export, with the results files and the log lines;
start() comes before it. It returns a FinetuneResult, and can report a
TrainingProgress after each chunk of training (the notebook's progress bar
and curves). A script is its flags, script_flags.finetune_config(),
start(), the task, the data and run(); the notebook and Python callers build
the FinetuneConfig directly. Besides these, for a caller that goes its own
way:
  check_actions()   refuses a run with nothing to do; tells an export-only run;
  check_config()    refuses settings that cannot work together;
  setup()           seed, strategy, precision, XLA and batch checks, before any
                    model is built (start() calls it, after model_files.find()
                    has found and checked the pretrained model's files);
  splits_to_read()  the splits a run asks its data for;
  train_steps()     optimizer updates and warmup from epochs;
  create_trainer()  a training_loop.Trainer for a task, resumed from output_dir or
                    initialized from the pretrained checkpoint;
  predict()         predictions in input order, padding dropped;
  evaluate()        the data's official metrics of a dev set's predictions.

Nothing here depends on which task runs: the task (tasks/) and its data
(glue/, ...) supply the rest, the data scoring the task's predictions and
writing the output files, and serving/ exporting the task. Errors in the
user's input raise FinetuneError (a ValueError) with a message that names
the flag or file.
"""

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.model import checkpoints, model_files
from bert_tf.records import finetune_data, input_pipeline
from bert_tf.serving import export
from bert_tf.training import (
    best_checkpoint,
    distribution,
    run_checks,
    run_dir,
    run_setup,
    tpu_rules,
    training_loop,
)

# --group_by_length sorts this many batches' worth of examples at a time:
# enough for batches of similar length, few enough to keep the order random.
LENGTH_GROUP_BATCHES = 50


class FinetuneError(ValueError):
    """A setting or input that fine-tuning cannot run with; the message says which."""


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


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Everything a fine-tuning run is asked to do, whatever the task.

    Each field is named as the flag of the fine-tuning scripts that sets it
    (script_flags.finetune_config() builds one from the flags), and its
    default is that flag's (the flags take theirs from here); the notebook
    and Python callers build it directly. A task's own settings (labels,
    SQuAD's doc_stride, ...) belong to the task and its data, not here.

    Attributes:
      output_dir: Checkpoints, records and results go here; a run resumes
        from the newest checkpoint here.
      init_checkpoint: The pretrained weights (any format checkpoints.py
        reads), or None for random weights.
      bert_config_file: The encoder's config; None: the one beside
        init_checkpoint.
      vocab_file: None: the vocab.txt beside init_checkpoint.
      do_lower_case: None: the init_checkpoint folder's record, else True.
      max_seq_length: Tokens per sequence, [CLS] and [SEP] included.
      do_train, do_eval, do_predict: What the run does.
      train_batch_size, eval_batch_size, predict_batch_size: Global batches.
      num_train_epochs: Epochs of training, possibly fractional.
      warmup_proportion: The share of updates with a rising learning rate.
      learning_rate, optimizer, adam_bias_correction, decay_after_warmup,
        gradient_accumulation_steps, keep_checkpoint_max, inference_precision:
        As in run_setup.TrainingConfig.
      jit_compile: XLA for the train, eval and predict steps: True, False
        or None (auto: by device and precision; see run_setup.Runtime).
      iterations_per_loop, save_checkpoints_steps, log_every_secs,
        save_checkpoints_secs: The cadence, each None where not given (see
        run_setup.TrainingConfig.for_strategy).
      mixed_precision: Training's precision, one of precision.PRECISIONS.
      seed: Seeds the head, dropout and shuffling; None: every run differs.
      export_dir: Write a raw-text SavedModel here, after training.
      allow_random_weights: Evaluate, predict or export even where the
        weights, or the task's head, would be random (run_checks).
      export_shapes: One of served_model.SHAPES.
      dynamic_padding: Cut each batch's padding to its longest example; dev
        and test sets are predicted shortest first (run()).
      group_by_length: With dynamic_padding, batch examples of similar length.
      eval_every_steps: With do_train, evaluate on the (first) dev set every
        this many steps and at the end, and keep the model that scores best
        on the data's main metric in output_dir/best (best_checkpoint.py);
        evaluation, prediction and export then use it. 0: off.
      early_stopping_patience: With eval_every_steps, stop training after
        this many evaluations without a gain. 0: off.
      tpu: Which TPU to use, if any.
    """

    output_dir: str
    init_checkpoint: str | None = None
    bert_config_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool | None = None
    max_seq_length: int = 128
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    # The training settings' defaults are TrainingConfig's.
    learning_rate: float = run_setup.TrainingConfig.learning_rate
    optimizer: str = run_setup.TrainingConfig.optimizer
    adam_bias_correction: bool = run_setup.TrainingConfig.adam_bias_correction
    decay_after_warmup: bool = run_setup.TrainingConfig.decay_after_warmup
    gradient_accumulation_steps: int = run_setup.TrainingConfig.gradient_accumulation_steps
    iterations_per_loop: int | None = None
    save_checkpoints_steps: int | None = None
    log_every_secs: float | None = None
    save_checkpoints_secs: float | None = None
    keep_checkpoint_max: int = run_setup.TrainingConfig.keep_checkpoint_max
    jit_compile: bool | None = None
    mixed_precision: str = "auto"
    inference_precision: str = run_setup.TrainingConfig.inference_precision
    seed: int | None = None
    export_dir: str | None = None
    allow_random_weights: bool = False
    export_shapes: str = "dynamic"
    dynamic_padding: bool = False
    group_by_length: bool = False
    eval_every_steps: int = 0
    early_stopping_patience: int = 0
    tpu: distribution.TpuConfig = distribution.TpuConfig()

    def training_config(self, num_train_steps, num_warmup_steps, strategy):
        """The Trainer's run_setup.TrainingConfig for this run.

        Args:
          num_train_steps: From train_steps().
          num_warmup_steps: Likewise.
          strategy: The run's strategy, for the cadence.

        Returns:
          A run_setup.TrainingConfig.
        """
        settings = {name: getattr(self, name) for name in run_setup.USER_SETTINGS}
        return run_setup.TrainingConfig.for_strategy(
            strategy, output_dir=self.output_dir, num_train_steps=num_train_steps,
            num_warmup_steps=num_warmup_steps, **settings)


def check_config(config):
    """Refuses settings that cannot work together, before any work.

    Args:
      config: A FinetuneConfig.

    Raises:
      FinetuneError: group_by_length without dynamic_padding; a negative
        eval_every_steps or early_stopping_patience, evaluation during
        training without training, or early stopping without evaluation
        during training.
    """
    if config.group_by_length and not config.dynamic_padding:
        raise FinetuneError("--group_by_length only saves work with --dynamic_padding")
    if config.eval_every_steps < 0 or config.early_stopping_patience < 0:
        raise FinetuneError("--eval_every_steps and --early_stopping_patience must not be "
                            "negative (0 turns them off)")
    if config.early_stopping_patience and not config.eval_every_steps:
        raise FinetuneError("--early_stopping_patience counts evaluations during training: "
                            "give --eval_every_steps too")
    if config.eval_every_steps and not config.do_train:
        raise FinetuneError("--eval_every_steps evaluates during training: add --do_train "
                            "(a run without it uses the best model kept in --output_dir "
                            "by itself)")


def _reader_args(config):
    """The reader arguments that dynamic_padding and group_by_length ask for.

    Args:
      config: A FinetuneConfig, check_config()'ed.

    Returns:
      {"trim_to_multiple_of": ..., "length_group_batches": ...}, each None
      when off.
    """
    multiple = input_pipeline.LENGTH_MULTIPLE if config.dynamic_padding else None
    return {"trim_to_multiple_of": multiple,
            "length_group_batches": LENGTH_GROUP_BATCHES if config.group_by_length else None}


def _check_lengths(config, task, data):
    """Refuses a task or data whose max_seq_length is not the config's.

    The config's is the one the model's position embeddings are checked
    against (model_files.find) and the export packs to; the task's records
    and the data's must be that long.

    Args:
      config: A FinetuneConfig.
      task: A tasks.Task (its max_seq_length, None: unsaid).
      data: A finetune_data.FinetuneData (likewise).

    Raises:
      FinetuneError: naming the lengths that differ.
    """
    lengths = {"the config": config.max_seq_length,
               type(task).__name__: task.max_seq_length,
               type(data).__name__: data.max_seq_length}
    given = {name: length for name, length in lengths.items() if length is not None}
    if len(set(given.values())) > 1:
        raise FinetuneError("max_seq_length differs: " + ", ".join(
            f"{length} in {name}" for name, length in given.items())
            + ": build the task and the data from the config's")


def check_actions(config):
    """Checks that a run has something to do, and weights to do it with; tells whether
    it only exports.

    --export_dir alone exports a finished run (the newest checkpoint in
    --output_dir, else an --init_checkpoint with the task's head) without
    training or evaluating it. Evaluation, prediction and export without
    weights to use, and training at a learning rate of 0, are refused here,
    before any work (run_checks).

    Args:
      config: A FinetuneConfig.

    Returns:
      True when export_dir is the only action.

    Raises:
      FinetuneError: None of do_train, do_eval, do_predict and export_dir.
      run_checks.RunCheckError: random weights not asked for, or a learning
        rate of 0.
    """
    runs = config.do_train or config.do_eval or config.do_predict
    if not (runs or config.export_dir):
        raise FinetuneError("At least one of do_train, do_eval, do_predict or export_dir "
                            "must be given.")
    run_checks.check_learning_rate(config.do_train, config.learning_rate)
    run_checks.check_weights_source(config.output_dir, config.init_checkpoint, config.do_train,
                                    config.do_eval, config.do_predict, config.export_dir,
                                    config.allow_random_weights)
    return not runs


def setup(config):
    """Seeds, picks the strategy, the precision and XLA, and checks the batch sizes.

    The strategy comes before anything else touches TensorFlow's devices:
    MultiWorkerMirroredStrategy cannot be set up once TensorFlow has started.

    Args:
      config: A FinetuneConfig. With dynamic_padding batches vary in shape,
        which a TPU cannot run (nor any device under BERT_TF_TPU_RULES=1,
        see tpu_rules.py).

    Returns:
      The run's run_setup.Runtime.

    Raises:
      FinetuneError: for batch sizes that do not split, or varying shapes on TPU.
    """
    runtime = run_setup.prepare(config.seed, config.tpu, config.mixed_precision,
                                config.jit_compile)
    strategy = runtime.strategy
    if config.dynamic_padding and tpu_rules.enforced(strategy):
        raise FinetuneError("--dynamic_padding is for CPUs and GPUs: a TPU program needs "
                            "one static sequence length")
    try:
        run_setup.validate_batch_sizes(
            strategy, config.train_batch_size, config.gradient_accumulation_steps,
            do_train=config.do_train, eval_batch_size=config.eval_batch_size,
            predict_batch_size=config.predict_batch_size)
    except ValueError as e:
        raise FinetuneError(str(e)) from None
    return runtime


def train_steps(num_examples, train_batch_size, num_train_epochs, warmup_proportion):
    """Optimizer updates for a number of epochs, as the original computes them.

    Args:
      num_examples: Training examples (features, for tasks that split them).
      train_batch_size: The global batch.
      num_train_epochs: Epochs, possibly fractional.
      warmup_proportion: The share of updates with a rising learning rate.

    Returns:
      (num_train_steps, num_warmup_steps).

    Raises:
      FinetuneError: if that makes no step (the original failed too:
        Estimator.train needs max_steps > 0).
    """
    num_train_steps = int(num_examples / train_batch_size * num_train_epochs)
    if num_train_steps < 1:
        raise FinetuneError(
            f"{num_examples} train examples at --train_batch_size={train_batch_size} for "
            f"--num_train_epochs={num_train_epochs} make no training step")
    return num_train_steps, int(num_train_steps * warmup_proportion)


def _task_settings(task, data, files):
    """What a fine-tuned model is for: run_dir's "task" group of settings.

    Args:
      task: A tasks.Task.
      data: Its finetune_data.FinetuneData.
      files: The ModelFiles.

    Returns:
      A dict: the task's class, data.task_settings() (the task's name and
      labels), the vocab's run_dir.file_fingerprint (its content, wherever
      it is) and the casing.
    """
    return {"task": type(task).__name__, **data.task_settings(),
            "vocab": run_dir.file_fingerprint(files.vocab_file),
            "do_lower_case": files.do_lower_case}


def create_trainer(task, files, runtime, config, run=None, settings=None):
    """A Trainer for the task, resumed from config.output_dir or initialized.

    Args:
      task: A tasks.Task.
      files: The pretrained model's ModelFiles.
      runtime: setup()'s run_setup.Runtime.
      config: A run_setup.TrainingConfig.
      run: The FinetuneConfig whose actions the model is for: unless it
        trains, an init_checkpoint without the task's head is refused
        (run_checks.check_loaded_heads); None checks nothing.
      settings: What the model is for (run()'s: the task, the data's
        task_settings(), the vocab and casing), checked against output_dir's
        record when its model is resumed, recorded otherwise; None checks
        nothing.

    Returns:
      The restored training_loop.Trainer.

    Raises:
      run_checks.RunCheckError: a random head that run does not train.
      run_dir.RunDirError: output_dir's model is for another task, labels,
        vocab or casing.
    """
    tf.io.gfile.makedirs(config.output_dir)
    trainer = training_loop.Trainer(task, files.bert_config, runtime, config)
    resumed = trainer.restore(files.init_checkpoint) == "resumed"
    if run is not None:
        # An export of the pretrained encoder with a random head would look
        # like a finished model, and its scores like a result.
        initialized = [] if resumed or trainer.load_report is None else (
            trainer.load_report.initialized)
        run_checks.check_loaded_heads(initialized, run.init_checkpoint, run.do_train,
                                      run.do_eval, run.do_predict, run.export_dir,
                                      run.allow_random_weights)
    if trainer.is_chief and settings is not None:
        # Before anything is written to the folder: another task's model of
        # the same shape (SST-2's, resumed as CoLA's) must be neither trained
        # on, nor scored, nor exported as this one.
        run_dir.check_settings(config.output_dir, "task", settings, resuming=resumed)
    if trainer.is_chief:
        # The folder holds what a conversion or a later run needs besides
        # the checkpoint: the config, the vocab, and the task's and casing's
        # Hugging Face settings (convert_checkpoint.py --output_format=hf).
        files.bert_config.to_json_file(os.path.join(config.output_dir, "bert_config.json"))
        vocab = os.path.join(config.output_dir, "vocab.txt")
        if os.path.abspath(files.vocab_file) != os.path.abspath(vocab):
            tf.io.gfile.copy(files.vocab_file, vocab, overwrite=True)
        settings = {"config": task.hf_task_config(), "do_lower_case": files.do_lower_case}
        with io_utils.atomic_write(
                os.path.join(config.output_dir, checkpoints.HF_SETTINGS_FILE), "w") as f:
            json.dump(settings, f, indent=2, sort_keys=True)
    return trainer


@contextlib.contextmanager
def _records_dir(trainer):
    """Where this process writes TFRecords: output_dir on the chief.

    Under multi-worker training only the chief writes to output_dir; every
    other worker keeps its copy of the records in a folder of its own,
    deleted at the end.

    Args:
      trainer: The Trainer.

    Yields:
      A folder path.
    """
    if trainer.is_chief:
        yield trainer.output_dir
        return
    folder = tempfile.mkdtemp(prefix="bert_tf_records_")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _dataset_fn(reader, path, global_batch_size, is_training, **reader_args):
    """The input function for Trainer.train / evaluate / predict.

    Training shards the records across workers. Evaluation and prediction do
    not: every worker reads the whole set in order, so that the chief's own
    predictions are complete and in input order (the others' are discarded).

    Args:
      reader: An input_pipeline reader, called as reader(path, batch_size,
        is_training=..., input_context=..., **reader_args).
      path: The TFRecord file(s).
      global_batch_size: The batch over all replicas.
      is_training: Whether to repeat, shuffle and shard.
      **reader_args: The reader's other arguments (max_seq_length, ...).

    Returns:
      A function of a tf.distribute.InputContext that returns the dataset.
    """
    def fn(input_context):
        return reader(path, input_context.get_per_replica_batch_size(global_batch_size),
                      is_training=is_training,
                      input_context=input_context if is_training else None, **reader_args)
    return fn


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
      train_fn: _dataset_fn() of the training records.
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
            yield trainer.train(train_fn, end, global_batch_size)


def predict(trainer, predict_fn, order=None):
    """The task's predictions over a dev or test set, in input order, padding dropped.

    Args:
      trainer: The Trainer.
      predict_fn: The input function of the records (is_training=False),
        as Trainer.inference.predict takes it.
      order: For records written in another order than the input's, the
        input index of each (finetune_data.length_order()); None when the
        records are in input order.

    Returns:
      {name: np.ndarray} over the real examples; is_real_example removed.
    """
    predictions = trainer.inference.predict(predict_fn)
    real = predictions.pop("is_real_example", None)
    if real is not None:
        keep = np.asarray(real) == 1
        predictions = {name: value[keep] for name, value in predictions.items()}
    if order is None:
        return predictions
    # The written position of each input: row i of the result is input i's.
    positions = np.argsort(order)
    return {name: value[positions] for name, value in predictions.items()}


def evaluate(trainer, data, split, predict_fn, order=None):
    """The data's official metrics of the model's predictions on one dev set.

    Args:
      trainer: The Trainer.
      data: The finetune_data.FinetuneData the split is read from (it scores).
      split: The dev split, read().
      predict_fn: The input function of the split's records (is_training=False).
      order: The records' order, as predict() takes it.

    Returns:
      (metrics, predictions): data.score()'s dict, and predict()'s.
    """
    predictions = predict(trainer, predict_fn, order)
    return data.score(predictions, data.references(split)), predictions


def _export_model(export_dir, trainer, files, max_seq_length, shapes="dynamic"):
    """Writes the task's raw-text SavedModel from the trained model.

    The export computes under the trainer's inference policy, and is
    XLA-compiled only when the run's Runtime was asked for XLA
    (--jit_compile=true; auto and false export without it: served_model.py says
    why).

    Args:
      export_dir: Destination folder; replaced if it exists.
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


def start(config):
    """What comes before the task: the model's files, then the runtime.

    Args:
      config: A FinetuneConfig.

    Returns:
      (files, runtime): model_files.find()'s ModelFiles and setup()'s
      run_setup.Runtime.

    Raises:
      FinetuneError: naming the flag or file that does not fit.
    """
    check_config(config)
    try:
        files = model_files.find(config.init_checkpoint, config.bert_config_file,
                                 config.vocab_file, config.do_lower_case, config.max_seq_length)
    except model_files.ModelFilesError as e:
        raise FinetuneError(str(e)) from None
    return files, setup(config)


def splits_to_read(data, config):
    """The splits a run reads: do_train's, do_eval's (or eval_every_steps') and do_predict's.

    Args:
      data: A finetune_data.FinetuneData.
      config: A FinetuneConfig.

    Returns:
      A tuple of split names, in that order.
    """
    evaluates = config.do_eval or (config.do_train and config.eval_every_steps)
    return (((data.train_split,) if config.do_train else ())
            + (tuple(data.eval_splits) if evaluates else ())
            + (tuple(data.predict_splits) if config.do_predict else ()))


def run(config, task, data, files, runtime, num_chunks=1, after_chunk=None):
    """Fine-tunes, evaluates, predicts and exports, as the config asks.

    Every split the run needs is read and checked before training, so that a
    missing file or a bad row in a dev or test set fails now, not after the
    training. Each split's records are written once, to output_dir on the
    chief (_records_dir()); dev and test records are padded to full batches,
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

    The run goes through its phases in order, each a method of one
    _FinetuneRun, which keeps what every phase shares (_SplitCache: each
    split's records and predictions, made once): prepare (checks, reading,
    the trainer), train (with the evaluations during training), the best
    model, evaluate, predict, export.

    Args:
      config: A FinetuneConfig.
      task: A tasks.Task.
      data: Its finetune_data.FinetuneData, of the same max_seq_length.
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
    finetune_run = _FinetuneRun.prepare(config, task, data, files, runtime)
    with _records_dir(finetune_run.trainer) as folder:
        finetune_run.cache = _SplitCache(config, task, data, finetune_run.trainer, folder)
        if config.do_train:
            finetune_run.train(num_chunks, after_chunk)
        best = finetune_run.use_best()
        results = finetune_run.evaluate(best) if config.do_eval else None
        if config.do_predict:
            finetune_run.predict()
    if config.export_dir and finetune_run.trainer.is_chief:
        _export_model(config.export_dir, finetune_run.trainer, files, config.max_seq_length,
                      shapes=config.export_shapes)
    return FinetuneResult(finetune_run.trainer, results,
                          finetune_run.cache.predicted(splits_to_read(data, config)))


class _SplitCache:
    """What a run has made of its splits, each made once: records, predictions, output files.

    A split's records are written to the run's records folder once per
    batch size (dev and test sets are padded to a multiple of it); a
    data.source() is predicted once, and its output files written once,
    whichever of its splits asks first.
    """

    def __init__(self, config, task, data, trainer, folder):
        """Starts empty.

        Args:
          config: The FinetuneConfig (its padding settings).
          task: The tasks.Task (its record layouts).
          data: Its finetune_data.FinetuneData.
          trainer: The Trainer that predicts.
          folder: Where the records are written (_records_dir()).
        """
        self.task = task
        self.data = data
        self.trainer = trainer
        self.folder = folder
        self.reader_args = _reader_args(config)
        # {(split, batch_size): (input function, order)}
        self._inputs = {}
        # {data.source(split): predict()'s dict}
        self._predictions = {}
        # The data.source() of every split whose output files are written.
        self._written = set()

    def input_fn(self, split, batch_size, is_training):
        """Writes one split's records, once; their input function for the trainer.

        With dynamic padding a dev or test split is written from its
        shortest record to its longest, so that each batch is cut to
        lengths its records share; predict() restores the input order.

        Returns:
          (input function, order): order as predict() takes it, None when
          the records are in input order.
        """
        if (split, batch_size) not in self._inputs:
            path = os.path.join(self.folder, f"{split}.tf_record")
            specs = (self.task.feature_specs() if is_training
                     else self.task.prediction_feature_specs())
            records = list(self.data.records(split))
            order = None
            if not is_training and self.reader_args["trim_to_multiple_of"]:
                order = finetune_data.length_order(records, specs)
                records = [records[i] for i in order]
            finetune_data.write_records(path, records, specs, None if is_training else batch_size)
            self._inputs[split, batch_size] = (_dataset_fn(
                input_pipeline.finetuning_dataset, path, batch_size, is_training,
                features=specs, **self.reader_args), order)
        return self._inputs[split, batch_size]

    def predictions(self, split, batch_size):
        """predict() of a split, once per data.source()."""
        source = self.data.source(split)
        if source not in self._predictions:
            logging.info("Predicting %s (%s).", self.data.describe(split), split)
            predict_fn, order = self.input_fn(split, batch_size, False)
            self._predictions[source] = predict(self.trainer, predict_fn, order)
        return self._predictions[source]

    def score_now(self, split, batch_size, keep):
        """The split's metrics of the model as it is now, predicted afresh.

        Args:
          split: An eval split.
          batch_size: Its batch size.
          keep: Keep these predictions as the split's (the final model's,
            which the evaluation after training then reuses).

        Returns:
          data.score()'s dict.
        """
        predict_fn, order = self.input_fn(split, batch_size, False)
        metrics, predictions = evaluate(self.trainer, self.data, split, predict_fn, order)
        if keep:
            self._predictions[self.data.source(split)] = predictions
        return metrics

    def forget_predictions(self):
        """Drops every prediction kept: they are not the model's that is now loaded."""
        self._predictions.clear()

    def write_outputs(self, split):
        """The data's output files of a split's predictions: once per data.source(), by
        the chief."""
        source = self.data.source(split)
        if source not in self._written:
            self._written.add(source)
            if self.trainer.is_chief:
                self.data.write_outputs(self._predictions[source], self.data.references(split),
                                        self.trainer.output_dir)

    def predicted(self, splits):
        """{split: predict()'s dict} of those of the splits that were predicted."""
        return {split: self._predictions[self.data.source(split)] for split in splits
                if self.data.source(split) in self._predictions}


class _FinetuneRun:
    """One run of run(), phase by phase; see run().

    Attributes:
      config, data: run()'s.
      trainer: The Trainer.
      num_train_steps, num_warmup_steps: train_steps()' (0, 0 without training).
      keeper: The best_checkpoint.BestKeeper with eval_every_steps, else None.
      cache: The run's _SplitCache, once its records folder is known.
    """

    def __init__(self, config, data, trainer, num_train_steps, num_warmup_steps, keeper):
        self.config = config
        self.data = data
        self.trainer = trainer
        self.num_train_steps = num_train_steps
        self.num_warmup_steps = num_warmup_steps
        self.keeper = keeper
        self.cache = None

    @classmethod
    def prepare(cls, config, task, data, files, runtime):
        """Checks the run, reads its splits and builds the trainer, before any work.

        Returns:
          A _FinetuneRun.
        """
        check_actions(config)
        check_config(config)
        _check_lengths(config, task, data)
        data.read(splits_to_read(data, config))
        evaluates_during_training = config.do_train and config.eval_every_steps > 0
        for split in data.eval_splits if config.do_eval or evaluates_during_training else ():
            # Before any training or prediction: a file without answers cannot be scored.
            data.check_scorable(split)
        num_train_steps, num_warmup_steps = 0, 0
        if config.do_train:
            num_train_steps, num_warmup_steps = train_steps(
                data.num_train_examples(), config.train_batch_size,
                config.num_train_epochs, config.warmup_proportion)
        trainer = create_trainer(
            task, files, runtime,
            config.training_config(max(num_train_steps, 1), num_warmup_steps, runtime.strategy),
            run=config, settings=_task_settings(task, data, files))
        if trainer.is_chief:
            run_checks.remove_stale_eval_results(
                trainer.output_dir,
                model_changes=(config.do_train and not config.do_eval
                               and trainer.global_step < num_train_steps),
                outputs_change=(data.eval_writes_outputs and config.do_predict
                                and not config.do_eval))
        keeper = None
        if evaluates_during_training:
            keeper = best_checkpoint.BestKeeper(
                trainer.output_dir, data.main_metric, config.early_stopping_patience,
                trainer.global_step, trainer.is_chief, trainer.encoder, trainer.heads)
        if config.do_train and trainer.is_chief:
            # Training on in a folder means training on the same data, cut alike.
            run_dir.check_settings(trainer.output_dir, "training data", data.training_settings(),
                                   resuming=trainer.global_step > 0)
            data.write_run_files(trainer.output_dir)
        return cls(config, data, trainer, num_train_steps, num_warmup_steps, keeper)

    def train(self, num_chunks, after_chunk):
        """Trains in chunks, evaluating when due and reporting after each; stops early
        when the keeper says so."""
        config, data, trainer, keeper = self.config, self.data, self.trainer, self.keeper
        logging.info("Training on %s: %d steps, %d warmup.", data.describe(data.train_split),
                     self.num_train_steps, self.num_warmup_steps)
        micro_batch = config.train_batch_size // config.gradient_accumulation_steps
        train_fn, _ = self.cache.input_fn(data.train_split, micro_batch, True)
        if after_chunk and trainer.global_step == 0:
            self._report(after_chunk, ())
        self._evaluate_if_due()
        # A run that stopped early stays stopped when its command runs again.
        stopped = keeper is not None and keeper.should_stop()
        chunks = () if stopped else _train_in_chunks(
            trainer, train_fn, self.num_train_steps, config.train_batch_size, num_chunks,
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
            self.data.eval_splits[0], self.config.eval_batch_size,
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
        if metrics is None and self.config.do_eval:
            metrics = self._score_first_eval_split()
        after_chunk(TrainingProgress(self.trainer, self.num_train_steps, tuple(history),
                                     metrics))

    def use_best(self):
        """Loads the best model kept in output_dir, where it stands for the run.

        Returns:
          The best_checkpoint.Best loaded, or None (the newest model stays).
        """
        config, trainer = self.config, self.trainer
        best = None
        if config.do_eval or config.do_predict or config.export_dir:
            best = best_checkpoint.kept_best(trainer.output_dir, trainer.global_step)
        if best is not None:
            best_checkpoint.restore(best, trainer.encoder, trainer.heads)
            # Predictions of the last model, made during training, are not the best's.
            self.cache.forget_predictions()
            logging.info("Evaluating, predicting and exporting with the best model, %s, "
                         "from %s (the newest checkpoint, step %d, stays for training on).",
                         best.describe(), os.path.dirname(best.path), trainer.global_step)
        return best

    def evaluate(self, best):
        """Scores every eval split and writes eval_results.txt.

        Args:
          best: use_best()'s, whose step eval_results.txt gives; None: the
            newest model's.

        Returns:
          The results, as eval_results.txt holds them (without global_step).
        """
        data = self.data
        results = {}
        for split in data.eval_splits:
            split_predictions = self.cache.predictions(split, self.config.eval_batch_size)
            if data.eval_writes_outputs:
                self.cache.write_outputs(split)
            metrics = data.score(split_predictions, data.references(split))
            # Several dev sets (MNLI's matched and mismatched) share one file.
            prefix = f"{split}_" if len(data.eval_splits) > 1 else ""
            results.update({prefix + name: value for name, value in metrics.items()})
        self.trainer.write_eval_results(results, step=best.step if best else None)
        return results

    def predict(self):
        """Predicts every predict split and writes its output files."""
        for split in self.data.predict_splits:
            self.cache.predictions(split, self.config.predict_batch_size)
            self.cache.write_outputs(split)
