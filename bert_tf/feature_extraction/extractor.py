"""The model's layers for every input line: LayerExtractor and extract().

  LayerExtractor     a tf.function running BertModel on one padded batch and
                     returning the chosen layers, pooled or not
  example_output()   one example's rows: its tokens, its words, or one vector
  model_files(), build_model()  the checkpoint, config and vocab; the model
  extract()          examples.py, the above and writers.py, batch by batch,
                     with a progress log: what extract_features.py runs
"""

import dataclasses
import os
import time

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import checkpoints, model_names
from bert_tf.checkpoints.model_files import ModelFilesError
from bert_tf.checkpoints.model_files import find as find_model_files
from bert_tf.feature_extraction.examples import (
    ExtractionError,
    convert_example,
    count_examples,
    parse_layers,
    read_examples,
)
from bert_tf.feature_extraction.writers import OUTPUT_FORMATS, open_writer
from bert_tf.model.modeling import BertModel
from bert_tf.runtime import precision, run_setup, tpu_rules

POOLINGS = ("none", "cls", "mean")
WORD_POOLINGS = ("first", "mean")


class LayerExtractor:
    """Runs BertModel on batches and returns the requested layers.

    Batches always have batch_size rows of max_seq_length (the last one is
    padded with empty rows), so the tf.function is traced once and a TPU
    gets the static shape it needs.
    """

    def __init__(self, model, layers, pooling="none", runtime=None):
        """Wraps a model.

        Args:
          model: A BertModel with its weights, built in the runtime
            strategy's scope (build_model()).
          layers: LayerSpecs.
          pooling: "none", "cls" (the [CLS] token's vector) or "mean" (over
            every real token, [CLS] and [SEP] included, as sentence-transformers
            pools).
          runtime: The run_setup.Runtime (run_setup.prepare()'s): the
            strategy, and whether each replica's forward pass is
            XLA-compiled; default: the current strategy's, in float32.
            Under the TPU's rules (tpu_rules.py) it is always compiled, and
            each batch's shapes and types are checked.
        """
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self._model = model
        self._positions = [spec.position for spec in layers]
        self._pooling = pooling
        runtime = runtime or default_runtime()
        self._strategy = runtime.strategy
        self._tpu_rules = tpu_rules.enforced(self._strategy)
        jit_compile = runtime.jit_compile
        self._replica_forward = tf.function(self._forward, jit_compile=jit_compile)
        logging.info("XLA for the forward pass: %s%s", "on" if jit_compile else "off",
                     " (the TPU's rules)" if self._tpu_rules else "")

    def _forward(self, inputs):
        """One replica's share: [rows, layers, seq, hidden], or [rows, layers, hidden]."""
        outputs = self._model(inputs, training=False)
        # [embedding_output, layer_0, ..., layer_{N-1}], each [rows, seq, hidden].
        hidden_states = [outputs["embedding_output"], *outputs["encoder_outputs"]]
        # [rows, layers, seq, hidden]
        selected = tf.cast(tf.stack([hidden_states[p] for p in self._positions], axis=1),
                           tf.float32)
        if self._pooling == "cls":
            return selected[:, :, 0, :]
        if self._pooling == "mean":
            # [rows, 1, seq, 1]
            mask = tf.cast(inputs["input_mask"], tf.float32)[:, tf.newaxis, :, tf.newaxis]
            # Padding rows have no real token; max(.., 1) keeps them free of NaNs.
            return tf.reduce_sum(selected * mask, axis=2) / tf.maximum(
                tf.reduce_sum(mask, axis=2), 1.0)
        return selected

    @tf.function
    def _step(self, inputs):
        """_forward on every replica's share of a distributed batch."""
        # The compiled function is called from a plain one: handed to run()
        # itself, MirroredStrategy over CPU devices calls every replica's copy
        # from the first device, where XLA cannot reach the other replicas'
        # variables.
        return self._strategy.run(lambda replica_inputs: self._replica_forward(replica_inputs),
                                  args=(inputs,))

    def __call__(self, batch):
        """Encodes one batch.

        Args:
          batch: {"input_ids", "input_mask", "segment_ids"}: int32 numpy
            [batch, seq], batch a multiple of the strategy's replicas.

        Returns:
          float32 numpy [batch, layers, seq, hidden], or [batch, layers,
          hidden] when pooled, in the batch's order.
        """
        if self._tpu_rules:
            tpu_rules.check_input({key: tf.TensorSpec(value.shape, tf.as_dtype(value.dtype))
                                   for key, value in batch.items()}, "extraction")
        per_replica = len(batch["input_ids"]) // self._strategy.num_replicas_in_sync

        def replica_inputs(context):
            start = context.replica_id_in_sync_group * per_replica
            return {key: tf.constant(value[start:start + per_replica])
                    for key, value in batch.items()}

        inputs = self._strategy.experimental_distribute_values_from_function(replica_inputs)
        outputs = self._strategy.experimental_local_results(self._step(inputs))
        return np.concatenate([output.numpy() for output in outputs])


