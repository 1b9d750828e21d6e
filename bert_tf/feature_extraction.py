"""Hidden states of a pretrained BERT, per token, per word or pooled: extract_features.py.

Every step streams, so memory does not grow with the input file:
  read_examples()    input lines -> InputExample; "text", or "text_a ||| text_b"
  convert_example()  -> InputFeatures: word pieces and packed ids, as the
                     original; with word_level, each whitespace word's pieces
  LayerExtractor     a tf.function running BertModel on one padded batch and
                     returning the chosen layers, pooled or not
  example_output()   one example's rows: its tokens, its words, or one vector
  open_writer()      jsonl (the original's layout), npz or tfrecord, written
                     under a temporary name and renamed when complete
  extract()          all of the above, batch by batch, with a progress log

Input: one example a line, split on " ||| " as the original does (its regex
^(.*) \\|\\|\\| (.*)$). Before any work, count_examples() reads the file once
to check every line, so that an empty line, or one with nothing on a side of
"|||" (which the original embedded as text), fails the run at once with the
file and line named. With word_level, the words of a line are its
whitespace-separated words (a pair's first text's, then its second's), each
tokenized on its own; words that truncation cuts off entirely get no vector
(a warning counts the truncated examples).

Layers (--layers) are counted as the original counts them: -1 is the last
transformer layer and -N the first of N; 0 .. N-1 count from the first.
"emb" is the embedding output, the input to the first layer (Hugging Face's
hidden_states[0]).

Output formats:
  jsonl     One JSON object a line, the original's layout and rounding:
              {"linex_index": 0, "features": [{"token": "[CLS]", "layers":
               [{"index": -1, "values": [0.123456, ...]}, ...]}, ...]}
            one feature per real token, [CLS] and [SEP] included, padding
            excluded. With word_level, one feature per word and "token" holds
            the word. With pooling, one vector per layer:
              {"linex_index": 0, "pooling": "mean", "tokens": [...],
               "layers": [{"index": -1, "values": [...]}, ...]}
  npz       One zip that numpy.load reads, with arrays for each example i:
            "example_{i}_tokens" (the tokens, or words, as str) and
            "example_{i}_layer_{name}" for each --layers entry name ("-1",
            "0", "emb"): float32 [rows, hidden], or [hidden] when pooled. The
            zip is written entry by entry, never held in memory; only its
            directory, which a zip writes at its end, grows: about 0.4 KB
            per array, so 1 GB for a million lines of 2 layers. For inputs
            that large, tfrecord or jsonl keep memory flat.
  tfrecord  One tf.train.Example per example: "linex_index" (int64),
            "tokens" (bytes), "layers" (bytes: the --layers names),
            "shape" (int64: [rows, hidden], or [hidden] when pooled) and, for
            each layer name, "layer_{name}" (floats, row-major). Read it with
            tf.io.parse_single_example and VarLenFeature, then reshape.
"""

import contextlib
import dataclasses
import json
import os
import re
import time
import uuid
import zipfile

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import checkpoints, finetune, io_utils, tokenization
from bert_tf.modeling import BertModel

# The --layers name of the embedding output.
EMBEDDINGS = "emb"
OUTPUT_FORMATS = ("jsonl", "npz", "tfrecord")
POOLINGS = ("none", "cls", "mean")
WORD_POOLINGS = ("first", "mean")
# The original's separator of a pair's two texts on one input line.
_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")
# A line that is only the separator, or has nothing on one side of it.
_BARE_SEPARATOR = re.compile(r"^\|\|\|(\s.*)?$|^(.*\s)?\|\|\|$")


class ExtractionError(ValueError):
    """Input or settings that extraction cannot run with; the message names the flag or line."""


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """One requested layer.

    Attributes:
      name: As written in --layers, normalized ("-1", "0", "emb"); names npz
        arrays and tfrecord features.
      index: The jsonl "index": the integer given, or "emb".
      position: Its place in [embedding_output, layer_0, ..., layer_{N-1}].
    """

    name: str
    index: int | str
    position: int


