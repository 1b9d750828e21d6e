"""Fine-tuning, as every task script and the notebook do it.

run() takes a task (tasks/) and its data (a finetune_data.FinetuneData) through
the whole sequence the flags ask for: train, evaluate, predict, export, with
the results files and the log lines; start() comes before it, and a script is
its flags, start(), the task, the data and run(). The steps it is made of, in
order, for a script or a notebook that goes its own way:
  check_actions()   refuses a run with nothing to do; tells an export-only run;
  model_files()     the pretrained model's config, vocab and casing, checked
                    against each other and against max_seq_length;
  setup()           seed, strategy, precision and batch checks, before any
                    model is built;
  train_steps()     optimizer updates and warmup from epochs;
  task_settings()   what the model is for, which a later run of the same
                    output_dir must share;
  create_trainer()  a training.Trainer for a task, resumed from output_dir or
                    initialized from the pretrained checkpoint;
  records_dir()     where this process writes its TFRecords;
  dataset_fn()      the input pipeline for Trainer.train / predict;
  padding_args()    --dynamic_padding and --group_by_length, for readers
                    that trim batches (define_padding_flags() defines them);
  train_in_chunks() training in chunks, with a look at the model after each;
  predict()         predictions in input order, padding dropped;
  evaluate()        the task's official metrics on a dev set;
  write_outputs()   the task's output files of a prediction;
  write_eval_results()  eval_results.txt, written once, whole;
  export_model()    a raw-text SavedModel;
  splits_to_read()  the splits a run's flags ask its data for.

Nothing here depends on which task runs: the task (tasks/) and its data
module (glue/, ...) supply the rest. Errors in the user's input raise
FinetuneError (a ValueError) with a message that names the flag or file.
"""

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
from absl import flags, logging

from bert_tf import (
    checkpoints,
    cli,
    distribution,
    export,
    finetune_data,
    input_pipeline,
    io_utils,
    precision,
    run_dir,
    serving,
    tokenization,
    tpu_rules,
    training,
)
from bert_tf.config import BertConfig


def define_finetune_flags(flag_values=flags.FLAGS):
    """Defines the flags every fine-tuning script shares, with the original's names.

    Scripts also call training.define_training_flags() and
    distribution.define_tpu_flags().

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    flags.DEFINE_string(
        "vocab_file", None, "vocab.txt the model was trained with; default: the vocab.txt "
        "beside --init_checkpoint (Google's and Hugging Face folders have one).", **fv)
    flags.DEFINE_bool(
        "do_lower_case", True,
        "Lower-case the input: True for uncased models, False for cased ones. Default: a "
        "Hugging Face --init_checkpoint folder's tokenizer_config.json setting, else True.",
        **fv)
    flags.DEFINE_bool("do_predict", False, "Predict on the test set and write the output "
                      "files.", **fv)
    flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.",
                         lower_bound=1, **fv)
    flags.DEFINE_float("num_train_epochs", 3.0, "Training epochs.", **fv)
    flags.register_validator("num_train_epochs", lambda value: value > 0,
                             "--num_train_epochs must be positive", flag_values=flag_values)
    flags.DEFINE_float(
        "warmup_proportion", 0.1, "Share of training with a linear learning-rate warmup.",
        lower_bound=0.0, upper_bound=1.0, **fv)
    flags.DEFINE_string(
        "export_dir", None, "Write a raw-text SavedModel here, after training; alone (without "
        "--do_train, --do_eval or --do_predict), of the run already in --output_dir.", **fv)
    flags.DEFINE_enum(
        "export_shapes", "dynamic", serving.SHAPES,
        "dynamic: the SavedModel pads each batch only to its longest input (in steps of "
        f"{input_pipeline.LENGTH_MULTIPLE}) and runs XLA-compiled, for CPU and GPU serving; "
        "static: every input padded to --max_seq_length, one fixed shape, for TPU serving.",
        **fv)


# --group_by_length sorts this many batches' worth of examples at a time:
# enough for batches of similar length, few enough to keep the order random.
LENGTH_GROUP_BATCHES = 50


def define_padding_flags(flag_values=flags.FLAGS):
    """Defines --dynamic_padding and --group_by_length, for scripts whose reader has them.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    flags.DEFINE_bool(
        "dynamic_padding", False,
        "Cut each batch's padding down to its longest example, rounded up to a multiple of "
        f"{input_pipeline.LENGTH_MULTIPLE}: the same results, faster on CPU and GPU when most "
        "examples are much shorter than max_seq_length. Not on TPU, which needs one static shape.",
        flag_values=flag_values)
    flags.DEFINE_bool(
        "group_by_length", False,
        "With --dynamic_padding: fill each training batch with examples of similar length, "
        f"drawn from a shuffled group of {LENGTH_GROUP_BATCHES} batches sorted by length. "
        "Much less padding, hence faster; but batches are no longer uniformly random, so "
        "results can differ a little from the original's recipe.", flag_values=flag_values)


