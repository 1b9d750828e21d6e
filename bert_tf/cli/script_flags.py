"""The flags that the training and fine-tuning scripts share, and the configs they make.

Each flag is defined here once, with the original repository's name and
default where it had one (the default written in the config the flag
sets), and read here once: a script defines the groups
it needs, and turns the parsed values into the library's typed configs
(finetune.FinetuneConfig, pretrain.PretrainingConfig,
run_setup.TrainingConfig, distribution.TpuConfig)
with the functions below. Nothing else in bert_tf reads a flag, so the
notebook and Python callers build the same configs directly.

A flag the user did not give becomes None in a config where the library
chooses by device (the loop and checkpoint cadence) or by checkpoint
(--do_lower_case: the Hugging Face folder's record).
"""

from absl import flags

from bert_tf import finetune, pretrain
from bert_tf.cli import vocab_flags
from bert_tf.records import input_pipeline
from bert_tf.serving import served_model
from bert_tf.training import cpu, distribution, optimization, precision, run_setup, tpu_rules, xla

# The configs whose defaults the flags take: each default is written once.
TRAINING = run_setup.TrainingConfig
FINETUNE = finetune.FinetuneConfig
PRETRAINING = pretrain.PretrainingConfig


def define_model_flags(flag_values=flags.FLAGS):
    """Defines the model's flags: --bert_config_file, --init_checkpoint, --max_seq_length.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    flags.DEFINE_string(
        "bert_config_file", None,
        "bert_config.json of the model (the original's or a Hugging Face config.json). "
        "Optional when init_checkpoint is a Hugging Face folder or has one beside it.", **fv)
    flags.DEFINE_string(
        "init_checkpoint", None,
        "Initial weights: an original Google bert_model.ckpt, a Hugging Face folder "
        "(config.json + model.safetensors), or a bert_tf checkpoint.", **fv)
    # Bounds are checked when the flags are parsed, before any work: a
    # --max_seq_length=2 would turn every example into [CLS][SEP].
    flags.DEFINE_integer(
        "max_seq_length", FINETUNE.max_seq_length,
        "Tokens per sequence after WordPiece, [CLS]/[SEP] included. "
        "Longer inputs are truncated, shorter ones padded.", lower_bound=4, **fv)


def define_vocab_flags(flag_values=flags.FLAGS):
    """Defines how text becomes word pieces: --vocab_file and --do_lower_case.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    vocab_flags.define_vocab_file_flag(
        "vocab.txt the model was trained with; default: the vocab.txt beside "
        "--init_checkpoint (Google's and Hugging Face folders have one).", flag_values)
    vocab_flags.define_do_lower_case_flag(
        "Lower-case the input: True for uncased models, False for cased ones. Default: a "
        "Hugging Face --init_checkpoint folder's tokenizer_config.json setting, else True.",
        flag_values)
    # Shown in --help with this module's flags, which the scripts adopt.
    flags.adopt_module_key_flags(vocab_flags, flag_values=flag_values)


