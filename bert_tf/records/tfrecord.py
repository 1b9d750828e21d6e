"""A TFRecord writer for tf.train.Example records, in numpy, without TensorFlow.

It serializes whole columns of records at once: given each feature's values
as an [N, length] array, it encodes N tf.train.Example protos (the protobuf
varints and length-delimited fields written out by hand) and frames them as
TFRecords (lengths, CRC-32C checksums), with a few numpy operations per
column rather than a Python loop per record or per byte.

It exists for two reasons. The data builder (`bert_tf.pretraining_data`)
must not import TensorFlow: in each worker process that takes longer and
more memory than generating a whole window of records. And encoding columns
of records at once is much faster than building and serializing one
tf.train.Example per record, even with TensorFlow at hand.

The bytes are those TensorFlow writes: `tf.data.TFRecordDataset` checks the
checksums and `tf.io.parse_example` reads the records back.
"""

import dataclasses
import functools

import numpy as np

from bert_tf.records import record_specs


@dataclasses.dataclass
class _Bytes:
    """One variable-length byte string per row, for a batch of N rows.

    The strings are kept as a list of column blocks, each a uint8 [N, w]
    matrix with a bool [N, w] mask of its valid bytes; row n's string is the
    valid bytes of its row in every block, in order. Joining strings is then
    joining lists, and numpy serializes a whole batch of records at once.

    Attributes:
      blocks: a list of (values, valid) pairs; valid is None where all bytes
        are valid.
      lengths: int64 [N], valid bytes per row.
    """

    blocks: list
    lengths: np.ndarray

    @classmethod
    def dense(cls, values):
        """Wraps a uint8 [N, w] matrix whose bytes are all valid."""
        return cls([(values, None)], np.full(len(values), values.shape[1], dtype=np.int64))

    @classmethod
    def constant(cls, data, rows):
        """Repeats the byte string `data` on `rows` rows."""
        values = np.frombuffer(data, dtype=np.uint8)
        return cls.dense(np.broadcast_to(values, (rows, len(values))))

    @classmethod
    def concat(cls, *parts):
        """Joins byte strings row by row."""
        return cls([block for part in parts for block in part.blocks],
                   sum(part.lengths for part in parts))

    def flatten(self):
        """Returns every row's string, concatenated, as a uint8 array."""
        values = np.concatenate([v for v, _ in self.blocks], axis=1)
        valid = np.concatenate(
            [np.broadcast_to(True, v.shape) if m is None else m for v, m in self.blocks], axis=1)
        return values[valid]


@functools.cache
def _small_varints():
    """The varints of 0 to 2**16 - 1, packed for lookup.

    Returns:
      uint32 [2**16], little-endian: each value's varint in the first three
      bytes (zero-padded), its size in bytes in the fourth.
    """
    encoded, _, size = _compute_varints(np.arange(1 << 16, dtype=np.int64), 3)
    packed = np.zeros((1 << 16, 4), dtype=np.uint8)
    packed[:, :3], packed[:, 3] = encoded, size
    return packed.view("<u4")[:, 0]


def _compute_varints(values, width):
    """Encodes non-negative integers as protobuf varints, with arithmetic.

    Args:
      values: int64 array of any shape, each below 2**(7 * width).
      width: bytes to reserve per value.

    Returns:
      (encoded, valid, size): uint8 values.shape + [width], each value's
      varint left-aligned; bool of the same shape, its bytes; int64
      values.shape, their count.
    """
    shift = 7 * np.arange(width, dtype=np.int64)
    size = np.ones(values.shape, dtype=np.int64)
    for s in shift[1:]:
        size += values >= (1 << s)
    byte = np.arange(width)
    valid = byte < size[..., None]
    continues = (byte + 1 < size[..., None]).astype(np.int64) << 7
    encoded = ((values[..., None] >> shift) & 0x7F | continues).astype(np.uint8)
    return encoded, valid, size