@dataclasses.dataclass(frozen=True)
class ExampleOutput:
    """What is written for one example.

    Attributes:
      unique_id: Its line number, from 0.
      labels: Its tokens, or its words with word_level.
      values: float32 [layers, rows, hidden], a row per label; or [layers,
        hidden] when pooled.
    """

    unique_id: int
    labels: list
    values: np.ndarray


def example_output(features, values, pooling="none", word_pooling=None):
    """Cuts one example's vectors out of its batch row.

    Args:
      features: The example's InputFeatures.
      values: Its LayerExtractor row: [layers, seq, hidden], or [layers,
        hidden] when pooled.
      pooling: As LayerExtractor's.
      word_pooling: None for a row per token; "first" (the word's first
        piece) or "mean" (of its pieces) for a row per word; needs features
        made with word_level.

    Returns:
      An ExampleOutput.
    """
    if pooling != "none":
        return ExampleOutput(features.unique_id, features.tokens, values)
    if word_pooling is None:
        # [layers, tokens, hidden]: padding dropped.
        return ExampleOutput(features.unique_id, features.tokens,
                             values[:, :len(features.tokens)])
    if word_pooling == "first":
        rows = [values[:, start] for start, _ in features.word_spans]
    elif word_pooling == "mean":
        rows = [values[:, start:end].mean(axis=1) for start, end in features.word_spans]
    else:
        raise ValueError(f"word_pooling must be one of {WORD_POOLINGS}, got {word_pooling!r}")
    hidden = values.shape[-1]
    # [layers, words, hidden]
    stacked = (np.stack(rows, axis=1) if rows
               else np.zeros((len(values), 0, hidden), np.float32))
    return ExampleOutput(features.unique_id, features.words, stacked)


def _batches(features, batch_size):
    """Groups features into lists of batch_size (the last may be shorter)."""
    batch = []
    for feature in features:
        batch.append(feature)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _padded_arrays(batch, batch_size):
    """A batch's int32 [batch_size, seq] inputs; missing rows are all zeros (no token)."""
    seq_length = len(batch[0].input_ids)
    arrays = {}
    for key in ("input_ids", "input_mask", "segment_ids"):
        array = np.zeros((batch_size, seq_length), np.int32)
        array[:len(batch)] = [getattr(feature, key) for feature in batch]
        arrays[key] = array
    return arrays


def model_files(init_checkpoint, bert_config_file=None, vocab_file=None, do_lower_case=None,
                max_seq_length=None):
    """model_files.find(), for a checkpoint that must exist, with ExtractionError.

    The checkpoint is looked for first, so that a wrong --init_checkpoint is
    reported as such rather than as a missing vocab or config beside it.

    Args:
      init_checkpoint: The pretrained weights (any checkpoints.py format), or
        a model's name (model_names.local_path).
      bert_config_file: An explicit config, else the one beside the weights.
      vocab_file: An explicit vocab, else the one beside the weights.
      do_lower_case: The casing, or None for the folder's record (else True).
      max_seq_length: Checked against max_position_embeddings.

    Returns:
      A model_files.ModelFiles.

    Raises:
      ExtractionError: naming the flag.
    """
    try:
        local_checkpoint = model_names.local_path(init_checkpoint)
        checkpoints.resolve_checkpoint_path(local_checkpoint)
    except (ValueError, tf.errors.OpError) as e:
        raise ExtractionError(f"--init_checkpoint={init_checkpoint}: {e}") from None
    try:
        return find_model_files(local_checkpoint, bert_config_file, vocab_file, do_lower_case,
                                max_seq_length)
    except ModelFilesError as e:
        raise ExtractionError(str(e)) from None


def default_runtime():
    """The Runtime of a caller that gives none: the current strategy's, in float32.

    Returns:
      A run_setup.Runtime.
    """
    return run_setup.Runtime.resolve(tf.distribute.get_strategy())


def build_model(files, runtime=None):
    """A BertModel with the pretrained weights.

    Args:
      files: A model_files.ModelFiles with an init_checkpoint.
      runtime: The run_setup.Runtime: where to build it, and under which
        precision policy; default: default_runtime().

    Returns:
      The BertModel.

    Raises:
      ExtractionError: naming --init_checkpoint, if it cannot be loaded.
    """
    runtime = runtime or default_runtime()
    with runtime.strategy.scope(), precision.building_under(runtime.policy):
        model = BertModel(files.bert_config)
    try:
        checkpoints.load_weights(files.init_checkpoint, model)
    except (ValueError, OSError, tf.errors.OpError) as e:
        raise ExtractionError(f"--init_checkpoint={files.init_checkpoint}: {e}") from None
    return model