def padding_args(flag_values):
    """The reader arguments that define_padding_flags' flags ask for.

    Args:
      flag_values: Parsed flags with dynamic_padding and group_by_length.

    Returns:
      {"trim_to_multiple_of": ..., "length_group_batches": ...}, each None
      when off.

    Raises:
      FinetuneError: --group_by_length without --dynamic_padding.
    """
    if flag_values.group_by_length and not flag_values.dynamic_padding:
        raise FinetuneError("--group_by_length only saves work with --dynamic_padding")
    multiple = input_pipeline.LENGTH_MULTIPLE if flag_values.dynamic_padding else None
    return {"trim_to_multiple_of": multiple,
            "length_group_batches": (LENGTH_GROUP_BATCHES if flag_values.group_by_length
                                     else None)}


class FinetuneError(ValueError):
    """A setting or input that fine-tuning cannot run with; the message says which."""


@dataclasses.dataclass(frozen=True)
class ModelFiles:
    """What fine-tuning needs to know of the pretrained model.

    Attributes:
      bert_config: The encoder's BertConfig.
      vocab_file: The vocab.txt it was pretrained with.
      do_lower_case: Whether its input is lower-cased (uncased models).
      init_checkpoint: Its weights (any checkpoints.py format), or None for
        random weights.
    """

    bert_config: BertConfig
    vocab_file: str
    do_lower_case: bool
    init_checkpoint: str | None

    def tokenizer(self):
        """A tokenization.FullTokenizer for this model."""
        return tokenization.FullTokenizer(self.vocab_file, self.do_lower_case)


def check_actions(flag_values):
    """Checks that a run has something to do; tells whether it only exports.

    --export_dir alone exports a finished run (the newest checkpoint in
    --output_dir, else --init_checkpoint) without training or evaluating it.

    Args:
      flag_values: The parsed flags of define_finetune_flags().

    Returns:
      True when --export_dir is the only action.

    Raises:
      FinetuneError: None of --do_train, --do_eval, --do_predict and --export_dir.
    """
    runs = flag_values.do_train or flag_values.do_eval or flag_values.do_predict
    if not (runs or flag_values.export_dir):
        raise FinetuneError("At least one of do_train, do_eval, do_predict or export_dir "
                            "must be given.")
    return not runs


def model_files(init_checkpoint, bert_config_file=None, vocab_file=None, do_lower_case=None,
                max_seq_length=None):
    """Finds a pretrained model's config, vocab and casing, and checks that they fit.

    What is not given is looked for beside the checkpoint: Google's released
    folders hold bert_config.json and vocab.txt, Hugging Face folders
    config.json, vocab.txt and tokenizer_config.json (with the casing).

    Args:
      init_checkpoint: The pretrained weights, or None.
      bert_config_file: An explicit config, which wins.
      vocab_file: An explicit vocab, which wins.
      do_lower_case: The casing, or None to take the folder's record (else True).
      max_seq_length: If given, checked against max_position_embeddings.

    Returns:
      A ModelFiles.

    Raises:
      FinetuneError: naming the flag, when something is missing or does not
        fit: a --do_lower_case that contradicts the checkpoint's recorded
        casing included (one that contradicts only its vocab's look is a
        warning).
    """
    if not (init_checkpoint or bert_config_file):
        raise FinetuneError("Give --bert_config_file (or an --init_checkpoint beside which "
                            "one is found).")
    try:
        vocab_file = checkpoints.find_vocab(init_checkpoint, vocab_file)
        recorded_case = checkpoints.find_do_lower_case(init_checkpoint, None)
        if do_lower_case is None:
            do_lower_case = True if recorded_case is None else recorded_case
        elif recorded_case is not None and recorded_case != do_lower_case:
            raise FinetuneError(
                f"--do_lower_case={do_lower_case} contradicts --init_checkpoint="
                f"{init_checkpoint}, whose tokenizer_config.json says do_lower_case="
                f"{recorded_case}: drop the flag (the folder's casing is the default)")
        tokenization.validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
        config = checkpoints.find_config(init_checkpoint, bert_config_file)
        vocab = tokenization.load_vocab(vocab_file)
    except (ValueError, OSError, tf.errors.OpError) as e:
        # ConfigError, CheckpointError, an unreadable file: all name the file.
        raise FinetuneError(str(e)) from None
    # A checkpoint that records its casing nowhere: its vocab still tells.
    mismatch = (tokenization.case_mismatch_with_vocab(do_lower_case, vocab, vocab_file)
                if recorded_case is None else None)
    if mismatch:
        cli.warn(mismatch)
    vocab_size = len(vocab)
    if max_seq_length is not None and max_seq_length > config.max_position_embeddings:
        raise FinetuneError(
            f"--max_seq_length={max_seq_length} exceeds the model's "
            f"max_position_embeddings={config.max_position_embeddings}")
    if vocab_size != config.vocab_size:
        raise FinetuneError(
            f"the vocab file has {vocab_size} tokens but the model's vocab_size "
            f"is {config.vocab_size}: the checkpoint was trained with another vocab")
    return ModelFiles(config, vocab_file, do_lower_case, init_checkpoint)


