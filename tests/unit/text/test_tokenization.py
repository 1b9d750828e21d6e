"""Tests of bert_tf.text.tokenization, the pure-Python tokenizer.

The examples of the original google-research/bert tokenization_test.py come
first, then the cleaning and WordPiece rules, the vocabulary errors, packing,
and the Unicode facts on which the whole-text implementation relies.
"""

import sys
import unicodedata

import numpy as np
import pytest

from bert_tf.text import char_classes, tokenization

# The vocabulary of the original's tests.
ORIGINAL_TEST_VOCAB = [
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "want",
    "##want",
    "##ed",
    "wa",
    "un",
    "runn",
    "##ing",
    ",",
]


def _write_vocab(directory, tokens, name="vocab.txt"):
    """Writes one token a line and returns the file's path."""
    path = directory / name
    path.write_text("".join(token + "\n" for token in tokens), encoding="utf-8")
    return path


@pytest.fixture
def vocab_file(tmp_path):
    """The original tests' vocabulary, as a file."""
    return _write_vocab(tmp_path, ORIGINAL_TEST_VOCAB)


def test_full_tokenizer_splits_into_word_pieces_and_ids(vocab_file):
    tokenizer = tokenization.FullTokenizer(vocab_file)

    tokens = tokenizer.tokenize("UNwant\u00e9d,running")

    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
    assert tokenizer.convert_ids_to_tokens([7, 4, 5, 10, 8, 9]) == tokens


def test_full_tokenizer_accepts_utf8_bytes(vocab_file):
    tokenizer = tokenization.FullTokenizer(vocab_file)

    assert tokenizer.tokenize("UNwant\u00e9d".encode()) == ["un", "##want", "##ed"]


def test_chinese_characters_are_words_of_their_own():
    tokenizer = tokenization.BasicTokenizer()

    assert tokenizer.tokenize("ah\u535a\u63a8zz") == ["ah", "\u535a", "\u63a8", "zz"]


def test_basic_tokenizer_lower_cases_and_strips_accents():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)

    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "hello",
        "!",
        "how",
        "are",
        "you",
        "?",
    ]
    assert tokenizer.tokenize("H\u00e9llo") == ["hello"]


def test_basic_tokenizer_without_lower_casing_keeps_case_and_accents():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)

    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "HeLLo",
        "!",
        "how",
        "Are",
        "yoU",
        "?",
    ]
    assert tokenizer.tokenize("H\u00e9llo") == ["H\u00e9llo"]


def test_lower_casing_is_not_case_folding():
    # Lower casing and NFD, not NFKC case folding: ß, ligatures, full-width
    # letters and superscripts stay what they are.
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)

    assert tokenizer.tokenize("Straße \ufb01n \uff21\uff22 x\u00b2 \u03f0") == [
        "straße",
        "\ufb01n",
        "\uff41\uff42",
        "x\u00b2",
        "\u03f0",
    ]


def test_final_sigma_depends_on_the_whole_word():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)

    assert tokenizer.tokenize("ΟΔΥΣΣΕΥΣ ΑΣ. Σ") == ["οδυσσευς", "ας", ".", "σ"]


def test_control_characters_are_removed_and_whitespace_splits():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)

    text = "a\x00b\x07c\u200bd\u00ade\ufeff\ufffdf g\u00a0h\u3000i\u2028j\u2029k\x85l\u200dm"

    # U+0085 is a control character (Cc), so it goes although str.split()
    # would split on it.
    assert tokenizer.tokenize(text) == ["abcdef", "g", "h", "i", "j", "klm"]


def test_punctuation_includes_all_non_alphanumeric_ascii():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)

    assert tokenizer.tokenize("a$b^c`d~e\u00bff\u2014g+h") == list("a$b^c`d~e\u00bff\u2014g+h")


def test_wordpiece_tokenizer_is_greedy_longest_match_first():
    vocab = {token: index for index, token in enumerate(ORIGINAL_TEST_VOCAB[:-1])}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)

    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    assert tokenizer.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]