def _varints(values):
    """Encodes non-negative integers as protobuf varints.

    Args:
      values: int [N, K], each below 2**63.

    Returns:
      A _Bytes whose row n is the concatenated varints of values[n].
    """
    values = np.asarray(values, dtype=np.int64)
    rows, count = values.shape
    largest = int(values.max(initial=0))
    if largest < 1 << 7:
        return _Bytes.dense(values.astype(np.uint8))
    if largest < 1 << 16:
        # Token ids and lengths: one lookup beats computing them. The fourth
        # byte, the size, is never valid, as sizes are at most 3.
        packed = _small_varints()[values].view(np.uint8).reshape(rows, count, 4)
        encoded, size = packed, packed[..., 3].astype(np.int64)
        valid = np.arange(4) < size[..., None]
    else:
        encoded, valid, size = _compute_varints(values, (largest.bit_length() + 6) // 7)
    width = encoded.shape[-1]
    return _Bytes([(encoded.reshape(rows, count * width), valid.reshape(rows, count * width))],
                  size.sum(axis=1))


def _field(number, payload):
    """Encodes a length-delimited protobuf field around each row's payload.

    Args:
      number: the field number, at most 15 so that the tag is one byte.
      payload: a _Bytes.

    Returns:
      A _Bytes: tag, varint length, payload.
    """
    tag = _Bytes.constant(bytes([number << 3 | 2]), len(payload.lengths))
    return _Bytes.concat(tag, _varints(payload.lengths[:, None]), payload)


def _feature(spec, values):
    """Encodes one tf.train.Feature per row.

    Args:
      spec: the record_specs.FeatureSpec.
      values: [N, spec.size] numbers.

    Returns:
      A _Bytes of serialized Feature messages.
    """
    if spec.dtype == record_specs.INT64:
        # Feature.int64_list is field 3; Int64List.value is field 1, packed.
        return _field(3, _field(1, _varints(values)))
    floats = np.ascontiguousarray(values, dtype="<f4").view(np.uint8)
    # Feature.float_list is field 2; FloatList.value is field 1, packed.
    return _field(2, _field(1, _Bytes.dense(floats)))


def _encode_examples(columns):
    """Serializes one tf.train.Example per row.

    Args:
      columns: a list of (FeatureSpec, [N, length] values) in writing order.

    Returns:
      A _Bytes of serialized Example messages.
    """
    rows = len(columns[0][1])
    entries = []
    for spec, values in columns:
        # A map<string, Feature> entry: key is field 1, value field 2.
        name = _field(1, _Bytes.constant(spec.name.encode(), rows))
        entry = _Bytes.concat(name, _field(2, _feature(spec, values)))
        entries.append(_field(1, entry))  # Features.feature is field 1.
    return _field(1, _Bytes.concat(*entries))  # Example.features is field 1.


@functools.cache
def _crc32c_table():
    """The byte table of CRC-32C (Castagnoli, reflected), as uint32 [256]."""
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78), table >> 1)
    return table.astype(np.uint32)


def _crc32c_shift(register):
    """Advances CRC-32C registers over one zero byte, a linear map."""
    return _crc32c_table()[register & 0xFF] ^ (register >> 8)


@functools.cache
def _crc32c_terms(length):
    """Tables that compute the CRC-32C of messages of up to `length` bytes.

    The CRC register is linear in the message, so a message's CRC is the
    XOR of one term per byte, which depends on the byte and on its distance
    from the end (contributions[distance, byte]), and of a term for the
    initial register, which depends on the length (initial[length]).
    Looking the terms up and XOR-ing them computes a whole batch of CRCs
    without a Python loop over the bytes.

    Args:
      length: the longest message to support.

    Returns:
      (contributions, initial): uint32 [length, 256] and [length + 1].
    """
    contributions = np.empty((length, 256), dtype=np.uint32)
    initial = np.empty(length + 1, dtype=np.uint32)
    contributions[0], initial[0] = _crc32c_table(), 0xFFFFFFFF
    for distance in range(1, length):
        contributions[distance] = _crc32c_shift(contributions[distance - 1])
    for size in range(1, length + 1):
        initial[size] = _crc32c_shift(initial[size - 1:size])[0]
    return contributions, initial


def crc32c(data, lengths):
    """Computes the CRC-32C (Castagnoli) of consecutive messages.

    Args:
      data: uint8 [sum(lengths)], the messages back to back.
      lengths: int64 [N], each message's size, all positive.

    Returns:
      uint32 [N]: the checksums.
    """
    # Rounding the size up to a power of two lets a few tables serve all.
    contributions, initial = _crc32c_terms(1 << (int(lengths.max()) - 1).bit_length())
    ends = np.cumsum(lengths)
    # Index of each byte's term in the flattened table: its distance from its
    # message's end, times 256, plus the byte. int32, where it is wide
    # enough, halves the memory traffic.
    dtype = np.int32 if len(data) < 1 << 23 else np.int64
    index = np.repeat(((ends - 1) << 8).astype(dtype), lengths)
    index -= np.arange(0, len(data) << 8, 256, dtype=dtype)
    index += data
    crc = np.bitwise_xor.reduceat(contributions.reshape(-1).take(index), ends - lengths)
    crc ^= initial[lengths] ^ np.uint32(0xFFFFFFFF)
    return crc


