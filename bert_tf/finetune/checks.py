"""What fine-tuning refuses before any work, and what it counts: FinetuneError, the
checks of a config, its task and its data, the splits a run reads and its steps.

A message names the flag or file to change, for cli.run's one line.
"""

from bert_tf import output_folders
from bert_tf.training import run_checks


class FinetuneError(ValueError):
    """A setting or input that fine-tuning cannot run with; the message says which."""


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
    if config.padding.group_by_length and not config.padding.dynamic_padding:
        raise FinetuneError("--group_by_length only saves work with --dynamic_padding")
    if config.eval_every_steps < 0 or config.early_stopping_patience < 0:
        raise FinetuneError("--eval_every_steps and --early_stopping_patience must not be "
                            "negative (0 turns them off)")
    if config.early_stopping_patience and not config.eval_every_steps:
        raise FinetuneError("--early_stopping_patience counts evaluations during training: "
                            "give --eval_every_steps too")
    if config.eval_every_steps and not config.run.do_train:
        raise FinetuneError("--eval_every_steps evaluates during training: add --do_train "
                            "(a run without it uses the best model kept in --output_dir "
                            "by itself)")


def check_lengths(config, task, data):
    """Refuses a task or data whose max_seq_length is not the config's.

    The config's is the one the model's position embeddings are checked
    against (model_files.find) and the export packs to; the task's records
    and the data's must be that long.

    Args:
      config: A FinetuneConfig.
      task: A tasks.Task (its max_seq_length, None: unsaid).
      data: A protocol.FinetuneData (likewise).

    Raises:
      FinetuneError: naming the lengths that differ.
    """
    lengths = {"the config": config.model.max_seq_length,
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
    weights to use, training at a learning rate of 0, and an export_dir that
    holds a user's files (output_folders.py), are refused here, before any
    work.

    Args:
      config: A FinetuneConfig.

    Returns:
      True when export_dir is the only action.

    Raises:
      FinetuneError: None of do_train, do_eval, do_predict and export_dir.
      run_checks.RunCheckError: random weights not asked for, or a learning
        rate of 0.
      output_folders.OutputFolderError: export_dir holds files that are no
        part of an earlier SavedModel.
    """
    runs = config.run.do_train or config.run.do_eval or config.do_predict
    if not (runs or config.export.export_dir):
        raise FinetuneError("At least one of do_train, do_eval, do_predict or export_dir "
                            "must be given.")
    run = config.run
    run_checks.check_learning_rate(run.do_train, config.optimizer.learning_rate)
    run_checks.check_weights_source(run.output_dir, config.model.init_checkpoint, run.do_train,
                                    run.do_eval, config.do_predict, config.export.export_dir,
                                    run.allow_random_weights)
    if config.export.export_dir:
        output_folders.check_replaceable(config.export.export_dir, output_folders.SAVED_MODEL,
                                         "export_dir")
    return not runs


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


def splits_to_read(data, config):
    """The splits a run reads: do_train's, do_eval's (or eval_every_steps') and do_predict's.

    Args:
      data: A protocol.FinetuneData.
      config: A FinetuneConfig.

    Returns:
      A tuple of split names, in that order.
    """
    evaluates = config.run.do_eval or (config.run.do_train and config.eval_every_steps)
    return (((data.train_split,) if config.run.do_train else ())
            + (tuple(data.eval_splits) if evaluates else ())
            + (tuple(data.predict_splits) if config.do_predict else ()))
