"""Each training job's config: the shared parts (parts.py) plus the job's own settings.

  PretrainingConfig  run_pretraining.py: masked LM and next-sentence pretraining
  FinetuneConfig     run_classifier.py, run_squad.py, run_ner.py, run_swag.py

Both are turned into the Trainer's TrainingConfig (training_config()) the
same way: the steps a job trains for, its optimizer settings, and its cadence
filled in for the device.

  TrainingConfig     how the Trainer (training/training_loop.py) trains

A dataset's own settings (SQuAD's windows, the labels of one's own CSV)
belong to the dataset, not here.
"""

import dataclasses

from bert_tf.configs.parts import (
    ITERATIONS_PER_LOOP,
    SAVE_CHECKPOINTS_STEPS,
    BatchSizes,
    CadenceSettings,
    ModelSettings,
    OptimizerSettings,
    RunSettings,
    RuntimeSettings,
    VocabSettings,
)
from bert_tf.pretraining_data.config import PretrainingDataConfig
from bert_tf.records import input_pipeline
from bert_tf.serving import served_model
from bert_tf.settings import required_setting, setting


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """How a Trainer trains: one object instead of a dozen arguments.

    Attributes:
      output_dir: Checkpoints, summaries and results go here.
      num_train_steps: Optimizer updates in all; the schedule decays to 0 there.
      num_warmup_steps: Linear warmup length.
      optimizer: The optimizer and its learning rate (with the step counts,
        what the training's result depends on).
      cadence: How often the Trainer logs and saves, for this device
        (CadenceSettings.for_strategy: none of its settings left to choose).
      inference_precision: What predictions compute in, one of
        precision.INFERENCE_PRECISIONS; float32 whatever training used.

    Whether the steps are XLA-compiled is the Runtime's (jit_compile).
    """

    output_dir: str
    num_train_steps: int
    num_warmup_steps: int = 0
    optimizer: OptimizerSettings = OptimizerSettings()
    # The original's cadence, as on a TPU.
    cadence: CadenceSettings = CadenceSettings(
        iterations_per_loop=ITERATIONS_PER_LOOP, save_checkpoints_steps=SAVE_CHECKPOINTS_STEPS)
    inference_precision: str = "float32"


# --group_by_length sorts this many batches' worth of examples at a time:
# enough for batches of similar length, few enough to keep the order random.
LENGTH_GROUP_BATCHES = 50


@dataclasses.dataclass(frozen=True)
class PretrainingData:
    """The records a pretraining run reads, as create_pretraining_data.py wrote them.

    Attributes:
      input_file: TFRecords of create_pretraining_data.py (this one's or
        the original's): comma-separated patterns, globs allowed.
      eval_input_file: The records to evaluate on; None: input_file.
      max_predictions_per_seq: Masked positions per record, as written.
      max_eval_steps: Evaluate on at most this many batches.
    """

    input_file: str = required_setting(
        "TFRecord files from create_pretraining_data.py (this one's or the original's): "
        "comma-separated, globs allowed.")
    eval_input_file: str | None = setting(
        None, "Files to evaluate on; default: --input_file, as the original does.")
    max_predictions_per_seq: int = setting(
        PretrainingDataConfig.max_predictions_per_seq,
        "Masked LM predictions per sequence. Must match data generation.", lower_bound=1)
    max_eval_steps: int = setting(
        100, "Evaluate on at most this many batches of --eval_batch_size.", lower_bound=1)


@dataclasses.dataclass(frozen=True)
class DynamicMasking:
    """Masks drawn anew for each training batch, instead of the stored ones.

    Attributes:
      dynamic_masking: Draw new masks for each training batch from the
        unmasked tokens (RoBERTa's way); evaluation keeps the stored masks.
      vocab_file: With dynamic_masking: the data's vocab.txt.
      masked_lm_prob: With dynamic_masking: the share of tokens to mask.
    """

    dynamic_masking: bool = setting(
        False,
        "Draw new masks for each training batch in the input pipeline, from the unmasked "
        "tokens, instead of using the stored ones (as RoBERTa does); works on any "
        "--input_file. Evaluation keeps the stored masks, so that its results compare "
        "across runs. Needs --vocab_file.")
    vocab_file: str | None = setting(
        None,
        "With --dynamic_masking: the vocab.txt of the data, for the ids of [CLS], [SEP], "
        "[MASK] and of the word pieces that random replacements draw from.")
    masked_lm_prob: float = setting(
        PretrainingDataConfig.masked_lm_prob,
        "With --dynamic_masking: the share of the tokens to mask.")