def model_files_from_flags(flag_values):
    """model_files() from the scripts' flags; --do_lower_case counts only when given.

    Args:
      flag_values: Parsed flags with init_checkpoint, bert_config_file,
        vocab_file, do_lower_case and max_seq_length.

    Returns:
      A ModelFiles.
    """
    given = flag_values["do_lower_case"].present
    return model_files(flag_values.init_checkpoint, flag_values.bert_config_file,
                       flag_values.vocab_file, flag_values.do_lower_case if given else None,
                       flag_values.max_seq_length)


def setup(flag_values, static_shapes=True):
    """Seeds, picks the strategy and the precision, and checks the batch flags.

    The strategy comes before anything else touches TensorFlow's devices:
    MultiWorkerMirroredStrategy cannot be set up once TensorFlow has started.

    Args:
      flag_values: Parsed flags of training.define_training_flags and
        distribution.define_tpu_flags.
      static_shapes: False when batches vary in shape (--dynamic_padding,
        in every script that defines it), which a TPU cannot run (nor any device under
        BERT_TF_TPU_RULES=1, see tpu_rules.py).

    Returns:
      The tf.distribute.Strategy.

    Raises:
      FinetuneError: for batch sizes that do not split, or varying shapes on TPU.
    """
    training.set_random_seed(flag_values.seed)
    strategy = distribution.strategy_from_flags(flag_values)
    if not static_shapes and tpu_rules.enforced(strategy):
        raise FinetuneError("--dynamic_padding is for CPUs and GPUs: a TPU program needs "
                            "one static sequence length")
    precision.set_precision_policy(flag_values.mixed_precision, strategy)
    try:
        training.validate_batch_flags(flag_values, strategy)
    except ValueError as e:
        raise FinetuneError(str(e)) from None
    return strategy


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


def task_settings(task, data, files):
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


def create_trainer(task, files, strategy, config, trained_required=False, settings=None):
    """A Trainer for the task, resumed from config.output_dir or initialized.

    Args:
      task: A tasks.Task.
      files: The pretrained model's ModelFiles.
      strategy: From setup().
      config: A training.TrainingConfig.
      trained_required: Refuse to start from anything but output_dir's own
        checkpoint (an export-only run: an export of the pretrained encoder
        with a random head would look like a finished model).
      settings: task_settings(), checked against output_dir's record when
        its model is resumed, recorded otherwise; None checks nothing.

    Returns:
      The restored training.Trainer.

    Raises:
      FinetuneError: trained_required, and output_dir has no checkpoint.
      run_dir.RunDirError: output_dir's model is for another task, labels,
        vocab or casing.
    """
    tf.io.gfile.makedirs(config.output_dir)
    trainer = training.Trainer(task, files.bert_config, strategy, config)
    resumed = trainer.restore(files.init_checkpoint) == "resumed"
    if not resumed and trained_required:
        raise FinetuneError(f"--export_dir alone exports the run in --output_dir, but "
                            f"{config.output_dir} has no checkpoint: add --do_train")
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
        settings = {"config": task.hf_config(), "do_lower_case": files.do_lower_case}
        with io_utils.atomic_write(
                os.path.join(config.output_dir, checkpoints.HF_SETTINGS_FILE), "w") as f:
            json.dump(settings, f, indent=2, sort_keys=True)
    return trainer


