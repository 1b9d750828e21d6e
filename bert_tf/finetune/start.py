"""What comes before fine-tuning's first step: the model's files, the runtime, the Trainer.

start() finds and checks the pretrained model's files (model_files.find)
and sets up the runtime (setup(): seed, strategy, precision, XLA, batch
sizes); create_trainer() builds the task's Trainer, resumed from output_dir
or initialized from the pretrained checkpoint, and writes beside the
checkpoints what a conversion or a later run needs.
"""

import json
import os

import tensorflow as tf

from bert_tf import io_utils
from bert_tf.checkpoints import checkpoints, model_files
from bert_tf.data.fingerprints import file_fingerprint
from bert_tf.finetune.checks import FinetuneError, check_config
from bert_tf.runtime import run_setup, tpu_rules
from bert_tf.training import run_checks, run_dir, training_loop


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
    runtime = run_setup.prepare(config.runtime)
    strategy = runtime.strategy
    if config.padding.dynamic_padding and tpu_rules.enforced(strategy):
        raise FinetuneError("--dynamic_padding is for CPUs and GPUs: a TPU program needs "
                            "one static sequence length")
    try:
        run_setup.validate_batch_sizes(
            strategy, config.batches.train_batch_size, config.optimizer.gradient_accumulation_steps,
            do_train=config.run.do_train, eval_batch_size=config.batches.eval_batch_size,
            predict_batch_size=config.predict_batch_size)
    except ValueError as e:
        raise FinetuneError(str(e)) from None
    return runtime


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
        files = model_files.find(config.model.init_checkpoint, config.model.bert_config_file,
                                 config.vocab.vocab_file, config.vocab.do_lower_case,
                                 config.model.max_seq_length)
    except model_files.ModelFilesError as e:
        raise FinetuneError(str(e)) from None
    return files, setup(config)


def task_settings(task, data, files):
    """What a fine-tuned model is for: run_dir's "task" group of settings.

    Args:
      task: A tasks.Task.
      data: Its protocol.FinetuneData.
      files: The ModelFiles.

    Returns:
      A dict: the task's class, data.task_settings() (the task's name and
      labels), the vocab's file_fingerprint (its content, wherever
      it is) and the casing.
    """
    return {"task": type(task).__name__, **data.task_settings(),
            "vocab": file_fingerprint(files.vocab_file),
            "do_lower_case": files.do_lower_case}


def create_trainer(task, files, runtime, config, finetune_config=None, settings=None):
    """A Trainer for the task, resumed from config.output_dir or initialized.

    Args:
      task: A tasks.Task.
      files: The pretrained model's ModelFiles.
      runtime: setup()'s run_setup.Runtime.
      config: A run_setup.TrainingConfig.
      finetune_config: The FinetuneConfig whose actions the model is for:
        unless it trains, an init_checkpoint without the task's head is refused
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
    if finetune_config is not None:
        # An export of the pretrained encoder with a random head would look
        # like a finished model, and its scores like a result.
        initialized = [] if resumed or trainer.load_report is None else (
            trainer.load_report.initialized)
        run = finetune_config.run
        run_checks.check_loaded_heads(
            initialized, finetune_config.model.init_checkpoint, run.do_train, run.do_eval,
            finetune_config.do_predict, finetune_config.export.export_dir,
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
