"""Tests for bert_tf/feature_extraction/: input lines, packing, layers, outputs, parity.

Most tests run extract() in this process on a tiny random 2-layer BERT saved
as an original Google checkpoint; the parity test runs it on the real
all-MiniLM-L6-v2 weights against tests/fixtures/hidden_states_minilm.npz
(tools/make_hidden_states_fixture.py: every hidden state of transformers'
BertModel).
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import feature_extraction
from bert_tf.checkpoints import checkpoints
from bert_tf.feature_extraction import ExtractionError, InputExample, extractor
from bert_tf.runtime import run_setup
from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import HIDDEN, hidden_states, tiny_google_checkpoint

FIXTURE = os.path.join(helpers.FIXTURES, "hidden_states_minilm.npz")
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(ModelFiles, BertModel) of a tiny random BERT saved as a Google checkpoint."""
    prefix, model = tiny_google_checkpoint(str(tmp_path_factory.mktemp("tiny")))
    return feature_extraction.model_files(prefix), model


def write_lines(path, *lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def run(files, tmp_path, lines, output_format="jsonl", **kwargs):
    """extract() on the given input lines; returns the output path."""
    kwargs.setdefault("layers", "-1,-2")
    kwargs.setdefault("max_seq_length", 16)
    kwargs.setdefault("batch_size", 2)
    input_file = write_lines(tmp_path / "input.txt", *lines)
    output_file = str(tmp_path / f"output.{output_format}")
    feature_extraction.extract(files, input_file, output_file, output_format=output_format,
                               **kwargs)
    return output_file


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def layer_values(line, index):
    """[tokens, hidden] of one layer of a jsonl line."""
    return np.array([[layer["values"] for layer in feature["layers"]
                      if layer["index"] == index][0] for feature in line["features"]])


def no_temporary_files(folder):
    return not [name for name in os.listdir(folder) if name.endswith(".tmp")]


# --layers


def test_layers_count_as_the_original():
    specs = feature_extraction.parse_layers("-1,-2,-3,-4", 4)
    assert [(s.name, s.index, s.position) for s in specs] == [
        ("-1", -1, 4), ("-2", -2, 3), ("-3", -3, 2), ("-4", -4, 1)]
    # Positive indices count from the first layer; "emb" is the embedding output.
    specs = feature_extraction.parse_layers("0, 3,emb", 4)
    assert [(s.name, s.index, s.position) for s in specs] == [
        ("0", 0, 1), ("3", 3, 4), ("emb", "emb", 0)]


@pytest.mark.parametrize("layers, message", [
    ("-5", "layer -5 is out of range: the model has 4 layers"),
    ("4", "layer 4 is out of range"),
    ("-1,last", "'last' is not a layer index"),
    ("", "'' is not a layer index"),
    ("-1,-1", "-1 given twice"),
])
def test_bad_layers_name_the_flag(layers, message):
    with pytest.raises(ExtractionError, match=f"^--layers={layers}: {message}"):
        feature_extraction.parse_layers(layers, 4)


# Input lines


def test_lines_split_on_the_originals_separator():
    parse = feature_extraction.parse_line
    assert parse("  One text. \n", 0, "f:1") == InputExample(0, "One text.", None)
    assert parse("Is it? ||| Yes.\n", 3, "f:4") == InputExample(3, "Is it?", "Yes.")
    # Without spaces around it, "|||" is text, as in the original.
    assert parse("a|||b", 0, "f:1") == InputExample(0, "a|||b", None)


@pytest.mark.parametrize("line, message", [
    ("", "empty line"),
    ("  \t", "empty line"),
    ("|||", "nothing on one side of '|||'"),
    ("||| the answer", "nothing on one side of '|||'"),
    ("the question |||", "nothing on one side of '|||'"),
    ("a ||| b ||| c", r"2 ' \|\|\| ' separators; a line holds a text, or two joined by one "
     r"' \|\|\| '$"),
])
def test_bad_lines_name_the_file_and_line(tmp_path, line, message):
    path = write_lines(tmp_path / "input.txt", "fine", line, "fine too")
    with pytest.raises(ExtractionError, match=f"^{path}:2: {message}"):
        list(feature_extraction.read_examples(path))


def test_unreadable_input_is_named(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"fine\nbad \xff byte\n")
    with pytest.raises(ExtractionError, match=f"^{path}:2: not UTF-8"):
        list(feature_extraction.read_examples(str(path)))
    missing = str(tmp_path / "missing.txt")
    with pytest.raises(ExtractionError, match=f"^--input_file={missing}: cannot read it"):
        list(feature_extraction.read_examples(missing))
    empty = write_lines(tmp_path / "empty.txt")
    with pytest.raises(ExtractionError, match="holds no line"):
        feature_extraction.count_examples(empty)


def test_examples_are_read_lazily(tmp_path):
    path = write_lines(tmp_path / "input.txt", "first", "", "third")
    examples = feature_extraction.read_examples(path)
    # The bad second line is not read before the first example is taken.
    assert next(examples).text_a == "first"
    with pytest.raises(ExtractionError, match=":2: empty line"):
        next(examples)


# Packing


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(
        os.path.join(helpers.FIXTURES, "tokenization_vocab_small.txt"))


def test_pair_is_packed_and_truncated_as_the_original(tokenizer):
    example = InputExample(0, "The quick brown fox jumped.", "How old are you?")
    # 8 + 5 pieces into 11 - 3 = 8: the longer first text loses pieces down
    # to 5, then the second (the one cut on a tie) one, then the first again.
    features = feature_extraction.convert_example(example, tokenizer, 11)
    assert features.tokens == ["[CLS]", "the", "quick", "brown", "fox", "[SEP]",
                               "how", "old", "are", "you", "[SEP]"]
    assert features.input_ids == tokenizer.convert_tokens_to_ids(features.tokens)
    assert features.segment_ids == [0] * 6 + [1] * 5
    assert features.truncated and features.words is None
    single = feature_extraction.convert_example(InputExample(1, example.text_a, None),
                                                tokenizer, 6)
    assert single.tokens == ["[CLS]", "the", "quick", "brown", "fox", "[SEP]"]
    whole = feature_extraction.convert_example(InputExample(1, example.text_a, None),
                                               tokenizer, 16)
    assert not whole.truncated and len(whole.tokens) == 10
    assert whole.input_mask == [1] * 10 + [0] * 6 and whole.input_ids[10:] == [0] * 6


def test_words_know_their_pieces(tokenizer):
    example = InputExample(0, "Unaffable runners", "were running")
    features = feature_extraction.convert_example(example, tokenizer, 16, word_level=True)
    assert features.tokens == ["[CLS]", "u", "##na", "##ff", "##able", "run", "##ner", "##s",
                               "[SEP]", "were", "running", "[SEP]"]
    assert features.words == ["Unaffable", "runners", "were", "running"]
    assert features.word_spans == [(1, 5), (5, 8), (9, 10), (10, 11)]
    # Cut inside "runners", it keeps the piece that fits.
    cut = feature_extraction.convert_example(example, tokenizer, 10, word_level=True)
    assert cut.words == features.words and cut.truncated
    assert cut.word_spans == [(1, 5), (5, 6), (7, 8), (8, 9)]
    # Cut before its first piece, it is gone.
    cut = feature_extraction.convert_example(example, tokenizer, 9, word_level=True)
    assert cut.words == ["Unaffable", "were", "running"]
    assert cut.word_spans == [(1, 5), (6, 7), (7, 8)]


def test_a_word_without_pieces_gets_unk(tokenizer):
    # U+200B is no whitespace to str.split() but is deleted by tokenization.
    example = InputExample(0, "fox \u200b fox", None)
    features = feature_extraction.convert_example(example, tokenizer, 16, word_level=True)
    assert features.words == ["fox", "\u200b", "fox"]
    assert features.tokens == ["[CLS]", "fox", "[UNK]", "fox", "[SEP]"]


# Values


LINES = ["The quick brown fox jumped.", "How old are you? ||| What is your age?"]


def test_values_are_the_models_layers(tiny, tokenizer, tmp_path):
    files, model = tiny
    output = run(files, tmp_path, LINES, layers="-1,0,-2,1,emb")
    lines = read_jsonl(output)
    expected = [hidden_states(model, tokenizer, tokenizer.tokenize(LINES[0])),
                hidden_states(model, tokenizer, tokenizer.tokenize("How old are you?"),
                              tokenizer.tokenize("What is your age?"))]
    for line, states in zip(lines, expected, strict=True):
        # Positions in states: 0 the embedding output, then layer_0, layer_1.
        for index, position in ((-1, 2), (0, 1), (-2, 1), (1, 2), ("emb", 0)):
            np.testing.assert_allclose(layer_values(line, index), states[position],
                                       atol=1e-5)
    # -2 and 0 name the same (first) layer of two.
    np.testing.assert_array_equal(layer_values(lines[1], -2), layer_values(lines[1], 0))


def test_pooling(tiny, tmp_path):
    files, _ = tiny
    tokens = read_jsonl(run(files, tmp_path, LINES))
    for pooling in ("cls", "mean"):
        lines = read_jsonl(run(files, tmp_path, LINES, pooling=pooling))
        for pooled, full in zip(lines, tokens, strict=True):
            assert list(pooled) == ["linex_index", "pooling", "tokens", "layers"]
            assert pooled["pooling"] == pooling
            assert pooled["tokens"] == [f["token"] for f in full["features"]]
            for layer in pooled["layers"]:
                values = layer_values(full, layer["index"])
                # The mean is over every real token, [CLS] and [SEP] included.
                want = values[0] if pooling == "cls" else values.mean(axis=0)
                np.testing.assert_allclose(layer["values"], want, atol=2e-6)


def test_word_level_lines_up_with_words(tiny, tmp_path):
    files, _ = tiny
    lines = ["Unaffable runners were running", "John Johanson ||| lives here"]
    tokens = read_jsonl(run(files, tmp_path, lines))
    for word_pooling in ("first", "mean"):
        words = read_jsonl(run(files, tmp_path, lines, word_level=True,
                               word_pooling=word_pooling))
        assert [[f["token"] for f in line["features"]] for line in words] == [
            ["Unaffable", "runners", "were", "running"], ["John", "Johanson", "lives", "here"]]
        # [CLS] u ##na ##ff ##able run ##ner ##s were running [SEP]
        # [CLS] john j ##o ##han ##son [SEP] lives here [SEP]
        spans = [[(1, 5), (5, 8), (8, 9), (9, 10)], [(1, 2), (2, 6), (7, 8), (8, 9)]]
        for word_line, token_line, line_spans in zip(words, tokens, spans, strict=True):
            values = layer_values(token_line, -1)
            want = [values[a] if word_pooling == "first" else values[a:b].mean(axis=0)
                    for a, b in line_spans]
            np.testing.assert_allclose(layer_values(word_line, -1), want, atol=2e-6)


def test_word_level_and_pooling_exclude_each_other(tiny, tmp_path):
    with pytest.raises(ExtractionError, match="--word_level .* --pooling=mean"):
        run(tiny[0], tmp_path, LINES, word_level=True, pooling="mean")


def test_two_replicas_give_the_same_values(tiny, tmp_path, two_cpu_strategy):
    files, _ = tiny
    lines = [*LINES, "A third line.", "And a fourth, ||| and fifth."]
    one = read_jsonl(run(files, tmp_path, lines, batch_size=4))
    two = read_jsonl(run(files, tmp_path, lines, batch_size=4,
                         runtime=run_setup.Runtime.resolve(two_cpu_strategy)))
    assert [line["linex_index"] for line in two] == [0, 1, 2, 3]
    for a, b in zip(one, two, strict=True):
        np.testing.assert_allclose(layer_values(a, -1), layer_values(b, -1), atol=2e-6)
    with pytest.raises(ExtractionError, match="--batch_size=3: must be a positive multiple "
                                              "of the 2 replicas"):
        run(files, tmp_path, lines, batch_size=3,
            runtime=run_setup.Runtime.resolve(two_cpu_strategy))


# Output formats


def test_npz_holds_every_examples_arrays(tiny, tmp_path):
    files, _ = tiny
    token_lines = read_jsonl(run(files, tmp_path, LINES, layers="-1,emb"))
    output = run(files, tmp_path, LINES, output_format="npz", layers="-1,emb")
    with np.load(output) as arrays:
        assert sorted(arrays.files) == sorted(
            f"example_{i}_{key}" for i in range(2) for key in ("tokens", "layer_-1",
                                                              "layer_emb"))
        for i, line in enumerate(token_lines):
            assert arrays[f"example_{i}_tokens"].tolist() == [
                f["token"] for f in line["features"]]
            for index in (-1, "emb"):
                array = arrays[f"example_{i}_layer_{index}"]
                assert array.dtype == np.float32 and array.shape == (
                    len(line["features"]), HIDDEN)
                np.testing.assert_allclose(array, layer_values(line, index), atol=1e-6)
    pooled = run(files, tmp_path, LINES, output_format="npz", pooling="cls")
    with np.load(pooled) as arrays:
        assert arrays["example_1_layer_-2"].shape == (HIDDEN,)
    assert no_temporary_files(tmp_path)


def test_tfrecord_holds_one_example_per_line(tiny, tmp_path):
    files, _ = tiny
    token_lines = read_jsonl(run(files, tmp_path, LINES))
    output = run(files, tmp_path, LINES, output_format="tfrecord", word_level=True)
    spec = {"linex_index": tf.io.FixedLenFeature([1], tf.int64),
            "tokens": tf.io.VarLenFeature(tf.string),
            "layers": tf.io.VarLenFeature(tf.string),
            "shape": tf.io.VarLenFeature(tf.int64),
            "layer_-1": tf.io.VarLenFeature(tf.float32),
            "layer_-2": tf.io.VarLenFeature(tf.float32)}
    records = list(tf.data.TFRecordDataset(output))
    assert len(records) == 2
    for i, record in enumerate(records):
        parsed = tf.io.parse_single_example(record, spec)
        dense = {k: tf.sparse.to_dense(v).numpy() if isinstance(v, tf.SparseTensor)
                 else v.numpy() for k, v in parsed.items()}
        words = LINES[i].replace(" ||| ", " ").split()
        assert dense["linex_index"].tolist() == [i]
        assert [t.decode() for t in dense["tokens"]] == words
        assert dense["layers"].tolist() == [b"-1", b"-2"]
        assert dense["shape"].tolist() == [len(words), HIDDEN]
        values = dense["layer_-1"].reshape(dense["shape"])
        # Each word's first piece: "jumped." is j ##um ##ped . and "you?" is
        # you ?, so the second text starts at 7, after "?" and [SEP].
        first_pieces = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 7, 8, 9, 10]][i]
        np.testing.assert_allclose(values, layer_values(token_lines[i], -1)[first_pieces],
                                   atol=1e-6)
    assert no_temporary_files(tmp_path)