def test_words_over_max_input_chars_per_word_are_unknown():
    vocab = {"[UNK]": 0, "a": 1, "##a": 2}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)

    assert tokenizer.tokenize("a" * 200) == ["a"] + ["##a"] * 199
    assert tokenizer.tokenize("a" * 201) == ["[UNK]"]
    assert tokenization.WordpieceTokenizer(vocab, max_input_chars_per_word=3).tokenize(
        "aaa aaaa"
    ) == ["a", "##a", "##a", "[UNK]"]


def test_convert_functions_map_through_the_vocab():
    vocab = {token: index for index, token in enumerate(ORIGINAL_TEST_VOCAB)}
    inv_vocab = {index: token for token, index in vocab.items()}
    tokens = ["un", "##want", "##ed", "runn", "##ing"]

    assert tokenization.convert_tokens_to_ids(vocab, tokens) == [7, 4, 5, 8, 9]
    assert tokenization.convert_ids_to_tokens(inv_vocab, [7, 4, 5, 8, 9]) == tokens
    assert tokenization.convert_by_vocab(vocab, ["[CLS]"]) == [1]


def test_whitespace_tokenize_splits_like_str_split():
    assert tokenization.whitespace_tokenize("  a \t b\u2028c\n") == ["a", "b", "c"]
    assert tokenization.whitespace_tokenize("   ") == []


def test_convert_to_unicode_and_printable_text():
    assert tokenization.convert_to_unicode("abc") == "abc"
    assert tokenization.convert_to_unicode(b"a\xffb\xc3\xa9") == "ab\u00e9"
    assert tokenization.printable_text(b"\xc3\xa9") == "\u00e9"
    with pytest.raises(ValueError, match="Unsupported string type"):
        tokenization.convert_to_unicode(3)