def masked_crc32c(data, lengths):
    """Computes TFRecord's masked CRC-32C of consecutive messages.

    TFRecord stores each CRC rotated right by 15 bits plus a constant, since
    the CRC of data that itself holds CRCs is prone to collisions.

    Args:
      data: uint8 [sum(lengths)], the messages back to back.
      lengths: int64 [N], each message's size, all positive.

    Returns:
      uint8 [N, 4]: the little-endian masked checksums, as a file holds them.
    """
    crc = crc32c(data, lengths)
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(0xA282EAD8)
    return masked.astype("<u4").view(np.uint8).reshape(-1, 4)


def _frame_tfrecords(records):
    """Frames serialized records in the TFRecord format.

    Each record becomes: its length (uint64), the length's masked CRC, the
    data, the data's masked CRC; all little-endian.

    Args:
      records: a _Bytes of serialized records.

    Returns:
      (data, lengths): the framed records back to back, as bytes, and each
      one's size.
    """
    data, lengths = records.flatten(), records.lengths
    header = lengths.astype("<u8").view(np.uint8).reshape(-1, 8)
    framed_lengths = lengths + 16
    starts = np.cumsum(framed_lengths) - framed_lengths
    framed = np.empty(int(framed_lengths.sum()), dtype=np.uint8)
    framed[starts[:, None] + np.arange(8)] = header
    framed[starts[:, None] + np.arange(8, 12)] = masked_crc32c(header.reshape(-1),
                                                               np.full(len(lengths), 8))
    # Record r's data moves past its own 12 header bytes and the 16 framing
    # bytes of each record before it.
    framed[np.arange(len(data)) + np.repeat(16 * np.arange(len(lengths)) + 12, lengths)] = data
    framed[(starts + 12 + lengths)[:, None] + np.arange(4)] = masked_crc32c(data, lengths)
    return framed.tobytes(), framed_lengths


def encode_tfrecords(columns):
    """Serializes one tf.train.Example per row and frames each as a TFRecord.

    Args:
      columns: a list of (record_specs.FeatureSpec, values), in the order in
        which the features are to be written; values is an [N, spec.size]
        array (a feature with a leading shape flattened row after row),
        N >= 1 the same for all: integers in [0, 2**63) for an INT64
        feature, numbers for a FLOAT32 one (stored as float32).

    Returns:
      (data, lengths): the N framed records back to back, as bytes to append
      to a TFRecord file, and each one's size in bytes (int64 [N]).
    """
    return _frame_tfrecords(_encode_examples(columns))


# Records encoded at a time by write_examples, which bounds the encoder's
# temporary arrays whatever the number of records. For CoNLL-2003's tagging
# records at seq 128 they peak at 20 MB with 512 records at a time, 106 MB
# with 4,096, a peak that run_ner.py paid on top of its training steps when it
# wrote its dev records; 512 at a time also writes faster (1.05 against 1.46 s
# for the 14,042 training records).
RECORDS_PER_WRITE = 512


def write_examples(file, records, specs):
    """Encodes feature dicts as tf.train.Examples and writes them to an open file.

    protocol.write_records, the fine-tuning writer, writes every
    family's records (dicts) through this, into a file that
    io_utils.atomic_write opened.

    Args:
      file: A binary file object.
      records: Dicts from feature name to a value or values: for a
        one-value feature a scalar or a list of one, for a feature with a
        leading shape nested lists or an array of that shape, or flat.
      specs: The record_specs.FeatureSpec of each feature, in writing order.
    """
    for start in range(0, len(records), RECORDS_PER_WRITE):
        chunk = records[start:start + RECORDS_PER_WRITE]
        data, _ = encode_tfrecords([(spec, _column(chunk, spec)) for spec in specs])
        file.write(data)


def _column(records, spec):
    """One feature's values of records, as an [N, spec.size] array."""
    values = [record[spec.name] for record in records]
    if spec.size == 1:
        # A one-value feature may come as a scalar (0 in a padding record) or
        # as a list of one ([label]) within the same file.
        values = [value if type(value) in (int, float) else np.ravel(value)[0]
                  for value in values]
    return np.array(values).reshape(len(records), spec.size)