def test_a_failed_run_leaves_no_output(tiny, tmp_path, monkeypatch):
    files, _ = tiny
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed")
        return feature_extraction.ExampleOutput(0, ["[CLS]"], np.zeros((2, 1, HIDDEN),
                                                                       np.float32))

    # extract() looks example_output up in its own module.
    monkeypatch.setattr(extractor, "example_output", failing)
    for output_format in feature_extraction.OUTPUT_FORMATS:
        calls.clear()
        with pytest.raises(RuntimeError, match="killed"):
            run(files, tmp_path, LINES, output_format=output_format, batch_size=1)
        assert not os.path.exists(tmp_path / f"output.{output_format}")
    assert no_temporary_files(tmp_path)


# Model files


def test_a_missing_checkpoint_is_named(tmp_path):
    missing = str(tmp_path / "bert_model.ckpt")
    with pytest.raises(ExtractionError, match=f"^--init_checkpoint={missing}: checkpoint "
                                              "not found"):
        feature_extraction.model_files(missing)


def test_a_cased_hugging_face_folder_keeps_its_case(tiny, tmp_path):
    files, model = tiny
    folder = checkpoints.save_hf_folder(str(tmp_path / "hf"), model)
    (tmp_path / "hf" / "vocab.txt").write_text(
        open(files.vocab_file, encoding="utf-8").read(), encoding="utf-8")
    (tmp_path / "hf" / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    cased = feature_extraction.model_files(folder)
    assert cased.do_lower_case is False
    # A flag that contradicts the folder's record is refused: the model was
    # trained on cased text.
    with pytest.raises(feature_extraction.ExtractionError,
                       match="--do_lower_case=True contradicts .* do_lower_case=False"):
        feature_extraction.model_files(folder, do_lower_case=True)
    line = read_jsonl(run(cased, tmp_path, ["The Fox"]))[0]
    assert [f["token"] for f in line["features"]] == ["[CLS]", "The", "[UNK]", "[SEP]"]


# Parity with Hugging Face transformers


def test_every_layer_matches_transformers(minilm_folder, tmp_path):
    reference = np.load(FIXTURE)
    lines = reference["lines"].tolist()
    files = feature_extraction.model_files(minilm_folder, max_seq_length=32)
    layers = "emb,-6,-5,-4,-3,-2,-1"
    output = run(files, tmp_path, lines, output_format="npz", layers=layers,
                 max_seq_length=32, batch_size=2)
    tokenizer = files.tokenizer()
    with np.load(output) as arrays:
        tokens = np.concatenate([arrays[f"example_{i}_tokens"] for i in range(len(lines))])
        # [7, tokens, 384]: the embedding output, then layers 1 to 6.
        ours = np.concatenate([np.stack([arrays[f"example_{i}_layer_{name}"]
                                         for name in layers.split(",")])
                               for i in range(len(lines))], axis=1)
    assert tokenizer.convert_tokens_to_ids(tokens.tolist()) == reference["input_ids"].tolist()
    diff = np.abs(ours - reference["hidden_states"]).max(axis=(1, 2))
    assert diff.max() <= TOLERANCE, f"max abs diff per hidden state: {diff}"
    # The original's jsonl, with positive indices, rounds the same values.
    jsonl = read_jsonl(run(files, tmp_path, lines, layers="0,5", max_seq_length=32))
    first = np.concatenate([layer_values(line, 0) for line in jsonl])
    np.testing.assert_allclose(first, reference["hidden_states"][1], atol=TOLERANCE)