def test_load_vocab_numbers_lines_and_strips_them(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\r\n  hello \nworld\n\n\nlast")

    vocab = tokenization.load_vocab(path)

    # Blank lines may repeat (no text matches them): the last one's id.
    assert list(vocab.items()) == [("[UNK]", 0), ("hello", 1), ("world", 2), ("", 4), ("last", 5)]


def test_a_repeated_token_names_both_lines(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\nhello\nworld\n hello\nlast\n")

    with pytest.raises(ValueError, match=(
            f"^Vocab file {path}: line 4 repeats line 2, 'hello': the token would take the "
            "later id and the earlier id no token; remove one of the lines$")):
        tokenization.load_vocab(path)


def test_full_tokenizer_has_inverse_vocab(vocab_file):
    tokenizer = tokenization.FullTokenizer(vocab_file)

    assert tokenizer.inv_vocab[7] == "un"
    assert len(tokenizer.inv_vocab) == len(tokenizer.vocab) == len(ORIGINAL_TEST_VOCAB)


def test_missing_vocab_file_names_the_file(tmp_path):
    missing = tmp_path / "no_such_vocab.txt"

    with pytest.raises(FileNotFoundError, match="no_such_vocab.txt"):
        tokenization.FullTokenizer(missing)


def test_unreadable_vocab_path_names_the_file(tmp_path):
    with pytest.raises(OSError, match="Cannot read vocab file"):
        tokenization.load_vocab(tmp_path)


def test_vocab_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"[UNK]\nhello\ncaf\xe9\n")

    with pytest.raises(ValueError, match=r"latin1.txt is not UTF-8: line 3 .*0xe9"):
        tokenization.load_vocab(path)


@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\t\n"])
def test_empty_vocab_is_an_error(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)

    with pytest.raises(ValueError, match="empty.txt is empty"):
        tokenization.FullTokenizer(path)


def test_vocab_without_unk_token_fails_only_when_needed(tmp_path):
    path = _write_vocab(tmp_path, ["hello", "world"], name="no_unk.txt")
    tokenizer = tokenization.FullTokenizer(path)

    assert tokenizer.convert_tokens_to_ids(tokenizer.tokenize("Hello world")) == [0, 1]
    tokens = tokenizer.tokenize("hello there")
    assert tokens == ["hello", "[UNK]"]
    with pytest.raises(KeyError, match=r"no_unk.txt has no unknown token '\[UNK\]'"):
        tokenizer.convert_tokens_to_ids(tokens)
    with pytest.raises(KeyError, match=r"Token 'there' is not in vocab file .*no_unk.txt"):
        tokenizer.convert_tokens_to_ids(["there"])


def test_remote_vocab_is_read_with_tf_io_gfile():
    tf = pytest.importorskip("tensorflow")
    with tf.io.gfile.GFile("ram://tokenization_test/vocab.txt", "wb") as writer:
        writer.write(b"[UNK]\nhello\n")

    assert tokenization.load_vocab("ram://tokenization_test/vocab.txt") == {
        "[UNK]": 0,
        "hello": 1,
    }
    with pytest.raises(OSError, match="ram://tokenization_test/missing.txt"):
        tokenization.load_vocab("ram://tokenization_test/missing.txt")


def test_vocab_tables_hold_the_special_ids_and_the_replacements(tmp_path):
    tokens = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s", "[",
              "[]", "x]", "##"]
    vocab = tokenization.VocabTables.from_file(_write_vocab(tmp_path, tokens))

    assert (vocab.cls_id, vocab.sep_id, vocab.mask_id) == (3, 4, 5)
    assert vocab.is_continuation.tolist() == [t.startswith("##") for t in tokens]
    # Bracketed tokens are special; "[", "[]" and "x]" are not bracketed words.
    assert vocab.replacement_ids.tolist() == [6, 7, 8, 9, 10, 11]
    assert vocab.replacement_ids.dtype == np.int32


def test_vocab_tables_of_a_mapping_follow_its_ids():
    vocab = tokenization.VocabTables({"[MASK]": 7, "[SEP]": 2, "[CLS]": 9, "b": 4, "##a": 0})

    assert (vocab.cls_id, vocab.sep_id, vocab.mask_id) == (9, 2, 7)
    assert len(vocab.is_continuation) == 10 and vocab.is_continuation.nonzero()[0].tolist() == [0]
    assert vocab.replacement_ids.tolist() == [0, 4]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "bad vocab file: .*Cannot read vocab file .*missing.txt"),
        (b"", "bad vocab file: .* is empty"),
        (b"[CLS]\n\xff\xfe\n", "bad vocab file: .* is not UTF-8"),
        (b"[PAD]\n[CLS]\n[SEP]\nthe\n", r"^the vocab lacks \[MASK\]$"),
        (b"the\n", r"^the vocab lacks \[CLS\], \[SEP\], \[MASK\]$"),
        (b"[CLS]\n[SEP]\n[MASK]\n[UNK]\n", "^the vocab has no word piece to draw from$"),
    ],
)
def test_unusable_vocab_tables_are_value_errors(tmp_path, content, message):
    path = tmp_path / "missing.txt"
    if content is not None:
        path.write_bytes(content)

    with pytest.raises(ValueError, match=message):
        tokenization.VocabTables.from_file(path)


@pytest.mark.parametrize(
    ("checkpoint", "do_lower_case", "error"),
    [
        ("gs://b/uncased_L-12_H-768_A-12/bert_model.ckpt", True, None),
        ("gs://b/uncased_L-12_H-768_A-12/bert_model.ckpt", False, "--do_lower_case=True"),
        ("/m/cased_L-12_H-768_A-12/bert_model.ckpt", True, "--do_lower_case=False"),
        ("/m/cased_L-12_H-768_A-12/bert_model.ckpt", False, None),
        ("/m/my_model/bert_model.ckpt", False, None),
        ("/m/model.ckpt", True, None),
        (None, True, None),
    ],
)
def test_validate_case_matches_checkpoint(checkpoint, do_lower_case, error):
    if error is None:
        tokenization.validate_case_matches_checkpoint(do_lower_case, checkpoint)
    else:
        with pytest.raises(ValueError, match=error):
            tokenization.validate_case_matches_checkpoint(do_lower_case, checkpoint)