def define_training_flags(flag_values=flags.FLAGS):
    """Defines the flags that run_pretraining.py and the fine-tuning scripts share.

    The original's flags keep their names and defaults; the others are new
    and default to the original's behaviour, except where that is a known
    flaw: Adam's bias correction is on, and the learning rate decays from the
    end of warmup (--noadam_bias_correction and --nodecay_after_warmup give
    the original's). The model's flags (define_model_flags) are among them.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    define_model_flags(flag_values)
    flags.DEFINE_string(
        "output_dir", None, "Where checkpoints, summaries and results are written. A run "
        "resumes from the newest checkpoint here by itself.", **fv)
    flags.DEFINE_bool("do_train", False, "Whether to run training.", **fv)
    flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.", **fv)
    flags.DEFINE_integer("train_batch_size", FINETUNE.train_batch_size,
                         "Total (global) batch size for training.",
                         lower_bound=1, **fv)
    flags.DEFINE_integer("eval_batch_size", FINETUNE.eval_batch_size, "Total batch size for eval.",
                         lower_bound=1, **fv)
    flags.DEFINE_float("learning_rate", TRAINING.learning_rate,
                       "The peak learning rate (of AdamW or LAMB), after warmup.", **fv)
    flags.register_validator("learning_rate", lambda value: value >= 0,
                             "--learning_rate must not be negative", flag_values=flag_values)
    flags.DEFINE_integer("save_checkpoints_steps", run_setup.SAVE_CHECKPOINTS_STEPS,
                         "Save a checkpoint every this many steps, and at the end.",
                         lower_bound=1, **fv)
    flags.DEFINE_integer("iterations_per_loop", run_setup.ITERATIONS_PER_LOOP,
                         "The most steps per tf.function call (one host round trip); a "
                         "progress line is logged once per loop.", lower_bound=1, **fv)
    flags.DEFINE_float(
        "log_every_secs", run_setup.LOG_EVERY_SECS,
        "On a CPU or GPU, unless --iterations_per_loop is given: size each loop from the "
        "measured step time to take about this long, so that a progress line (step, loss, "
        "lr, examples/s, time left) comes this often. On a TPU only when given.",
        lower_bound=0.0, **fv)
    flags.DEFINE_float(
        "save_checkpoints_secs", run_setup.SAVE_CHECKPOINTS_SECS,
        "On a CPU or GPU, unless --save_checkpoints_steps is given: also save a "
        "checkpoint once this long has passed since the last one, so that a killed run "
        "loses at most this much. On a TPU only when given.", lower_bound=0.0, **fv)
    flags.DEFINE_enum(
        "optimizer", TRAINING.optimizer, list(optimization.OPTIMIZERS),
        "adamw: the original's Adam with decoupled weight decay; lamb: for large batches.", **fv)
    flags.DEFINE_bool(
        "adam_bias_correction", TRAINING.adam_bias_correction,
        "Apply Adam's bias correction, which the original omitted; "
        "--noadam_bias_correction gives the original's update.", **fv)
    flags.DEFINE_bool(
        "decay_after_warmup", TRAINING.decay_after_warmup,
        "Decay the learning rate linearly from its peak at the end of warmup to 0 "
        "(Hugging Face's schedule). --nodecay_after_warmup gives the original's, whose decay "
        "runs from step 0, so that the rate drops to 1 - warmup_proportion of the peak "
        "after warmup and stays that much lower.",
        **fv)
    flags.DEFINE_integer(
        "gradient_accumulation_steps", TRAINING.gradient_accumulation_steps,
        "Micro-batches per update: train_batch_size is split into this many pieces, so "
        "that a large batch fits in memory.", lower_bound=1, **fv)
    flags.DEFINE_enum(
        "mixed_precision", FINETUNE.mixed_precision, list(precision.PRECISIONS),
        "Training's precision. auto: bfloat16 on TPU, float16 with loss scaling on GPU; on a "
        "CPU, bfloat16 where it multiplies bfloat16 faster than float32 (amx_bf16 in "
        "/proc/cpuinfo, or avx512_bf16 on AMD; not avx512_bf16 alone on Intel, where float32 "
        f"is faster; {cpu.CPU_BFLOAT16_ENV}=1 or 0 overrides the detection), else "
        "float32.", **fv)
    define_inference_precision_flag(flag_values)
    flags.DEFINE_integer("keep_checkpoint_max", TRAINING.keep_checkpoint_max,
                         "How many checkpoints to keep.",
                         lower_bound=1, **fv)
    define_jit_compile_flag(flag_values)
    flags.DEFINE_integer(
        "seed", None, "Seed for the initial head weights, dropout and shuffling, for "
        "repeatable runs; by default every run differs.", **fv)
    flags.DEFINE_bool(
        "allow_random_weights", FINETUNE.allow_random_weights,
        "Evaluate, predict or export even with random weights: without it, --do_eval, "
        "--do_predict and --export_dir need a checkpoint in --output_dir, --do_train, or an "
        "--init_checkpoint that holds the task's head.", **fv)


def define_inference_precision_flag(flag_values=flags.FLAGS):
    """Defines --inference_precision: what a run's outputs compute in.

    Args:
      flag_values: The absl FlagValues to define it in.
    """
    flags.DEFINE_enum(
        "inference_precision", TRAINING.inference_precision, list(precision.INFERENCE_PRECISIONS),
        "What outputs compute in (--do_eval and --do_predict, --export_dir SavedModels, "
        "extract_features.py's features), from the same weights: float32 on every device by "
        "default; bfloat16 or float16 (faster where the device multiplies them natively, "
        "outputs different from float32's in the second or third digit); as_trained: "
        "training's precision.", flag_values=flag_values)


def define_jit_compile_flag(flag_values=flags.FLAGS):
    """Defines --jit_compile, for the scripts that train or predict.

    Args:
      flag_values: The absl FlagValues to define it in.
    """
    flags.DEFINE_enum(
        "jit_compile", "auto", list(xla.JIT_COMPILE_CHOICES),
        "Compile the train, eval and predict steps with XLA. auto: yes, except in bfloat16 "
        "on a CPU, where XLA's CPU backend leaves the bfloat16 matrix units unused, and in "
        "float32 on an Intel CPU with avx512_bf16 and no amx_bf16, where TensorFlow's own "
        "kernels are faster; "
        "--export_dir SavedModels are XLA-compiled only with true. With "
        "--dynamic_padding on a CPU, false is faster (XLA compiles once per batch length). "
        f"On a TPU every step is compiled anyway; {tpu_rules.ENV}=1 applies the TPU's rules "
        "on any device (every step compiled, static input shapes checked).",
        case_sensitive=False, flag_values=flag_values)


def define_finetune_flags(flag_values=flags.FLAGS):
    """Defines the flags every fine-tuning script has besides the training ones.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    define_vocab_flags(flag_values)
    flags.DEFINE_bool("do_predict", FINETUNE.do_predict,
                      "Predict on the test set and write the output "
                      "files.", **fv)
    flags.DEFINE_integer("predict_batch_size", FINETUNE.predict_batch_size,
                         "Total batch size for predict.",
                         lower_bound=1, **fv)
    flags.DEFINE_float("num_train_epochs", FINETUNE.num_train_epochs, "Training epochs.", **fv)
    flags.register_validator("num_train_epochs", lambda value: value > 0,
                             "--num_train_epochs must be positive", flag_values=flag_values)
    flags.DEFINE_float(
        "warmup_proportion", FINETUNE.warmup_proportion,
        "Share of training with a linear learning-rate warmup.",
        lower_bound=0.0, upper_bound=1.0, **fv)
    flags.DEFINE_string(
        "export_dir", None, "Write a raw-text SavedModel here, after training; alone (without "
        "--do_train, --do_eval or --do_predict), of the run already in --output_dir.", **fv)
    flags.DEFINE_enum(
        "export_shapes", FINETUNE.export_shapes, served_model.SHAPES,
        "dynamic: the SavedModel pads each batch only to its longest input (in steps of "
        f"{input_pipeline.LENGTH_MULTIPLE}), for CPU and GPU serving; static: every input "
        "padded to --max_seq_length, one fixed shape, for TPU serving. Either runs without "
        "XLA unless --jit_compile=true (XLA compiles once per batch shape: it pays only in a "
        "long-running server that meets few shapes).",
        **fv)
    flags.DEFINE_integer(
        "eval_every_steps", FINETUNE.eval_every_steps,
        "With --do_train: evaluate on the dev set (MNLI: the matched one) every this many "
        "steps and at the end of training (0: never), log each score, write it to "
        "eval_history.tsv and TensorBoard's eval summaries, and keep the model that scores "
        "best on the task's main metric in --output_dir/best (GLUE: mcc for CoLA, f1 for "
        "MRPC and QQP, pearson for STS-B, else eval_accuracy; SQuAD: f1; NER: eval_f1; "
        "SWAG: eval_accuracy). --do_eval, --do_predict and --export_dir then use the best "
        "model, in this run and in later ones on the same --output_dir.", lower_bound=0, **fv)
    flags.DEFINE_integer(
        "early_stopping_patience", FINETUNE.early_stopping_patience,
        "With --eval_every_steps: stop training after this many evaluations in a row "
        "without a gain in the main metric (0: never). The best model is kept, and the "
        "same command run again stays stopped.", lower_bound=0, **fv)