@contextlib.contextmanager
def records_dir(trainer):
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


def dataset_fn(reader, path, global_batch_size, is_training, **reader_args):
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


def train_in_chunks(trainer, train_fn, num_train_steps, global_batch_size, num_chunks=1):
    """Trains to num_train_steps in equal chunks, pausing after each.

    A resumed run skips the chunks it has done. The caller looks at the
    model between chunks (the notebook evaluates it for its curves).

    Args:
      trainer: The Trainer.
      train_fn: dataset_fn() of the training records.
      num_train_steps: The last step.
      global_batch_size: Examples per optimizer update.
      num_chunks: How many pauses.

    Yields:
      Each chunk's history (see Trainer.train), after the chunk.
    """
    ends = sorted({max(1, round(num_train_steps * (i + 1) / num_chunks))
                   for i in range(num_chunks)})
    for end in ends:
        if end > trainer.global_step:
            yield trainer.train(train_fn, end, global_batch_size)


def predict(trainer, predict_fn):
    """The task's predictions over a dev or test set, in input order, padding dropped.

    Args:
      trainer: The Trainer.
      predict_fn: dataset_fn() of the records (is_training=False).

    Returns:
      {name: np.ndarray} over the real examples; is_real_example removed.
    """
    predictions = trainer.predict(predict_fn)
    real = predictions.pop("is_real_example", None)
    if real is None:
        return predictions
    keep = np.asarray(real) == 1
    return {name: value[keep] for name, value in predictions.items()}


def evaluate(trainer, predict_fn, references):
    """The task's official metrics on one dev set.

    Args:
      trainer: The Trainer (its task scores).
      predict_fn: dataset_fn() of the dev records.
      references: What the task's score() takes (labels, examples, ...).

    Returns:
      (metrics, predictions): task.score()'s dict, and predict()'s.
    """
    predictions = predict(trainer, predict_fn)
    return trainer.task.score(predictions, references), predictions


def write_outputs(trainer, predictions, references):
    """Writes the task's output files of one prediction to output_dir, on the chief.

    Args:
      trainer: The Trainer (its task and output_dir).
      predictions: predict()'s dict.
      references: What the task's write_outputs() takes (examples, ...).
    """
    if trainer.is_chief:
        trainer.task.write_outputs(predictions, references, trainer.output_dir)


def write_eval_results(trainer, results):
    """Writes output_dir/eval_results.txt on the chief, and prints it.

    Call it once with every split's numbers: a run that fails on the way
    thus leaves no results file that looks complete.

    Args:
      trainer: The Trainer (its output_dir and global_step).
      results: {name: number}; global_step is added.
    """
    if not trainer.is_chief:
        return
    results = {"global_step": trainer.global_step, **results}
    io_utils.write_results(os.path.join(trainer.output_dir, "eval_results.txt"), results)
    for key in sorted(results):
        print(f"{key} = {results[key]}")


def export_model(export_dir, trainer, files, max_seq_length, shapes="dynamic"):
    """Writes the task's raw-text SavedModel from the trained model.

    Args:
      export_dir: Destination folder; replaced if it exists.
      trainer: The trained Trainer.
      files: The ModelFiles (vocab and casing the SavedModel tokenizes with).
      max_seq_length: As in training.
      shapes: One of serving.SHAPES (--export_shapes).

    Returns:
      export_dir.
    """
    logging.info("Exporting to %s (computing in %s)", export_dir, trainer.inference_policy)
    return export.export_task(export_dir, trainer.task, trainer.encoder, trainer.heads,
                              files.vocab_file, files.do_lower_case, max_seq_length,
                              trainer.inference_policy, shapes)


def start(flag_values):
    """What comes before the task: the model's files, then the strategy.

    Args:
      flag_values: The parsed flags of define_finetune_flags(),
        training.define_training_flags(), distribution.define_tpu_flags()
        and, where the script has them, define_padding_flags().

    Returns:
      (files, strategy): model_files_from_flags()' ModelFiles and setup()'s
      strategy.

    Raises:
      FinetuneError: naming the flag or file that does not fit.
    """
    dynamic_padding = "dynamic_padding" in flag_values and flag_values.dynamic_padding
    if "group_by_length" in flag_values:
        padding_args(flag_values)  # Refuses --group_by_length alone, before any work.
    files = model_files_from_flags(flag_values)
    return files, setup(flag_values, static_shapes=not dynamic_padding)


