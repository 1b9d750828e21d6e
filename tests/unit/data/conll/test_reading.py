"""Tests for bert_tf.data.conll reading and writing: layouts, documents, errors, round trip."""


import pytest

from bert_tf.data import conll

# Two documents in the 4-column layout of the original CoNLL-2003 files, with
# a run of blank lines and no blank line after the last sentence.
FOUR_COLUMNS = """\
-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER


-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O"""


def _write(tmp_path, text, name="data.txt"):
    """Writes text (str as UTF-8, or bytes) to tmp_path/name; returns the path as str."""
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def test_four_columns_documents_blank_runs_and_last_sentence(tmp_path):
    sentences = conll.read_conll(_write(tmp_path, FOUR_COLUMNS))
    assert sentences == [
        conll.Sentence(("EU", "rejects", "German", "."), ("B-ORG", "O", "B-MISC", "O"),
                       (3, 4, 5, 6), 0),
        conll.Sentence(("Peter", "Blackburn"), ("B-PER", "I-PER"), (8, 9), 0),
        conll.Sentence(("BRUSSELS", "1996-08-22"), ("B-LOC", "O"), (14, 15), 1),
    ]


def test_three_columns_as_the_shared_files(tmp_path):
    # The layout of the Hugging Face export: word, tag, and a 0 column.
    text = "EU B-ORG 0\nrejects O 0\n\nPeter B-PER 0\nBlackburn I-PER 0\n\n"
    sentences = conll.read_conll(_write(tmp_path, text))
    assert [s.words for s in sentences] == [("EU", "rejects"), ("Peter", "Blackburn")]
    assert [s.tags for s in sentences] == [("B-ORG", "O"), ("B-PER", "I-PER")]
    assert [s.lines for s in sentences] == [(1, 2), (4, 5)]
    # No -DOCSTART-: everything is document 0.
    assert [s.document for s in sentences] == [0, 0]


def test_three_columns_ending_in_a_tag(tmp_path):
    # Only a number in the last column moves the tag column: "word POS TAG"
    # reads the last one.
    sentences = conll.read_conll(_write(tmp_path, "EU NNP B-ORG\nrejects VBZ O\n"))
    assert sentences[0].tags == ("B-ORG", "O")
    # The tag column is chosen once, from the first token line.
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:2: tag 'NNP'"):
        conll.read_conll(_write(tmp_path, "EU B-ORG 0\nrejects NNP O\n"))


def test_two_columns_tabs_and_windows_line_endings(tmp_path):
    text = "\ufeffJohn\tI-PER\r\nlives\tO\r\n\r\n\r\nin\tO\r\nParis\tI-LOC\r\n"
    sentences = conll.read_conll(_write(tmp_path, text))
    # IOB1 tags (I- starting an entity) are accepted; the byte-order mark is dropped.
    assert [s.words for s in sentences] == [("John", "lives"), ("in", "Paris")]
    assert [s.tags for s in sentences] == [("I-PER", "O"), ("O", "I-LOC")]


def test_documents_are_counted_from_the_first_docstart(tmp_path):
    # Sentences before the first -DOCSTART- are document 0; each -DOCSTART-
    # after a non-blank line starts the next one, even an empty document.
    text = "a O\n-DOCSTART- O\nb O\n\n-DOCSTART- O\n-DOCSTART- O\nc O\n"
    sentences = conll.read_conll(_write(tmp_path, text))
    assert [(s.words, s.document) for s in sentences] == [
        (("a",), 0), (("b",), 1), (("c",), 3)]
    # A -DOCSTART- opening the file starts document 0.
    text = "\n-DOCSTART- -X- O\n\nx O\n-DOCSTART- -X- O\ny O"
    sentences = conll.read_conll(_write(tmp_path, text))
    assert [(s.words, s.document) for s in sentences] == [(("x",), 0), (("y",), 1)]


def test_empty_file_and_only_docstart(tmp_path):
    assert conll.read_conll(_write(tmp_path, "")) == []
    assert conll.read_conll(_write(tmp_path, "-DOCSTART- -X- -X- O\n\n\n")) == []


def test_line_without_tag_column(tmp_path):
    path = _write(tmp_path, "EU B-ORG\nrejects\n")
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:2: no tag column"):
        conll.read_conll(path)
    # A word-only file is an error when tags are expected, at its first word.
    path = _write(tmp_path, "\nEU\nrejects\n")
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:2: no tag column"):
        conll.read_conll(path)


def test_malformed_tags(tmp_path):
    for tag in ("E-PER", "S-LOC", "B-", "B_PER", "PER", "o", "I"):
        path = _write(tmp_path, f"a O 0\n\nb {tag} 0\n")
        with pytest.raises(conll.ConllDataError, match=rf"data\.txt:3: tag '{tag}'"):
            conll.read_conll(path)


def test_inconsistent_column_counts(tmp_path):
    path = _write(tmp_path, "-DOCSTART- -X- O\n\na B-X 0\n\nb NN B-NP O\n")
    with pytest.raises(conll.ConllDataError,
                       match=r"data\.txt:5: 4 columns, but line 3 has 3"):
        conll.read_conll(path)