def define_finetuning_script_flags(padding=True, flag_values=flags.FLAGS):
    """Defines every shared flag of a fine-tuning script (run_classifier.py, ...).

    The training, fine-tuning and TPU flags, and the padding flags where
    the script's reader trims batches. The script then calls
    flags.adopt_module_key_flags(script_flags) to show them in its --help.

    Args:
      padding: Whether to define --dynamic_padding and --group_by_length.
      flag_values: The absl FlagValues to define them in.
    """
    define_training_flags(flag_values)
    define_finetune_flags(flag_values)
    define_tpu_flags(flag_values)
    if padding:
        define_padding_flags(flag_values)


def define_padding_flags(flag_values=flags.FLAGS):
    """Defines --dynamic_padding and --group_by_length, for scripts whose reader has them.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    flags.DEFINE_bool(
        "dynamic_padding", False,
        "Cut each batch's padding down to its longest example, rounded up to a multiple of "
        f"{input_pipeline.LENGTH_MULTIPLE}: the same results, faster on CPU and GPU when most "
        "examples are much shorter than max_seq_length; dev and test sets are predicted "
        "shortest first, their outputs kept in input order. Not on TPU, which needs one "
        "static shape.",
        flag_values=flag_values)
    flags.DEFINE_bool(
        "group_by_length", False,
        "With --dynamic_padding: fill each training batch with examples of similar length, "
        f"drawn from a shuffled group of {finetune.LENGTH_GROUP_BATCHES} batches sorted by "
        "length. Much less padding, hence faster; but batches are no longer uniformly random, "
        "so results can differ a little from the original's recipe.", flag_values=flag_values)


def define_pretraining_script_flags(flag_values=flags.FLAGS):
    """Defines every flag of run_pretraining.py: its own, the training and the TPU ones.

    The script then calls flags.adopt_module_key_flags(script_flags) to show
    them in its --help.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    flags.DEFINE_string(
        "input_file", None,
        "TFRecord files from create_pretraining_data.py (this one's or the original's): "
        "comma-separated, globs allowed.", **fv)
    flags.DEFINE_string(
        "eval_input_file", None,
        "Files to evaluate on; default: --input_file, as the original does.", **fv)
    flags.DEFINE_integer(
        "max_predictions_per_seq", PRETRAINING.max_predictions_per_seq,
        "Masked LM predictions per sequence. Must match data generation.", lower_bound=1,
        **fv)
    flags.DEFINE_integer(
        "num_train_steps", PRETRAINING.num_train_steps,
        "Optimizer updates to train for in all; a resumed run stops there too. The "
        "learning rate decays linearly to 0 at this step.", lower_bound=1, **fv)
    flags.DEFINE_integer(
        "num_warmup_steps", PRETRAINING.num_warmup_steps,
        "Steps over which the learning rate rises linearly to --learning_rate.",
        lower_bound=0, **fv)
    flags.DEFINE_integer(
        "max_eval_steps", PRETRAINING.max_eval_steps,
        "Evaluate on at most this many batches of --eval_batch_size.", lower_bound=1, **fv)
    flags.DEFINE_bool(
        "dynamic_masking", PRETRAINING.dynamic_masking,
        "Draw new masks for each training batch in the input pipeline, from the unmasked "
        "tokens, instead of using the stored ones (as RoBERTa does); works on any "
        "--input_file. Evaluation keeps the stored masks, so that its results compare "
        "across runs. Needs --vocab_file.", **fv)
    vocab_flags.define_vocab_file_flag(
        "With --dynamic_masking: the vocab.txt of the data, for the ids of [CLS], [SEP], "
        "[MASK] and of the word pieces that random replacements draw from.", flag_values)
    flags.DEFINE_float(
        "masked_lm_prob", PRETRAINING.masked_lm_prob,
        "With --dynamic_masking: the share of the tokens to mask.", **fv)
    define_training_flags(flag_values)
    define_tpu_flags(flag_values)
    # Shown in --help with this module's flags, which the script adopts.
    flags.adopt_module_key_flags(vocab_flags, flag_values=flag_values)
    # Checked when the flags are parsed, before any work; pretrain.run checks
    # a Python caller's config with the same functions.
    flags.register_multi_flags_validator(
        ["max_predictions_per_seq", "max_seq_length"],
        _validator(lambda f: pretrain.check_lengths(f["max_seq_length"],
                                                    f["max_predictions_per_seq"])),
        flag_values=flag_values)
    flags.register_multi_flags_validator(
        ["dynamic_masking", "vocab_file", "masked_lm_prob"],
        _validator(lambda f: pretrain.check_masking(f["dynamic_masking"], f["vocab_file"],
                                                    f["masked_lm_prob"])),
        flag_values=flag_values)