def parse_layers(text, num_hidden_layers):
    """Parses --layers, e.g. "-1,-2,-3,-4" or "emb,0,-1".

    Args:
      text: Comma-separated layer indices, or EMBEDDINGS.
      num_hidden_layers: N, the model's transformer layers.

    Returns:
      A list of LayerSpec, in the order given.

    Raises:
      ExtractionError: naming --layers, for an entry that is not an index, an
        index out of range, or an entry given twice.
    """
    specs = []
    for entry in text.split(","):
        entry = entry.strip()
        if entry == EMBEDDINGS:
            specs.append(LayerSpec(EMBEDDINGS, EMBEDDINGS, 0))
            continue
        try:
            index = int(entry)
        except ValueError:
            raise ExtractionError(
                f"--layers={text}: {entry!r} is not a layer index (an integer, or "
                f"{EMBEDDINGS!r} for the embedding output)") from None
        if not -num_hidden_layers <= index < num_hidden_layers:
            raise ExtractionError(
                f"--layers={text}: layer {index} is out of range: the model has "
                f"{num_hidden_layers} layers, -1 (the last) to {-num_hidden_layers} (the "
                f"first), or 0 to {num_hidden_layers - 1}")
        # index % N maps -1 to N - 1; +1 skips the embedding output.
        specs.append(LayerSpec(str(index), index, index % num_hidden_layers + 1))
    names = [spec.name for spec in specs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ExtractionError(f"--layers={text}: {', '.join(repeated)} given twice")
    return specs


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One input line.

    Attributes:
      unique_id: The line's 0-based number: the jsonl "linex_index".
      text_a: The text, or a pair's first text.
      text_b: A pair's second text, else None.
    """

    unique_id: int
    text_a: str
    text_b: str | None


def parse_line(line, unique_id, where):
    """Reads one input line as the original does: "text" or "text_a ||| text_b".

    Args:
      line: The line, with or without its newline.
      unique_id: Its 0-based number.
      where: "file:line", for the error message.

    Returns:
      An InputExample.

    Raises:
      ExtractionError: naming `where`, for an empty line or an empty side
        of " ||| " (the original would have embedded "" or "|||").
    """
    line = line.strip()
    if not line:
        raise ExtractionError(
            f"{where}: empty line; each line holds a text, or two joined by ' ||| '")
    if _BARE_SEPARATOR.match(line):
        raise ExtractionError(f"{where}: nothing on one side of '|||' in {line!r}")
    match = _PAIR.match(line)
    if match is None:
        return InputExample(unique_id, line, None)
    return InputExample(unique_id, match.group(1), match.group(2))


def read_examples(input_file):
    """Reads the input file lazily, one example a line.

    Args:
      input_file: A local path or any tf.io.gfile filesystem's.

    Yields:
      InputExample, in file order.

    Raises:
      ExtractionError: naming the file (and line), for a file that cannot
        be read, a line that is not UTF-8, or a line parse_line refuses.
    """
    try:
        with tf.io.gfile.GFile(input_file, "rb") as reader:
            for number, raw in enumerate(reader):
                where = f"{input_file}:{number + 1}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ExtractionError(f"{where}: not UTF-8 text ({e.reason} at byte "
                                          f"{e.start})") from None
                yield parse_line(line, number, where)
    except tf.errors.OpError as e:
        message = f"--input_file={input_file}: cannot read it: {e.message}"
        raise ExtractionError(message) from None


@dataclasses.dataclass(frozen=True)
class InputFeatures:
    """One example, tokenized and packed to max_seq_length.

    Attributes:
      unique_id: The example's line number, from 0.
      tokens: The real tokens, [CLS] and [SEP] included.
      input_ids, input_mask, segment_ids: max_seq_length ints each.
      words: With word_level, the whitespace-separated words that kept at
        least one piece after truncation; else None.
      word_spans: (start, end) of each of `words`' pieces in `tokens`.
      truncated: Whether pieces were dropped to fit max_seq_length.
    """

    unique_id: int
    tokens: list
    input_ids: list
    input_mask: list
    segment_ids: list
    words: list | None
    word_spans: list
    truncated: bool


def _segment(text, tokenizer, word_level):
    """A text's word pieces, and with word_level its words and pieces per word.

    Word by word, each word is tokenized on its own so that its pieces are
    known. A word that yields no piece at all (only characters that
    tokenization deletes) becomes [UNK], so that every word gets a vector.
    """
    if not word_level:
        return tokenizer.tokenize(text), None, None
    words = text.split()
    pieces = [tokenizer.tokenize(word) or [tokenizer.wordpiece_tokenizer.unk_token]
              for word in words]
    return [p for word_pieces in pieces for p in word_pieces], words, [len(p) for p in pieces]


def _kept_words(words, counts, offset, kept):
    """The words whose first piece survived truncation, and their spans.

    Args:
      words: A segment's words.
      counts: Their numbers of pieces.
      offset: Where the segment's first piece sits in the packed tokens.
      kept: How many of the segment's pieces survived.

    Returns:
      (words, [(start, end)]), the spans in packed-token positions.
    """
    kept_words, spans = [], []
    start = 0
    for word, count in zip(words, counts, strict=True):
        if start >= kept:
            break
        kept_words.append(word)
        spans.append((offset + start, offset + min(start + count, kept)))
        start += count
    return kept_words, spans


def convert_example(example, tokenizer, max_seq_length, word_level=False):
    """Tokenizes and packs one example as the original does.

    "[CLS] a [SEP]" or "[CLS] a [SEP] b [SEP]", padded with zeros; a pair is
    truncated from its longer text to max_seq_length - 3, a single text to
    max_seq_length - 2. As in the original, a second text that yields no word
    piece makes a single-text example.

    Args:
      example: An InputExample.
      tokenizer: A tokenization.FullTokenizer.
      max_seq_length: The packed length.
      word_level: Tokenize word by word (whitespace-separated), to know each
        word's pieces. The pieces are those of tokenizing the whole text,
        except around characters that str.split() and BERT's tokenizer treat
        differently (e.g. U+001C, a separator to one, deleted by the other).

    Returns:
      An InputFeatures.
    """
    tokens_a, words_a, counts_a = _segment(example.text_a, tokenizer, word_level)
    tokens_b, words_b, counts_b = [], [], []
    if example.text_b is not None:
        tokens_b, words_b, counts_b = _segment(example.text_b, tokenizer, word_level)
    ids_b = tokenizer.convert_tokens_to_ids(tokens_b) if tokens_b else None
    packed = tokenization.pack_ids(
        tokenizer.convert_tokens_to_ids(tokens_a), ids_b, max_seq_length=max_seq_length,
        cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
    # pack_ids truncates; the segment ids tell how much of each text it kept.
    real_segments = [s for s, m in zip(packed["segment_ids"], packed["input_mask"],
                                       strict=True) if m]
    kept_a = real_segments.count(0) - 2
    kept_b = real_segments.count(1) - 1 if ids_b else 0
    tokens = ["[CLS]", *tokens_a[:kept_a], "[SEP]"]
    if ids_b:
        tokens += [*tokens_b[:kept_b], "[SEP]"]

    words, spans = None, []
    if word_level:
        words, spans = _kept_words(words_a, counts_a, 1, kept_a)
        if ids_b:
            more_words, more_spans = _kept_words(words_b, counts_b, kept_a + 2, kept_b)
            words, spans = words + more_words, spans + more_spans
    return InputFeatures(
        unique_id=example.unique_id, tokens=tokens, input_ids=packed["input_ids"],
        input_mask=packed["input_mask"], segment_ids=packed["segment_ids"], words=words,
        word_spans=spans, truncated=kept_a < len(tokens_a) or kept_b < len(tokens_b))


class LayerExtractor:
    """Runs BertModel on batches and returns the requested layers.

    Batches always have batch_size rows of max_seq_length (the last one is
    padded with empty rows), so the tf.function is traced once and a TPU
    gets the static shape it needs.
    """

    def __init__(self, model, layers, pooling="none", strategy=None):
        """Wraps a model.

        Args:
          model: A BertModel with its weights, built in `strategy`'s scope.
          layers: LayerSpecs.
          pooling: "none", "cls" (the [CLS] token's vector) or "mean" (over
            every real token, [CLS] and [SEP] included, as sentence-transformers
            pools).
          strategy: The tf.distribute.Strategy; default: the current one.
        """
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self._model = model
        self._positions = [spec.position for spec in layers]
        self._pooling = pooling
        self._strategy = strategy or tf.distribute.get_strategy()

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
        return self._strategy.run(self._forward, args=(inputs,))

    def __call__(self, batch):
        """Encodes one batch.

        Args:
          batch: {"input_ids", "input_mask", "segment_ids"}: int32 numpy
            [batch, seq], batch a multiple of the strategy's replicas.

        Returns:
          float32 numpy [batch, layers, seq, hidden], or [batch, layers,
          hidden] when pooled, in the batch's order.
        """
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


def _rounded(vector):
    """A vector as the original writes it: Python floats rounded to 6 decimals."""
    return [round(x, 6) for x in vector.tolist()]


class JsonlWriter:
    """Writes the original's JSON lines (or, pooled, one vector per layer)."""

    def __init__(self, file, layers, pooling):
        """Writes into an open file.

        Args:
          file: A text file open for writing.
          layers: LayerSpecs.
          pooling: As LayerExtractor's.
        """
        self._file = file
        self._layers = layers
        self._pooling = pooling

    def write(self, output):
        """Writes one example's line.

        Args:
          output: An ExampleOutput.
        """
        # Key order is the original's: json.dumps keeps insertion order.
        line = {"linex_index": output.unique_id}
        if self._pooling != "none":
            line["pooling"] = self._pooling
            line["tokens"] = output.labels
            line["layers"] = [{"index": spec.index, "values": _rounded(output.values[j])}
                              for j, spec in enumerate(self._layers)]
        else:
            line["features"] = [
                {"token": label,
                 "layers": [{"index": spec.index, "values": _rounded(output.values[j, i])}
                            for j, spec in enumerate(self._layers)]}
                for i, label in enumerate(output.labels)]
        self._file.write(json.dumps(line) + "\n")


class _WriteOnly:
    """A file seen as unseekable, so that zipfile streams into it.

    zipfile then writes each entry's sizes after its data instead of seeking
    back, which a GFile (gs:// included) being written cannot do. GFile.write
    returns None; zipfile needs the count of bytes written.
    """

    def __init__(self, file):
        self._file = file

    def write(self, data):
        self._file.write(bytes(data))
        return memoryview(data).nbytes

    def flush(self):
        self._file.flush()


class NpzWriter:
    """Writes each example's arrays into an open zip as numpy.savez would."""

    def __init__(self, archive, layers):
        """Writes into an open zip.

        Args:
          archive: A zipfile.ZipFile open for writing.
          layers: LayerSpecs.
        """
        self._archive = archive
        self._layers = layers

    def _add(self, name, array):
        # force_zip64: the size is unknown until written, and may pass 2 GiB.
        with self._archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
            np.lib.format.write_array(entry, array, allow_pickle=False)

    def write(self, output):
        """Adds one example's arrays.

        Args:
          output: An ExampleOutput.
        """
        prefix = f"example_{output.unique_id}"
        self._add(f"{prefix}_tokens", np.array(output.labels, dtype=str))
        for j, spec in enumerate(self._layers):
            self._add(f"{prefix}_layer_{spec.name}", output.values[j])


class TFRecordWriter:
    """Writes one tf.train.Example per example."""

    def __init__(self, writer, layers):
        """Writes through an open TFRecord writer.

        Args:
          writer: A tf.io.TFRecordWriter.
          layers: LayerSpecs.
        """
        self._writer = writer
        self._layers = layers

    def write(self, output):
        """Writes one example's record.

        Args:
          output: An ExampleOutput.
        """
        train = tf.train

        def ints(values):
            return train.Feature(int64_list=train.Int64List(value=values))

        def strings(values):
            return train.Feature(bytes_list=train.BytesList(
                value=[v.encode("utf-8") for v in values]))

        feature = {
            "linex_index": ints([output.unique_id]),
            "tokens": strings(output.labels),
            "layers": strings([spec.name for spec in self._layers]),
            "shape": ints(list(output.values.shape[1:])),
        }
        for j, spec in enumerate(self._layers):
            feature[f"layer_{spec.name}"] = train.Feature(
                float_list=train.FloatList(value=output.values[j].reshape(-1)))
        example = train.Example(features=train.Features(feature=feature))
        self._writer.write(example.SerializeToString())


@contextlib.contextmanager
def _atomic_path(path):
    """Yields a temporary path beside `path`, renamed to it at the end.

    io_utils.atomic_write yields a file object, but tf.io.TFRecordWriter
    opens its file by name. As there, a failure removes the temporary file
    and leaves `path` as it was.
    """
    directory, base = os.path.split(path)
    temporary = os.path.join(directory, f".{base}.{uuid.uuid4().hex}.tmp")
    try:
        yield temporary
        tf.io.gfile.rename(temporary, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.remove(temporary)
        raise


@contextlib.contextmanager
def open_writer(output_file, output_format, layers, pooling="none"):
    """Opens the output; it appears under its name only once complete.

    Args:
      output_file: The output path (any tf.io.gfile filesystem).
      output_format: One of OUTPUT_FORMATS (see the module docstring).
      layers: LayerSpecs.
      pooling: As LayerExtractor's.

    Yields:
      A writer with write(ExampleOutput).
    """
    if output_format == "jsonl":
        with io_utils.atomic_write(output_file, "w") as f:
            yield JsonlWriter(f, layers, pooling)
    elif output_format == "npz":
        with io_utils.atomic_write(output_file, "wb") as f, zipfile.ZipFile(
                _WriteOnly(f), "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            yield NpzWriter(archive, layers)
    elif output_format == "tfrecord":
        with _atomic_path(output_file) as temporary, tf.io.TFRecordWriter(temporary) as w:
            yield TFRecordWriter(w, layers)
    else:
        raise ValueError(f"output_format must be one of {OUTPUT_FORMATS}, "
                         f"got {output_format!r}")


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


def count_examples(input_file):
    """Reads the whole input once, checking every line, before any work.

    A bad line then fails the run in seconds, not after hours of encoding,
    and the progress log can tell how far along it is.

    Args:
      input_file: The input path.

    Returns:
      The number of examples.

    Raises:
      ExtractionError: as read_examples, or for a file without lines.
    """
    count = sum(1 for _ in read_examples(input_file))
    if count == 0:
        raise ExtractionError(f"--input_file={input_file} is empty: it holds no line")
    return count


def model_files(init_checkpoint, bert_config_file=None, vocab_file=None, do_lower_case=None,
                max_seq_length=None):
    """finetune.model_files(), for a checkpoint that must exist.

    The checkpoint is looked for first, so that a wrong --init_checkpoint is
    reported as such rather than as a missing vocab or config beside it.

    Args:
      init_checkpoint: The pretrained weights (any checkpoints.py format).
      bert_config_file: An explicit config, else the one beside the weights.
      vocab_file: An explicit vocab, else the one beside the weights.
      do_lower_case: The casing, or None for the folder's record (else True).
      max_seq_length: Checked against max_position_embeddings.

    Returns:
      A finetune.ModelFiles.

    Raises:
      ExtractionError: naming the flag.
    """
    try:
        checkpoints.resolve_checkpoint_path(init_checkpoint)
    except (ValueError, tf.errors.OpError) as e:
        raise ExtractionError(f"--init_checkpoint={init_checkpoint}: {e}") from None
    try:
        return finetune.model_files(init_checkpoint, bert_config_file, vocab_file,
                                    do_lower_case, max_seq_length)
    except finetune.FinetuneError as e:
        raise ExtractionError(str(e)) from None


def build_model(files, strategy=None):
    """A BertModel with the pretrained weights.

    Args:
      files: A finetune.ModelFiles with an init_checkpoint.
      strategy: Where to build it; default: the current strategy.

    Returns:
      The BertModel.

    Raises:
      ExtractionError: naming --init_checkpoint, if it cannot be loaded.
    """
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        model = BertModel(files.bert_config)
    try:
        checkpoints.load_weights(files.init_checkpoint, model)
    except (ValueError, OSError, tf.errors.OpError) as e:
        raise ExtractionError(f"--init_checkpoint={files.init_checkpoint}: {e}") from None
    return model


def extract(files, input_file, output_file, layers="-1,-2,-3,-4", max_seq_length=128,
            batch_size=32, output_format="jsonl", pooling="none", word_level=False,
            word_pooling="first", log_every_n_examples=1000, strategy=None):
    """Writes the hidden states of every input line: what extract_features.py does.

    Args:
      files: A finetune.ModelFiles: config, vocab, casing and checkpoint.
      input_file: One example a line: "text" or "text_a ||| text_b".
      output_file: Where to write; see the module docstring for the formats.
      layers: --layers: comma-separated indices, or EMBEDDINGS.
      max_seq_length: Pieces per example, [CLS] and [SEP] included.
      batch_size: Examples per model call (over all replicas).
      output_format: One of OUTPUT_FORMATS.
      pooling: One of POOLINGS: a vector per token, or one per example.
      word_level: One vector per whitespace-separated word instead of per
        token (a pair's words: the first text's, then the second's).
      word_pooling: With word_level, one of WORD_POOLINGS.
      log_every_n_examples: Log progress every this many examples.
      strategy: The tf.distribute.Strategy; default: the current one.

    Returns:
      {"examples": written, "truncated": examples that lost pieces to
      max_seq_length}.

    Raises:
      ExtractionError: naming the flag, file or line, for anything the
        input or settings get wrong.
    """
    strategy = strategy or tf.distribute.get_strategy()
    _check_options(output_format, pooling, word_level, word_pooling, batch_size,
                   max_seq_length, log_every_n_examples, strategy)
    specs = parse_layers(layers, files.bert_config.num_hidden_layers)
    total = count_examples(input_file)
    extractor = LayerExtractor(build_model(files, strategy), specs, pooling, strategy)
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
