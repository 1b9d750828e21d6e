"""Tests for bert_tf/data/swag: SWAG's CSV files read and checked, records, the predictions file."""

import csv
import os

import numpy as np
import pytest

from bert_tf.data import swag
from bert_tf.text import tokenization
from tests import helpers

FIXTURES = helpers.FIXTURES
SWAG = os.path.join(FIXTURES, "swag")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
HEADER = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
          "ending0", "ending1", "ending2", "ending3", "label"]


def _write(path, rows, header=HEADER):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _row(index, label="1"):
    return [str(index), f"video-{index}", "7", "A man walks in. He", "A man walks in.", "He",
            "gold", "sits down.", "flies away.", "melts.", "sings", label]


def test_the_fixture_reads_as_swag_does():
    examples = swag.read_examples(os.path.join(SWAG, "train.csv"), 4, labelled=True)
    assert len(examples) == 8
    first = examples[0]
    assert first.example_id == "0" and first.line == 2
    assert first.context == "The chef cracks two eggs into a bowl."
    assert first.start == "He"
    assert first.endings[0] == "whisks them with a fork."
    assert [e.label for e in examples] == [0, 1, 2, 3, 0, 1, 2, 3]
    # Each choice is the start of the sentence and one ending, as the paper packs SWAG.
    assert swag.second_segments(first)[1] == "He drives the car to the airport."


def test_a_test_file_has_no_labels_and_needs_none():
    examples = swag.read_examples(os.path.join(SWAG, "test.csv"), 4, labelled=False)
    assert [e.label for e in examples] == [None] * 5


def test_a_row_with_another_number_of_fields_names_its_line(tmp_path):
    path = _write(tmp_path / "val.csv", [_row(0), _row(1)[:-2] + ["1"], _row(2)])
    with pytest.raises(swag.SwagDataError) as error:
        swag.read_examples(path, 4, labelled=True)
    assert str(error.value) == f"{path}:3: 11 fields, but the header has 12"


def test_a_row_with_a_multi_line_field_is_named_by_its_first_line(tmp_path):
    quoted = _row(1)
    quoted[4] = "A man walks in.\nHe looks around.\nThen"
    path = _write(tmp_path / "val.csv", [row[1:] for row in (_row(0), quoted, _row(2))],
                  header=HEADER[1:])
    examples = swag.read_examples(path, 4, labelled=True)
    # Without an index column, the id is the row's first line, as its messages say.
    assert [(e.example_id, e.line) for e in examples] == [("2", 2), ("3", 3), ("6", 6)]
    bad = _row(2)
    bad[-1] = "7"
    path = _write(tmp_path / "train.csv", [quoted, bad])
    with pytest.raises(swag.SwagDataError, match=f"^{path}:5: label '7'"):
        swag.read_examples(path, 4, labelled=True)


def test_rows_with_an_empty_ending_are_read_and_warned_once(tmp_path, capsys):
    rows = [_row(0), _row(1), _row(2)]
    rows[1][9] = ""
    rows[2][7] = "  "
    path = _write(tmp_path / "train.csv", rows)
    assert len(swag.read_examples(path, 4, labelled=True)) == 3
    warnings = [line.split(": warning: ")[1] for line in capsys.readouterr().err.splitlines()]
    assert warnings == [f"{path}: 2 rows have an empty ending, the first line 3 (ending2); "
                        "such a choice is sent2 alone"]


def test_a_header_with_another_number_of_endings_is_one_line(tmp_path):
    header = [name for name in HEADER if name != "ending3"]
    path = _write(tmp_path / "train.csv", [_row(0)[:10] + ["1"]], header)
    with pytest.raises(swag.SwagDataError) as error:
        swag.read_examples(path, 4, labelled=True)
    assert str(error.value) == (f"{path}:1: the header has 3 endings (ending0 to ending2), but "
                                "the model takes 4 per question")


@pytest.mark.parametrize("label", ["4", "-1", "", "two"])
def test_a_label_that_is_no_endings_number_names_its_line(tmp_path, label):
    path = _write(tmp_path / "train.csv", [_row(0), _row(1, label)])
    with pytest.raises(swag.SwagDataError, match=f"{path}:3: label '{label}' is not one of the "
                       "endings' numbers 0 to 3"):
        swag.read_examples(path, 4, labelled=True)


def test_training_needs_the_label_column_and_bytes_that_are_utf8(tmp_path):
    path = _write(tmp_path / "train.csv", [_row(0)[:-1]], HEADER[:-1])
    with pytest.raises(swag.SwagDataError, match=r":1: the header has no label column"):
        swag.read_examples(path, 4, labelled=True)
    broken = tmp_path / "broken.csv"
    broken.write_bytes(open(_write(tmp_path / "ok.csv", [_row(0), _row(1)]), "rb").read()
                       .replace(b"flies", b"fl\xffes", 2))
    with pytest.raises(swag.SwagDataError, match=f"{broken}:2: not UTF-8"):
        swag.read_examples(str(broken), 4, labelled=True)


def test_a_question_becomes_one_packed_pair_per_ending():
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    example = swag.read_examples(os.path.join(SWAG, "train.csv"), 4, labelled=True)[1]
    record = swag.convert_example(example, tokenizer, max_seq_length=16)
    assert np.array(record["input_ids"]).shape == (4, 16)
    assert record["label_ids"] == 1 and record["is_real_example"] == 1
    for choice, text in enumerate(swag.second_segments(example)):
        expected = tokenization.pack_ids(
            tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.context)),
            tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)), max_seq_length=16,
            cls_id=tokenizer.vocab["[CLS]"], sep_id=tokenizer.vocab["[SEP]"])
        for name in ("input_ids", "input_mask", "segment_ids"):
            assert record[name][choice] == expected[name]


def test_scores_and_the_predictions_file(tmp_path):
    examples = swag.read_examples(os.path.join(SWAG, "val.csv"), 4, labelled=True)[:3]
    probabilities = np.array([[0.7, 0.1, 0.1, 0.1], [0.2, 0.1, 0.3, 0.4],
                              [0.1, 0.1, 0.6, 0.2]])
    references = swag.SwagReferences([e.label for e in examples], examples)
    data = swag.SwagData(swag.SwagSettings(num_choices=4), None, SWAG)
    scores = data.score({"predictions": probabilities}, references)
    # Labels 0, 1, 2: the first and the last are chosen right.
    assert scores["eval_accuracy"] == pytest.approx(2 / 3)
    assert scores["eval_loss"] == pytest.approx(-np.mean(np.log([0.7, 0.1, 0.6])))
    data.write_outputs({"predictions": probabilities}, references, str(tmp_path))
    with open(tmp_path / swag.PREDICTIONS_FILE, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "prediction", "ending", "probability0", "probability1",
                       "probability2", "probability3"]
    assert rows[2] == ["1", "3", examples[1].endings[3], "0.200000", "0.100000", "0.300000",
                       "0.400000"]
    assert len(rows) == 4


def test_settings_refuse_fewer_than_two_endings():
    assert swag.SwagSettings().num_choices == 4
    with pytest.raises(ValueError, match="^--num_choices=1 must be at least 2$"):
        swag.SwagSettings(num_choices=1)