def _validator(check):
    """An absl flags validator of a pretrain check that raises PretrainingError."""
    def validate(values):
        try:
            check(values)
        except pretrain.PretrainingError as e:
            raise flags.ValidationError(str(e)) from e
        return True
    return validate


def define_tpu_flags(flag_values=flags.FLAGS):
    """Defines the original's TPU flags, plus --tpu. Call once per script.

    Args:
      flag_values: The absl FlagValues to define them in.
    """
    fv = {"flag_values": flag_values}
    flags.DEFINE_string(
        "tpu", None,
        "TPU to use: a name or grpc:// address, or 'local' on a TPU VM. Empty: "
        "detect one (Colab, TPU VM), else use the GPUs, else the CPU.", **fv)
    flags.DEFINE_bool(
        "use_tpu", False,
        "Original flag. Require a TPU; with --tpu_name or --master naming it. A TPU "
        "that is found is used even without this flag.", **fv)
    flags.DEFINE_string("tpu_name", None, "Original flag: the Cloud TPU name or address.", **fv)
    flags.DEFINE_string("tpu_zone", None, "Original flag: GCE zone of the Cloud TPU.", **fv)
    flags.DEFINE_string("gcp_project", None, "Original flag: GCP project of the Cloud TPU.", **fv)
    flags.DEFINE_string("master", None, "Original flag: TPU master address (grpc://...).", **fv)
    flags.DEFINE_integer(
        "num_tpu_cores", distribution.TpuConfig.num_tpu_cores,
        "Original flag: TPU cores to use. TPUStrategy uses every core of the TPU (1 on "
        "Colab's v5e-1, 8 on a v2-8 or v3-8); the replica count it uses is logged.", **fv)