def test_non_utf8_bytes_give_the_line(tmp_path):
    path = _write(tmp_path, "a O\n\nb O\nM\xfcnchen B-LOC\n".encode("latin-1"))
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:4: not UTF-8"):
        conll.read_conll(path)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.txt"):
        conll.read_conll(str(tmp_path / "nowhere.txt"))


def test_prediction_files_without_tags(tmp_path):
    text = "-DOCSTART-\n\nEU\nrejects\n\nPeter\n"
    sentences = conll.read_conll(_write(tmp_path, text), has_tags=False)
    assert sentences == [
        conll.Sentence(("EU", "rejects"), None, (3, 4), 0),
        conll.Sentence(("Peter",), None, (6,), 0),
    ]
    # With a tag column the tags are still read, and checked.
    sentences = conll.read_conll(_write(tmp_path, "EU B-ORG 0\n"), has_tags=False)
    assert sentences[0].tags == ("B-ORG",)
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:1: tag"):
        conll.read_conll(_write(tmp_path, "EU ORG\n"), has_tags=False)
    # Word-only and tagged lines may not mix.
    with pytest.raises(conll.ConllDataError, match=r"data\.txt:2: 2 columns, but line 1 has 1"):
        conll.read_conll(_write(tmp_path, "EU\nrejects O\n"), has_tags=False)


def test_label_list_order(tmp_path):
    sentences = conll.read_conll(_write(tmp_path, FOUR_COLUMNS))
    assert conll.label_list(sentences) == [
        "O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-PER"]
    # "O" is there even when unseen; I- after B- of the same type.
    tags = [conll.Sentence(("a", "b"), ("I-ORG", "B-ORG"), (1, 2), 0)]
    assert conll.label_list(tags) == ["O", "B-ORG", "I-ORG"]
    with pytest.raises(ValueError, match="sentence 0 has no tags"):
        conll.label_list([conll.Sentence(("a",), None, (1,), 0)])


def test_write_conll_round_trip(tmp_path):
    source = _write(tmp_path, FOUR_COLUMNS)
    sentences = conll.read_conll(source)
    predicted = [["B-ORG", "O", "O", "O"], ["B-PER", "B-PER"], ["B-LOC", "O"]]
    output = str(tmp_path / "predictions.txt")
    conll.write_conll(output, sentences, predicted, source)
    with open(source, encoding="utf-8") as f:
        source_lines = f.read().split("\n")
    with open(output, encoding="utf-8") as f:
        output_lines = f.read().split("\n")
    # Token lines get one more column; -DOCSTART- and blank lines stay as they are.
    tags = iter(tag for sentence in predicted for tag in sentence)
    expected = [line if not line or line.startswith("-DOCSTART-") else f"{line} {next(tags)}"
                for line in source_lines]
    assert output_lines == expected
    # The output reads back with the predictions as its tags.
    assert [s.tags for s in conll.read_conll(output)] == [tuple(p) for p in predicted]
    assert [s.lines for s in conll.read_conll(output)] == [s.lines for s in sentences]


def test_write_conll_keeps_tabs_line_endings_and_word_only_files(tmp_path):
    source = _write(tmp_path, "a\tO\r\nb\tB-X\r\n\r\n\r\nc\tO\r\n")
    output = str(tmp_path / "out.txt")
    sentences = conll.read_conll(source)
    conll.write_conll(output, sentences, [("O", "B-X"), ("I-Y",)], source)
    with open(output, "rb") as f:
        assert f.read() == b"a\tO\tO\r\nb\tB-X\tB-X\r\n\r\n\r\nc\tO\tI-Y\r\n"
    source = _write(tmp_path, "-DOCSTART-\n\nEU\nrejects \n")
    sentences = conll.read_conll(source, has_tags=False)
    conll.write_conll(output, sentences, [("B-ORG", "O")], source)
    with open(output, encoding="utf-8") as f:
        assert f.read() == "-DOCSTART-\n\nEU B-ORG\nrejects O\n"


def test_write_conll_refuses_predictions_that_do_not_fit(tmp_path):
    source = _write(tmp_path, "a O\nb O\n\nc O\n")
    other = _write(tmp_path, "a O\nx O\n\nc O\n", name="other.txt")
    sentences = conll.read_conll(source)
    output = tmp_path / "out.txt"
    with pytest.raises(ValueError, match="1 predicted tag sequences for 2 sentences"):
        conll.write_conll(str(output), sentences, [("O", "O")], source)
    with pytest.raises(ValueError, match="sentence 1: 2 predicted tags for 1 words"):
        conll.write_conll(str(output), sentences, [("O", "O"), ("O", "O")], source)
    with pytest.raises(ValueError, match="'B X' is not one column"):
        conll.write_conll(str(output), sentences, [("O", "B X"), ("O",)], source)
    with pytest.raises(ValueError, match=r"other\.txt:2: word 'x'"):
        conll.write_conll(str(output), sentences, [("O", "O"), ("O",)], other)
    assert not output.exists()