@pytest.mark.parametrize(("tokens", "casing"), [
    (["[PAD]", "[UNK]", "the", "##s", "keeper", ",", "é"], "uncased"),
    (["[PAD]", "the", "The", "keeper"], "cased"),
    # Scripts without case: neither, whatever the Latin pieces among them.
    (["[PAD]", "東", "京", "a"], None),
    (["[PAD]", "가", "나", "다", "a"], None),
    (["[PAD]", "[UNK]", "1", "##2"], None),
])
def test_a_vocabs_casing_is_told_by_its_word_pieces(tokens, casing):
    assert tokenization.vocab_casing(dict.fromkeys(tokens))[0] == casing


def test_a_cased_reading_of_an_uncased_vocab_is_refused():
    uncased = dict.fromkeys(["[PAD]", "[UNK]", "the", "keeper"])
    with pytest.raises(tokenization.CasingError, match=(
            "^--do_lower_case=False, but vocab.txt has no word piece with a capital letter "
            "\\(an uncased vocab\\): capitalised words would be \\[UNK\\]; pass "
            "--do_lower_case=True$")):
        tokenization.check_case_fits_vocab(False, uncased, "vocab.txt")
    tokenization.check_case_fits_vocab(True, uncased, "vocab.txt")
    # Lower-casing a cased vocab loses its capitalised pieces only: a warning.
    cased = dict.fromkeys(["[PAD]", "The", "the"])
    tokenization.check_case_fits_vocab(True, cased, "vocab.txt")
    assert tokenization.case_mismatch_with_vocab(True, cased, "vocab.txt").startswith(
        "--do_lower_case=True, but 1 word pieces of vocab.txt hold capital letters")
    # A Korean vocab keeps its syllables composed only without lower-casing.
    tokenization.check_case_fits_vocab(False, dict.fromkeys(["가", "나", "a"]), "vocab.txt")


def test_pack_ids_single_segment():
    features = tokenization.pack_ids([5, 6, 7], max_seq_length=6, cls_id=1, sep_id=2)

    assert features == {
        "input_ids": [1, 5, 6, 7, 2, 0],
        "input_mask": [1, 1, 1, 1, 1, 0],
        "segment_ids": [0, 0, 0, 0, 0, 0],
    }
    assert tokenization.pack_ids(range(10), max_seq_length=5, cls_id=1, sep_id=2) == {
        "input_ids": [1, 0, 1, 2, 2],
        "input_mask": [1] * 5,
        "segment_ids": [0] * 5,
    }


def test_pack_ids_pair():
    features = tokenization.pack_ids([5, 6], [7], max_seq_length=8, cls_id=1, sep_id=2)

    assert features == {
        "input_ids": [1, 5, 6, 2, 7, 2, 0, 0],
        "input_mask": [1, 1, 1, 1, 1, 1, 0, 0],
        "segment_ids": [0, 0, 0, 0, 1, 1, 0, 0],
    }


@pytest.mark.parametrize(
    ("length_a", "length_b", "kept_a", "kept_b"),
    [
        (10, 2, 5, 2),  # the short segment stays whole
        (2, 10, 2, 5),
        (10, 10, 4, 3),  # a tie drops from b, so a keeps the larger half
        (4, 3, 4, 3),  # fits already
        (5, 4, 4, 3),
    ],
)
def test_pack_ids_truncates_the_longer_segment(length_a, length_b, kept_a, kept_b):
    ids_a, ids_b = list(range(100, 100 + length_a)), list(range(200, 200 + length_b))

    features = tokenization.pack_ids(ids_a, ids_b, max_seq_length=10, cls_id=1, sep_id=2)

    assert features["input_ids"][: kept_a + kept_b + 3] == [
        1,
        *ids_a[:kept_a],
        2,
        *ids_b[:kept_b],
        2,
    ]
    assert ids_a == list(range(100, 100 + length_a)), "the input must not change"