def extract(files, input_file, output_file, layers="-1,-2,-3,-4", max_seq_length=128,
            batch_size=32, output_format="jsonl", pooling="none", word_level=False,
            word_pooling="first", log_every_n_examples=1000, runtime=None):
    """Writes the hidden states of every input line: what extract_features.py does.

    Args:
      files: A model_files.ModelFiles: config, vocab, casing and checkpoint.
      input_file: One example a line: "text" or "text_a ||| text_b".
      output_file: Where to write; see writers.py for the formats.
      layers: --layers: comma-separated indices, or EMBEDDINGS.
      max_seq_length: Pieces per example, [CLS] and [SEP] included.
      batch_size: Examples per model call (over all replicas).
      output_format: One of OUTPUT_FORMATS.
      pooling: One of POOLINGS: a vector per token, or one per example.
      word_level: One vector per whitespace-separated word instead of per
        token (a pair's words: the first text's, then the second's).
      word_pooling: With word_level, one of WORD_POOLINGS.
      log_every_n_examples: Log progress every this many examples.
      runtime: The run_setup.Runtime (run_setup.prepare()'s): the strategy,
        the precision and XLA for the forward pass; default:
        default_runtime().

    Returns:
      {"examples": written, "truncated": examples that lost pieces to
      max_seq_length}.

    Raises:
      ExtractionError: naming the flag, file or line, for anything the
        input or settings get wrong.
    """
    runtime = runtime or default_runtime()
    _check_options(output_format, pooling, word_level, word_pooling, batch_size,
                   max_seq_length, log_every_n_examples, runtime.strategy)
    specs = parse_layers(layers, files.bert_config.num_hidden_layers)
    total = count_examples(input_file)
    extractor = LayerExtractor(build_model(files, runtime), specs, pooling, runtime)
    tokenizer = files.tokenizer()

    features = (convert_example(example, tokenizer, max_seq_length, word_level)
                for example in read_examples(input_file))
    written = truncated = 0
    start = time.monotonic()
    tf.io.gfile.makedirs(os.path.dirname(output_file) or ".")
    with open_writer(output_file, output_format, specs, pooling) as writer:
        for batch in _batches(features, batch_size):
            values = extractor(_padded_arrays(batch, batch_size))
            # zip stops at the batch's last example: the rows after it are padding.
            for feature, row in zip(batch, values, strict=False):
                writer.write(example_output(feature, row, pooling,
                                            word_pooling if word_level else None))
                truncated += feature.truncated
                written += 1
                if written % log_every_n_examples == 0:
                    logging.info("Extracted %d of %d examples (%.1f a second).", written,
                                  total, written / (time.monotonic() - start))
    if truncated:
        logging.warning(
            "%d of %d examples were longer than --max_seq_length=%d word pieces and were "
            "truncated%s.", truncated, written, max_seq_length,
            "; the words cut off have no vector" if word_level else "")
    logging.info("Wrote %d examples to %s (%s).", written, output_file, output_format)
    return {"examples": written, "truncated": truncated}


def _check_options(output_format, pooling, word_level, word_pooling, batch_size,
                   max_seq_length, log_every_n_examples, strategy):
    """Refuses settings that cannot work, naming the flags."""
    for flag, value, allowed in (("output_format", output_format, OUTPUT_FORMATS),
                                 ("pooling", pooling, POOLINGS),
                                 ("word_pooling", word_pooling, WORD_POOLINGS)):
        if value not in allowed:
            raise ExtractionError(f"--{flag}={value}: must be one of {', '.join(allowed)}")
    if word_level and pooling != "none":
        raise ExtractionError(f"--word_level gives a vector per word; --pooling={pooling} "
                              "gives one per example: choose one")
    if max_seq_length < 3:
        raise ExtractionError(f"--max_seq_length={max_seq_length}: must hold at least "
                              "[CLS], [SEP] and one more token")
    if log_every_n_examples < 1:
        raise ExtractionError(f"--log_every_n_examples={log_every_n_examples}: must be "
                              "positive")
    replicas = strategy.num_replicas_in_sync
    if batch_size < 1 or batch_size % replicas:
        raise ExtractionError(f"--batch_size={batch_size}: must be a positive multiple of "
                              f"the {replicas} replicas")
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        raise ExtractionError("extraction runs in one process: unset TF_CONFIG")
