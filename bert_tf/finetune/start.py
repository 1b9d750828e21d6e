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


def flagged_settings(data):
    """The keys of the settings a run records (task_settings(), the data's eval_settings())
    that are the flag of the same name: a run that differs from its folder in these is told
    the flag's value to give (run_dir.check_settings).

    Args:
      data: The protocol.FinetuneData.

    Returns:
      A tuple of keys: do_lower_case, which every fine-tuning script has, and the
      data's flagged_settings.
    """
    return ("do_lower_case", *data.flagged_settings)


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


def init_run_folder(init_checkpoint):
    """The run folder an init_checkpoint names, where a fine-tuned run keeps its labels.

    Args:
      init_checkpoint: --init_checkpoint: a folder, a checkpoint prefix, or None.

    Returns:
      The folder itself, a prefix's run folder (run_dir.run_folder), or None.
    """
    if not init_checkpoint:
        return None
    if tf.io.gfile.isdir(init_checkpoint):
        return init_checkpoint
    return run_dir.run_folder(init_checkpoint)


def check_loaded_head(init_checkpoint, load_report, settings, trains):
    """Refuses a head loaded from a fine-tuned run whose labels or problem type are not this
    run's.

    A head's outputs are its run's labels in its run's order (the run
    records them in its run_settings.json): read as other labels, or in
    another order, every prediction would name the wrong class. The same
    labels in another order are refused even when the run trains: training
    would first have to undo the head's mapping, and the user meant the
    model's. Other labels, or another problem type, are refused unless the
    run trains the head anew.

    Args:
      init_checkpoint: --init_checkpoint, for the message.
      load_report: The checkpoints.LoadReport of init_checkpoint's load.
      settings: This run's task settings (task_settings()).
      trains: Whether this run trains the head.

    Raises:
      FinetuneError: naming --labels or --problem_type, the folder's values
        and the checkpoint.
    """
    if load_report.initialized or load_report.format != "tf2":
        return  # The head was not loaded, or not from a run of bert_tf's.
    folder = run_dir.run_folder(load_report.path)
    recorded = run_dir.read_settings(folder).get("task")
    if recorded is None:
        return
    source = f"--init_checkpoint={init_checkpoint}'s head"
    labels, recorded_labels = settings.get("labels"), recorded.get("labels")
    if labels and recorded_labels and labels != recorded_labels and sorted(
            labels) == sorted(recorded_labels):
        raise FinetuneError(
            f"{run_dir.as_flag('labels', labels)}: {source} was trained with "
            f"{run_dir.as_flag('labels', recorded_labels)} (in {folder}), the same labels in "
            "another order: give them in that order")
    if trains:
        return
    differences = [key for key in ("problem_type", "labels")
                   if key in recorded and recorded[key] != settings.get(key)]
    if differences:
        raise FinetuneError(
            f"{', '.join(run_dir.as_flag(key, settings.get(key)) for key in differences)}: "
            f"{source} was trained with "
            f"{', '.join(run_dir.as_flag(key, recorded[key]) for key in differences)} (in "
            f"{folder}); give that, or --do_train to train the head anew")


def create_trainer(task, files, runtime, config, finetune_config=None, settings=None,
                   flags=()):
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
      flags: The keys of settings that are a flag's name (flagged_settings()).

    Returns:
      The restored training_loop.Trainer.

    Raises:
      run_checks.RunCheckError: a random head that run does not train.
      run_dir.RunDirError: output_dir's model is for another task, labels,
        vocab or casing.
      FinetuneError: init_checkpoint's head is a fine-tuned run's, for other
        labels or another problem type (check_loaded_head()).
    """
    tf.io.gfile.makedirs(config.output_dir)
    trainer = training_loop.Trainer(task, files.bert_config, runtime, config)
    if trainer.is_chief and settings is not None:
        # Before anything is written to the folder, and before the model's
        # shapes are checked (restore()): another task's model of the same
        # shape (SST-2's, resumed as CoLA's) must be neither trained on, nor
        # scored, nor exported as this one, and another problem type's
        # heads differ in shape, which the flag that differs explains better.
        run_dir.check_settings(config.output_dir, "task", settings,
                               resuming=trainer.training_checkpoints.latest() is not None,
                               flags=flags)
    resumed = trainer.restore(files.init_checkpoint) == "resumed"
    if finetune_config is not None:
        # An export of the pretrained encoder with a random head would look
        # like a finished model, and its scores like a result.
        initialized = [] if resumed or trainer.load_report is None else (
            trainer.load_report.initialized)
        run = finetune_config.run
        if not resumed and trainer.load_report is not None and settings is not None:
            check_loaded_head(finetune_config.model.init_checkpoint, trainer.load_report,
                              settings, run.do_train)
        run_checks.check_loaded_heads(
            initialized, finetune_config.model.init_checkpoint, run.do_train, run.do_eval,
            finetune_config.do_predict, finetune_config.export.export_dir,
            run.allow_random_weights)
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