def splits_to_read(data, flag_values):
    """The splits a run reads: --do_train's, --do_eval's and --do_predict's.

    Args:
      data: A finetune_data.FinetuneData.
      flag_values: The parsed flags.

    Returns:
      A tuple of split names, in that order.
    """
    return (((data.train_split,) if flag_values.do_train else ())
            + (tuple(data.eval_splits) if flag_values.do_eval else ())
            + (tuple(data.predict_splits) if flag_values.do_predict else ()))


def run(task, data, flag_values, files, strategy):
    """Fine-tunes, evaluates, predicts and exports, as the flags ask.

    Every split the run needs is read and checked before training, so that a
    missing file or a bad row in a dev or test set fails now, not after the
    training. Each split's records are written once, to output_dir on the
    chief (records_dir()); dev and test records are padded to full batches.
    Splits of one data.source() are predicted once, and their output files
    written once.

    Args:
      task: A tasks.Task.
      data: Its finetune_data.FinetuneData.
      flag_values: The parsed flags (see start()).
      files: start()'s ModelFiles.
      strategy: start()'s strategy.

    Raises:
      FinetuneError: for a training set that makes no step, or an export
        alone of a folder without a run.
    """
    export_only = check_actions(flag_values)
    data.read(splits_to_read(data, flag_values))
    num_train_steps, num_warmup_steps = 0, 0
    if flag_values.do_train:
        num_train_steps, num_warmup_steps = train_steps(
            data.num_train_examples(), flag_values.train_batch_size,
            flag_values.num_train_epochs, flag_values.warmup_proportion)
    trainer = create_trainer(task, files, strategy, training.TrainingConfig.from_flags(
        flag_values, max(num_train_steps, 1), num_warmup_steps, strategy),
        trained_required=export_only, settings=task_settings(task, data, files))
    if flag_values.do_train and trainer.is_chief:
        # Training on in a folder means training on the same data, cut alike.
        run_dir.check_settings(trainer.output_dir, "training data", data.training_settings(),
                               resuming=trainer.global_step > 0)
        data.write_run_files(trainer.output_dir)
    reader_args = padding_args(flag_values) if "dynamic_padding" in flag_values else {}

    def input_fn(folder, split, batch_size, is_training):
        """Writes one split's records; their input function for the trainer."""
        path = os.path.join(folder, f"{split}.tf_record")
        specs = task.feature_specs() if is_training else task.prediction_feature_specs()
        finetune_data.write_records(path, data.records(split, is_training), specs,
                                    None if is_training else batch_size)
        return dataset_fn(input_pipeline.finetuning_dataset, path, batch_size, is_training,
                          features=specs, **reader_args)

    predictions, written = {}, set()

    def predict_split(folder, split, batch_size):
        """predict() of a split, once per data.source()."""
        if data.source(split) not in predictions:
            logging.info("Predicting %s (%s).", data.describe(split), split)
            predictions[data.source(split)] = predict(
                trainer, input_fn(folder, split, batch_size, False))
        return predictions[data.source(split)]

    def write_split_outputs(split):
        """write_outputs() of a split, once per data.source()."""
        if data.source(split) not in written:
            written.add(data.source(split))
            write_outputs(trainer, predictions[data.source(split)], data.references(split))

    with records_dir(trainer) as folder:
        if flag_values.do_train:
            logging.info("Training on %s: %d steps, %d warmup.", data.describe(data.train_split),
                         num_train_steps, num_warmup_steps)
            micro_batch = flag_values.train_batch_size // flag_values.gradient_accumulation_steps
            trainer.train(input_fn(folder, data.train_split, micro_batch, True),
                          num_train_steps, flag_values.train_batch_size)
        if flag_values.do_eval:
            results = {}
            for split in data.eval_splits:
                split_predictions = predict_split(folder, split, flag_values.eval_batch_size)
                if data.eval_writes_outputs:
                    write_split_outputs(split)
                metrics = task.score(split_predictions, data.references(split))
                # Several dev sets (MNLI's matched and mismatched) share one file.
                prefix = f"{split}_" if len(data.eval_splits) > 1 else ""
                results.update({prefix + name: value for name, value in metrics.items()})
            write_eval_results(trainer, results)
        for split in data.predict_splits if flag_values.do_predict else ():
            predict_split(folder, split, flag_values.predict_batch_size)
            write_split_outputs(split)
    if flag_values.export_dir and trainer.is_chief:
        export_model(flag_values.export_dir, trainer, files, flag_values.max_seq_length,
                     shapes=flag_values.export_shapes)
