"""Tests for bert_tf.records.tfrecord, the numpy TFRecord and tf.train.Example writer.

Its records are read back with TensorFlow, which checks the framing and the
CRCs and parses the Examples independently of the code under test.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.records import tfrecord
from bert_tf.records.record_specs import FLOAT32, INT64, FeatureSpec


def write(path, columns):
    """Writes encode_tfrecords' records to a file; returns (data, lengths)."""
    data, lengths = tfrecord.encode_tfrecords(columns)
    path.write_bytes(data)
    return data, lengths


def parse_file(path, specs):
    """Reads a TFRecord file with tf.data and parses it with tf.io.parse_example."""
    records = list(tf.data.TFRecordDataset(str(path)))
    parsed = tf.io.parse_example(
        records, {s.name: tf.io.FixedLenFeature([s.length], tf.as_dtype(s.dtype))
                  for s in specs})
    return len(records), {name: t.numpy() for name, t in parsed.items()}


def payloads(data, lengths):
    """Splits framed records and strips their 12-byte header and 4-byte CRC."""
    framed = np.split(np.frombuffer(data, dtype=np.uint8), np.cumsum(lengths)[:-1])
    return [record[12:-4].tobytes() for record in framed]


def parse_file_after_write(tmp_path, specs, values):
    """Writes one column per spec, then reads the file back."""
    path = tmp_path / "records.tfrecord"
    write(path, list(zip(specs, values, strict=True)))
    return parse_file(path, specs)


def test_records_parse_back_with_the_same_values(tmp_path):
    specs = [FeatureSpec("ids", 6, INT64), FeatureSpec("weights", 3, FLOAT32),
             FeatureSpec("label", 1, INT64)]
    # Every varint size, from one byte to nine.
    ids = np.array([[0, 1, 127, 128, 16383, 16384], [65535, 65536, 2**21, 2**40, 5, 0],
                    [2**56 - 1, 2**56, 2**62, 2**63 - 1, 3, 2**49]])
    weights = np.array([[1.0, 0.5, 0.0], [0.0, -2.0, 3.25], [3.4e38, -1e-45, 1e-7]],
                       dtype=np.float32)
    labels = np.array([[0], [1], [1]])
    count, parsed = parse_file_after_write(tmp_path, specs, (ids, weights, labels))
    assert count == 3
    assert parsed["ids"].tolist() == ids.tolist()
    assert parsed["weights"].tolist() == weights.tolist()
    assert parsed["label"].tolist() == labels.tolist()


def test_values_of_other_dtypes_are_converted_to_the_features(tmp_path):
    specs = [FeatureSpec("mask", 4, INT64), FeatureSpec("weights", 4, FLOAT32),
             FeatureSpec("scores", 2, FLOAT32)]
    mask = np.array([[True, True, False, False]])
    weights = np.array([[True, False, True, False]])
    scores = np.array([[0.1, -2.5]], dtype=np.float64)
    _, parsed = parse_file_after_write(tmp_path, specs, (mask, weights, scores))
    assert parsed["mask"].tolist() == [[1, 1, 0, 0]]
    assert parsed["weights"].tolist() == [[1.0, 0.0, 1.0, 0.0]]
    assert parsed["scores"].tolist() == scores.astype(np.float32).tolist()


def test_empty_lists(tmp_path):
    specs = [FeatureSpec("none", 0, INT64), FeatureSpec("no_floats", 0, FLOAT32),
             FeatureSpec("one", 1, INT64)]
    values = (np.zeros((2, 0), dtype=np.int64), np.zeros((2, 0), dtype=np.float32),
              np.array([[7], [8]]))
    path = tmp_path / "records.tfrecord"
    data, lengths = write(path, list(zip(specs, values, strict=True)))
    for record in payloads(data, lengths):
        feature = tf.train.Example.FromString(record).features.feature
        assert set(feature) == {"none", "no_floats", "one"}
        assert list(feature["none"].int64_list.value) == []
        assert feature["none"].HasField("int64_list")
        assert list(feature["no_floats"].float_list.value) == []
        assert feature["no_floats"].HasField("float_list")
    count, parsed = parse_file(path, specs)
    assert count == 2
    assert parsed["none"].shape == (2, 0) and parsed["no_floats"].shape == (2, 0)
    assert parsed["one"].tolist() == [[7], [8]]


