"""ExampleOutput -> the output file, streamed, appearing only once complete.

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

Each writer's write() takes one example's ExampleOutput (extractor.py);
open_writer() writes under a temporary name and renames the file when it is
complete (bert_tf.io_utils).
"""

import contextlib
import json
import zipfile

import numpy as np
import tensorflow as tf

from bert_tf import io_utils

OUTPUT_FORMATS = ("jsonl", "npz", "tfrecord")


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
        with io_utils.atomic_path(output_file) as temporary, tf.io.TFRecordWriter(temporary) as w:
            yield TFRecordWriter(w, layers)
    else:
        raise ValueError(f"output_format must be one of {OUTPUT_FORMATS}, "
                         f"got {output_format!r}")