def test_pack_ids_needs_room_for_special_tokens():
    with pytest.raises(ValueError, match="max_seq_length=2"):
        tokenization.pack_ids([1], [2], max_seq_length=2, cls_id=1, sep_id=2)
    with pytest.raises(ValueError, match="max_seq_length=1"):
        tokenization.pack_ids([1], max_seq_length=1, cls_id=1, sep_id=2)


def _code_points_that_fold():
    """Yields each character that lower casing or NFD changes, with its fold."""
    for code_point in range(sys.maxunicode + 1):
        char = chr(code_point)
        if char.lower() != char or unicodedata.decomposition(char):
            yield char, unicodedata.normalize("NFD", char.lower())


def test_folding_never_creates_or_removes_whitespace_or_cjk():
    # BasicTokenizer folds the whole text, then splits words and ideographs;
    # the original splits on whitespace and pads ideographs first. The two
    # agree because folding keeps both classes apart.
    cjk = char_classes.char_class_ranges()["cjk"]

    def is_cjk(char):
        return any(first <= ord(char) <= last for first, last in cjk)

    for char, folded in _code_points_that_fold():
        assert any(c.isspace() for c in folded) == char.isspace(), f"U+{ord(char):04X}"
        if is_cjk(char):
            assert len(folded) == 1 and is_cjk(folded), f"U+{ord(char):04X}"
        else:
            assert not any(is_cjk(c) for c in folded), f"U+{ord(char):04X}"


def test_whitespace_is_neither_cased_nor_case_ignorable():
    # Hence the final sigma rule never looks across whitespace, and lower
    # casing the whole text equals lower casing word by word. NFD does not
    # reorder across whitespace either, as it has combining class 0.
    for code_point in range(sys.maxunicode + 1):
        space = chr(code_point)
        if space.isspace():
            assert ("ΑΣ" + space + "Α").lower() == "ας" + space + "α"
            assert ("Α" + space + "Σ").lower() == "α" + space + "σ"
            assert unicodedata.combining(space) == 0


def test_character_classes_follow_the_original_definitions():
    classes = char_classes.char_class_ranges()

    def members(name):
        return {chr(cp) for first, last in classes[name] for cp in range(first, last + 1)}

    removed = members("removed")
    assert {"\x00", "\ufffd", "\x07", "\x7f", "\u200b", "\u00ad", "\ufeff"} <= removed
    assert not {"\t", "\n", "\r", " ", "a"} & removed
    assert {"\t", "\n", "\r", "\u00a0", "\u3000"} <= members("whitespace")
    assert {"$", "^", "`", "~", "\u00bf", "\u3002"} <= members("punctuation")
    assert not {"a", "0", "\u00a9"} & members("punctuation")
    assert {"\u0301", "\u0345"} <= members("accent")
    assert members("split") == {chr(cp) for cp in range(sys.maxunicode + 1) if chr(cp).isspace()}


def test_the_original_character_tests_keep_their_behaviour():
    """The original tokenization_test.py calls these private helpers directly."""
    for char in (" ", "\t", "\r", "\n", "\u00a0"):
        assert tokenization._is_whitespace(char)
    for char in ("A", "-"):
        assert not tokenization._is_whitespace(char)
    assert tokenization._is_control("\u0005")
    for char in ("A", " ", "\t", "\r", "\U0001f4a9"):
        assert not tokenization._is_control(char)
    for char in ("-", "$", "`", "."):
        assert tokenization._is_punctuation(char)
    for char in ("A", " "):
        assert not tokenization._is_punctuation(char)