def given(flag_values, name):
    """A flag's value when the user gave it on the command line, else None.

    Args:
      flag_values: The parsed flags.
      name: The flag's name.

    Returns:
      The value, or None.
    """
    return flag_values[name].value if flag_values[name].present else None


def tpu_config(flag_values):
    """The TpuConfig of define_tpu_flags()'s flags.

    Args:
      flag_values: The parsed flags.

    Returns:
      A distribution.TpuConfig.
    """
    return distribution.TpuConfig(
        tpu=flag_values.tpu, use_tpu=flag_values.use_tpu, tpu_name=flag_values.tpu_name,
        tpu_zone=flag_values.tpu_zone, gcp_project=flag_values.gcp_project,
        master=flag_values.master, num_tpu_cores=flag_values.num_tpu_cores)


def jit_compile(flag_values):
    """--jit_compile as the configs take it: True, False or None (auto)."""
    return xla.parse_jit_compile(flag_values.jit_compile)


def training_settings(flag_values):
    """The run_setup.USER_SETTINGS that define_training_flags()'s flags give.

    Args:
      flag_values: The parsed flags.

    Returns:
      {setting: value}; the cadence settings are None where not given.
    """
    cadence = ("iterations_per_loop", "save_checkpoints_steps", "log_every_secs",
               "save_checkpoints_secs")
    settings = {name: given(flag_values, name) if name in cadence else flag_values[name].value
                for name in run_setup.USER_SETTINGS}
    settings["jit_compile"] = jit_compile(flag_values)
    return settings