def test_long_lists(tmp_path):
    # Records of some hundreds of kilobytes: multi-byte lengths, long CRCs.
    rng = np.random.default_rng(0)
    specs = [FeatureSpec("ids", 20000, INT64), FeatureSpec("values", 30000, FLOAT32)]
    ids = rng.integers(0, 2**45, size=(3, 20000))
    values = rng.standard_normal((3, 30000)).astype(np.float32)
    count, parsed = parse_file_after_write(tmp_path, specs, (ids, values))
    assert count == 3
    assert np.array_equal(parsed["ids"], ids)
    assert np.array_equal(parsed["values"], values)


def test_many_records(tmp_path):
    rng = np.random.default_rng(1)
    rows = 5000
    specs = [FeatureSpec("input_ids", 32, INT64), FeatureSpec("weights", 5, FLOAT32),
             FeatureSpec("label", 1, INT64)]
    # Rows of different sizes: small ids take one varint byte, large ones three.
    ids = rng.integers(0, 30000, size=(rows, 32)) * (rng.random((rows, 1)) < 0.5)
    weights = rng.random((rows, 5)).astype(np.float32)
    labels = rng.integers(0, 2, size=(rows, 1))
    path = tmp_path / "records.tfrecord"
    data, lengths = write(path, list(zip(specs, (ids, weights, labels), strict=True)))
    assert len(lengths) == rows and int(lengths.sum()) == len(data)
    count, parsed = parse_file(path, specs)
    assert count == rows
    assert np.array_equal(parsed["input_ids"], ids)
    assert np.array_equal(parsed["weights"], weights)
    assert np.array_equal(parsed["label"], labels)


def test_framing_is_byte_for_byte_tensorflows(tmp_path):
    rng = np.random.default_rng(2)
    specs = [FeatureSpec("ids", 50, INT64)]
    # Varied payload sizes, from a few bytes to a few hundred.
    ids = rng.integers(0, 2**20, size=(40, 50)) >> rng.integers(0, 21, size=(40, 1))
    data, lengths = tfrecord.encode_tfrecords([(specs[0], ids)])
    path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in payloads(data, lengths):
            writer.write(record)
    with open(path, "rb") as f:
        assert f.read() == data


def test_tensorflow_detects_a_corrupted_record(tmp_path):
    spec = FeatureSpec("x", 2, INT64)
    data, _ = tfrecord.encode_tfrecords([(spec, np.array([[1, 2], [300, 4]]))])
    path = tmp_path / "x.tfrecord"
    path.write_bytes(data)
    assert len(list(tf.data.TFRecordDataset(str(path)))) == 2
    corrupted = bytearray(data)
    corrupted[20] ^= 1
    path.write_bytes(bytes(corrupted))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.data.TFRecordDataset(str(path)))


def crc32c_of(*messages):
    """tfrecord.crc32c of several messages at once, as a list of ints."""
    data = np.frombuffer(b"".join(messages), dtype=np.uint8)
    return tfrecord.crc32c(data, np.array([len(m) for m in messages])).tolist()


def reference_crc32c(message):
    """CRC-32C computed bit by bit, from the definition."""
    crc = 0xFFFFFFFF
    for byte in message:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_crc32c_of_known_test_vectors():
    # The check value of the CRC catalogue and the vectors of RFC 3720, B.4.
    vectors = {
        b"123456789": 0xE3069283,
        bytes(32): 0x8A9136AA,
        b"\xff" * 32: 0x62A8AB43,
        bytes(range(32)): 0x46DD794E,
        bytes(range(31, -1, -1)): 0x113FDB5C,
    }
    assert crc32c_of(*vectors) == list(vectors.values())
    for message, crc in vectors.items():
        assert crc32c_of(message) == [crc]


def test_crc32c_matches_the_definition_for_any_length():
    rng = np.random.default_rng(3)
    messages = [rng.bytes(int(n)) for n in rng.integers(1, 700, size=60)] + [b"\x00", b"a"]
    assert crc32c_of(*messages) == [reference_crc32c(m) for m in messages]


def test_masked_crc32c_is_tfrecords():
    data = np.frombuffer(b"123456789", dtype=np.uint8)
    masked = tfrecord.masked_crc32c(data, np.array([9]))
    crc = 0xE3069283  # CRC-32C of "123456789".
    # TFRecord's mask: rotate right by 15 bits, add 0xA282EAD8.
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked.tobytes() == expected.to_bytes(4, "little")