@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """Everything a pretraining run is asked to do (run_pretraining.py's flags).

    Attributes:
      run: The output folder and the actions (do_train, do_eval).
      data: The records to train and evaluate on.
      model: The model's config, initial weights and sequence length.
      masking: Dynamic masking, if any.
      batches: The training and evaluation batches.
      num_train_steps: Optimizer updates in all; a resumed run stops there
        too, and the learning rate decays to 0 there.
      num_warmup_steps: Steps of linear learning-rate warmup.
      optimizer: The optimizer and its learning rate.
      cadence: How often the run logs and saves.
      runtime: Precision, XLA, seed and TPU.
    """

    run: RunSettings
    data: PretrainingData
    model: ModelSettings = ModelSettings()
    masking: DynamicMasking = DynamicMasking()
    batches: BatchSizes = BatchSizes()
    num_train_steps: int = setting(
        100000,
        "Optimizer updates to train for in all; a resumed run stops there too. The "
        "learning rate decays linearly to 0 at this step.", lower_bound=1)
    num_warmup_steps: int = setting(
        10000, "Steps over which the learning rate rises linearly to --learning_rate.",
        lower_bound=0)
    optimizer: OptimizerSettings = OptimizerSettings()
    cadence: CadenceSettings = CadenceSettings()
    runtime: RuntimeSettings = RuntimeSettings()

    def training_config(self, strategy):
        """The Trainer's TrainingConfig for this run.

        Args:
          strategy: The run's strategy, for the cadence.

        Returns:
          A TrainingConfig.
        """
        return TrainingConfig(
            output_dir=self.run.output_dir, num_train_steps=self.num_train_steps,
            num_warmup_steps=self.num_warmup_steps, optimizer=self.optimizer,
            cadence=self.cadence.for_strategy(strategy),
            inference_precision=self.runtime.inference_precision)


@dataclasses.dataclass(frozen=True)
class ExportSettings:
    """The raw-text SavedModel a fine-tuning run writes, if any.

    Attributes:
      export_dir: Write a raw-text SavedModel here, after training.
      export_shapes: One of served_model.SHAPES.
    """

    export_dir: str | None = setting(
        None,
        "Write a raw-text SavedModel here, after training; alone (without --do_train, "
        "--do_eval or --do_predict), of the run already in --output_dir.")
    export_shapes: str = setting(
        "dynamic",
        "dynamic: the SavedModel pads each batch only to its longest input (in steps of "
        f"{input_pipeline.LENGTH_MULTIPLE}), for CPU and GPU serving; static: every input "
        "padded to --max_seq_length, one fixed shape, for TPU serving. Either runs without "
        "XLA unless --jit_compile=true (XLA compiles once per batch shape: it pays only in a "
        "long-running server that meets few shapes).", choices=served_model.SHAPES)