def pretraining_config(flag_values):
    """The PretrainingConfig of run_pretraining.py's flags.

    The script defines its own flags (named as PretrainingConfig's fields),
    define_training_flags() and define_tpu_flags().

    Args:
      flag_values: The parsed flags.

    Returns:
      A pretrain.PretrainingConfig.
    """
    return pretrain.PretrainingConfig(
        input_file=flag_values.input_file,
        output_dir=flag_values.output_dir,
        eval_input_file=flag_values.eval_input_file,
        bert_config_file=flag_values.bert_config_file,
        init_checkpoint=flag_values.init_checkpoint,
        max_seq_length=flag_values.max_seq_length,
        max_predictions_per_seq=flag_values.max_predictions_per_seq,
        do_train=flag_values.do_train,
        do_eval=flag_values.do_eval,
        train_batch_size=flag_values.train_batch_size,
        eval_batch_size=flag_values.eval_batch_size,
        num_train_steps=flag_values.num_train_steps,
        num_warmup_steps=flag_values.num_warmup_steps,
        max_eval_steps=flag_values.max_eval_steps,
        dynamic_masking=flag_values.dynamic_masking,
        vocab_file=flag_values.vocab_file,
        masked_lm_prob=flag_values.masked_lm_prob,
        mixed_precision=flag_values.mixed_precision,
        seed=flag_values.seed,
        tpu=tpu_config(flag_values),
        allow_random_weights=flag_values.allow_random_weights,
        **training_settings(flag_values))


def finetune_config(flag_values):
    """The FinetuneConfig of a fine-tuning script's flags.

    The script defines define_training_flags(), define_finetune_flags(),
    define_tpu_flags() and, where its reader has them, define_padding_flags().

    Args:
      flag_values: The parsed flags.

    Returns:
      A finetune.FinetuneConfig.
    """
    padding = "dynamic_padding" in flag_values
    return finetune.FinetuneConfig(
        output_dir=flag_values.output_dir,
        init_checkpoint=flag_values.init_checkpoint,
        bert_config_file=flag_values.bert_config_file,
        vocab_file=flag_values.vocab_file,
        do_lower_case=given(flag_values, "do_lower_case"),
        max_seq_length=flag_values.max_seq_length,
        do_train=flag_values.do_train,
        do_eval=flag_values.do_eval,
        do_predict=flag_values.do_predict,
        train_batch_size=flag_values.train_batch_size,
        eval_batch_size=flag_values.eval_batch_size,
        predict_batch_size=flag_values.predict_batch_size,
        num_train_epochs=flag_values.num_train_epochs,
        warmup_proportion=flag_values.warmup_proportion,
        mixed_precision=flag_values.mixed_precision,
        seed=flag_values.seed,
        export_dir=flag_values.export_dir,
        allow_random_weights=flag_values.allow_random_weights,
        export_shapes=flag_values.export_shapes,
        dynamic_padding=padding and flag_values.dynamic_padding,
        group_by_length=padding and flag_values.group_by_length,
        eval_every_steps=flag_values.eval_every_steps,
        early_stopping_patience=flag_values.early_stopping_patience,
        tpu=tpu_config(flag_values),
        **training_settings(flag_values))