@dataclasses.dataclass(frozen=True)
class PaddingSettings:
    """How much padding a fine-tuning batch carries (the scripts whose reader trims it).

    Attributes:
      dynamic_padding: Cut each batch's padding to its longest example; dev
        and test sets are predicted shortest first.
      group_by_length: With dynamic_padding, batch examples of similar length.
    """

    dynamic_padding: bool = setting(
        False,
        "Cut each batch's padding down to its longest example, rounded up to a multiple of "
        f"{input_pipeline.LENGTH_MULTIPLE}: the same results, faster on CPU and GPU when most "
        "examples are much shorter than max_seq_length; dev and test sets are predicted "
        "shortest first, their outputs kept in input order. Not on TPU, which needs one "
        "static shape.")
    group_by_length: bool = setting(
        False,
        "With --dynamic_padding: fill each training batch with examples of similar length, "
        f"drawn from a shuffled group of {LENGTH_GROUP_BATCHES} batches sorted by "
        "length. Much less padding, hence faster; but batches are no longer uniformly random, "
        "so results can differ a little from the original's recipe.")


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Everything a fine-tuning run is asked to do, whatever the task.

    The fine-tuning scripts' flags are its settings, and a script's own (its
    dataset's); the notebook and Python callers build it directly.

    Attributes:
      run: The output folder and the actions (do_train, do_eval).
      model: The pretrained model and the sequence length.
      vocab: Its vocab and casing.
      batches: The training and evaluation batches.
      do_predict: Predict on the test set and write the output files.
      predict_batch_size: The prediction batch, over all replicas.
      num_train_epochs: Epochs of training, possibly fractional.
      warmup_proportion: The share of updates with a rising learning rate.
      optimizer: The optimizer and its learning rate.
      cadence: How often the run logs and saves.
      runtime: Precision, XLA, seed and TPU.
      eval_every_steps: With do_train, evaluate on the (first) dev set every
        this many steps and at the end, and keep the model that scores best
        on the data's main metric in output_dir/best (best_checkpoint.py);
        evaluation, prediction and export then use it. 0: off.
      early_stopping_patience: With eval_every_steps, stop training after
        this many evaluations without a gain. 0: off.
      export: The raw-text SavedModel to write, if any.
      padding: Dynamic padding and length grouping.
    """

    run: RunSettings
    model: ModelSettings = ModelSettings()
    vocab: VocabSettings = VocabSettings()
    batches: BatchSizes = BatchSizes()
    do_predict: bool = setting(False, "Predict on the test set and write the output files.")
    predict_batch_size: int = setting(8, "Total batch size for predict.", lower_bound=1)
    num_train_epochs: float = setting(
        3.0, "Training epochs.", check=lambda value: value > 0,
        check_message="--num_train_epochs must be positive")
    warmup_proportion: float = setting(
        0.1, "Share of training with a linear learning-rate warmup.", lower_bound=0.0,
        upper_bound=1.0)
    optimizer: OptimizerSettings = OptimizerSettings()
    cadence: CadenceSettings = CadenceSettings()
    runtime: RuntimeSettings = RuntimeSettings()
    eval_every_steps: int = setting(
        0,
        "With --do_train: evaluate on the dev set (MNLI: the matched one) every this many "
        "steps and at the end of training (0: never), log each score, write it to "
        "eval_history.tsv and TensorBoard's eval summaries, and keep the model that scores "
        "best on the task's main metric in --output_dir/best (GLUE: mcc for CoLA, f1 for "
        "MRPC and QQP, pearson for STS-B, else eval_accuracy; SQuAD: f1; NER: eval_f1; "
        "SWAG: eval_accuracy). --do_eval, --do_predict and --export_dir then use the best "
        "model, in this run and in later ones on the same --output_dir.", lower_bound=0)
    early_stopping_patience: int = setting(
        0,
        "With --eval_every_steps: stop training after this many evaluations in a row "
        "without a gain in the main metric (0: never). The best model is kept, and the "
        "same command run again stays stopped.", lower_bound=0)
    export: ExportSettings = ExportSettings()
    padding: PaddingSettings = PaddingSettings()

    def training_config(self, num_train_steps, num_warmup_steps, strategy):
        """The Trainer's TrainingConfig for this run.

        Args:
          num_train_steps: From the epochs (finetune.train_steps()).
          num_warmup_steps: Likewise.
          strategy: The run's strategy, for the cadence.

        Returns:
          A TrainingConfig.
        """
        return TrainingConfig(
            output_dir=self.run.output_dir, num_train_steps=num_train_steps,
            num_warmup_steps=num_warmup_steps, optimizer=self.optimizer,
            cadence=self.cadence.for_strategy(strategy),
            inference_precision=self.runtime.inference_precision)
