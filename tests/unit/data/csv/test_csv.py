"""Tests for bert_tf.data.csv without a model: files, columns, labels, scores, outputs."""

import os

import numpy as np
import pytest

from bert_tf.data import csv
from bert_tf.data.csv import labels as label_lists
from bert_tf.data.csv import outputs, scoring
from bert_tf.data.csv.reading import LabelledDataError, read_table
from bert_tf.text import tokenization
from tests import helpers

ROOT = helpers.ROOT
VOCAB = os.path.join(ROOT, "tests", "fixtures", "pretraining_vocab.txt")
EXAMPLE = os.path.join(ROOT, "data", "own_data_example")


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def data(config, output_dir=None, max_seq_length=16, model_dir=None):
    return csv.LabelledData(
        config, tokenization.FullTokenizer(VOCAB, do_lower_case=True), max_seq_length,
        output_dir, model_dir)


def test_csv_cells_may_hold_quoted_commas_and_line_breaks(tmp_path):
    path = write(tmp_path / "a.csv",
                 '\ufeffid,text,label\n1,"one, two",x\n\n2,"a ""quote""\nand a line",y\n')
    table = read_table(path, "--train_file")
    assert table.columns == ("id", "text", "label")
    assert table.rows == ((2, ["1", "one, two", "x"]),
                          (4, ["2", 'a "quote"\nand a line', "y"]))


def test_tsv_quotes_are_text_and_other_extensions_need_a_delimiter(tmp_path):
    table = read_table(write(tmp_path / "a.tsv", 'text\tlabel\n"Great" film\tpos\n'), "f")
    assert table.rows == ((2, ['"Great" film', "pos"]),)
    path = write(tmp_path / "a.txt", "text;label\nfine;pos\n")
    with pytest.raises(LabelledDataError, match="give --delimiter: the extension '.txt'"):
        read_table(path, "f")
    assert read_table(path, "f", delimiter=";").rows == ((2, ["fine", "pos"]),)


@pytest.mark.parametrize("text,message", [
    ('text,label\n"Great" film,pos\n',
     "a.csv:2: ',' expected after '\"' \\(a CSV cell with a quote in it is quoted whole"),
    ("text,label\nfine,pos,extra\n", "a.csv:2: 3 columns, but the header has 2"),
    ("text,text\nfine,pos\n", "a.csv:1: the header names text more than once"),
    ("", "a.csv: the file is empty"),
])
def test_a_badly_shaped_csv_names_its_line(tmp_path, text, message):
    with pytest.raises(LabelledDataError, match=message):
        read_table(write(tmp_path / "a.csv", text), "--train_file")


def test_a_missing_column_names_the_file_and_its_columns(tmp_path):
    path = write(tmp_path / "a.csv", "id,body,label\n1,fine,x\n")
    config = csv.LabelledDataConfig(train_file=path)
    with pytest.raises(LabelledDataError) as error:
        data(config).read(["train"])
    assert str(error.value) == (f"{path}:1: no column named 'text' or 'sentence' or 'text_a' "
                                "or 'sentence1': name it with --text_column; its columns are: "
                                "id, body, label")
    config = csv.LabelledDataConfig(train_file=path, text_column="body",
                                              label_column="category")
    with pytest.raises(LabelledDataError) as error:
        data(config).read(["train"])
    assert str(error.value) == (f"{path}:1: no column 'category' (--label_column); its "
                                "columns are: id, body, label")


@pytest.mark.parametrize("problem_type,cell,message", [
    ("single_label", "", "column 'label': empty label cell"),
    ("multi_label", " ", "column 'label': empty label cell: an example with none of the "
                         "labels needs a label of its own, e.g. none"),
    ("multi_label", "a||b", "column 'label': an empty label in 'a||b'"),
    ("regression", "high", "column 'label': 'high' is not a number "
                           "(--problem_type=regression)"),
    ("regression", "nan", "column 'label': 'nan' is not a finite number"),
])
def test_a_bad_label_cell_names_file_line_and_column(tmp_path, problem_type, cell, message):
    path = write(tmp_path / "a.csv", f"text,label\nfine,1\nbad,{cell}\n")
    config = csv.LabelledDataConfig(train_file=path, problem_type=problem_type)
    with pytest.raises(LabelledDataError) as error:
        data(config).read(["train"])
    assert str(error.value).startswith(f"{path}:3: {message}")


def test_a_label_outside_the_list_names_file_line_and_list(tmp_path):
    train = write(tmp_path / "train.csv", "text,label\nfine,pos\nbad,neg\n")
    dev = write(tmp_path / "dev.csv", "text,label\nfine,pos\nmeh,neutral\n")
    config = csv.LabelledDataConfig(train_file=train, eval_file=dev)
    with pytest.raises(LabelledDataError) as error:
        data(config).read(["train", "dev"])
    assert str(error.value) == (f"{dev}:3: label 'neutral' is not one of the 2 labels of "
                                f"{train}'s labels (neg, pos)")
    config = csv.LabelledDataConfig(train_file=train, labels=("pos", "meh"))
    with pytest.raises(LabelledDataError, match=r"train.csv:3: label 'neg' is not one of the "
                                                r"2 labels of --labels \(pos, meh\)"):
        data(config).read(["train"])


def test_labels_sort_as_numbers_when_all_are_integers():
    assert label_lists.sorted_labels(["10", "2", "-1", "2"]) == ["-1", "2", "10"]
    assert label_lists.sorted_labels(["b", "10", "a"]) == ["10", "a", "b"]
    with pytest.raises(LabelledDataError, match="--labels: the label 'a' comes more than once"):
        label_lists.check_label_list(["a", "b", "a"], "--labels")


def test_records_of_each_problem_type_and_the_labels_a_later_run_reads_back(tmp_path):
    train = write(tmp_path / "train.tsv", "sentence1\tsentence2\tlabel\tid\n"
                                          "the man\tthe dog\tb|a\tx1\nthe dog\tthe\tc\tx2\n")
    test = write(tmp_path / "test.tsv", "sentence1\tsentence2\nthe man\tthe\n")
    config = csv.LabelledDataConfig(train_file=train, predict_file=test,
                                              problem_type="multi_label")
    multi = data(config)
    multi.read(["train", "test"])
    assert multi.labels() == ["a", "b", "c"] and multi.sentence_pairs
    records = multi.records("train")
    assert records[0]["label_ids"] == [[1.0], [1.0], [0.0]]
    assert records[1]["label_ids"] == [[0.0], [0.0], [1.0]]
    assert multi.records("test")[0]["label_ids"] == [[0.0]] * 3
    references = multi.references("test")
    assert references.targets is None and references.columns == {
        "text": "sentence1", "text_b": "sentence2", "label": "label", "id": None}
    assert [e.guid for e in multi.references("train").examples] == ["x1", "x2"]
    assert [e.guid for e in references.examples] == ["2"]
    multi.write_run_files(str(tmp_path))
    later = data(csv.LabelledDataConfig(predict_file=test,
                                                  problem_type="multi_label"),
                 output_dir=str(tmp_path))
    later.read(["test"])
    assert later.labels() == ["a", "b", "c"]
    assert later.task_settings() == {"problem_type": "multi_label", "labels": ["a", "b", "c"]}

    regression = data(csv.LabelledDataConfig(
        train_file=write(tmp_path / "r.csv", "text,label\nthe man,2.5\n"),
        problem_type="regression"))
    regression.read(["train"])
    assert regression.records("train")[0]["label_ids"] == 2.5 and regression.labels() == []


def test_long_texts_are_cut_and_counted(tmp_path):
    path = write(tmp_path / "a.csv", "text,label\n" + "the man " * 10 + ",x\nthe,y\n")
    config = csv.LabelledDataConfig(train_file=path, eval_file=path)
    cut = data(config, max_seq_length=8)
    cut.read(["train", "dev"])
    assert sum(cut.records("dev")[0]["input_mask"]) == 8
    assert cut.references("dev").truncated == 1


def test_the_labels_of_the_run_folder_a_model_comes_from_are_read_last(tmp_path):
    path = write(tmp_path / "a.csv", "text\nfine\n")
    (tmp_path / "model").mkdir()
    label_lists.write_label_file(str(tmp_path / "model"), ["neg", "pos", "mixed"])
    later = data(csv.LabelledDataConfig(predict_file=path), output_dir=str(tmp_path / "out"),
                 model_dir=str(tmp_path / "model"))
    later.read(["test"])
    assert later.labels() == ["neg", "pos", "mixed"]


def test_no_labels_at_hand_says_where_they_come_from(tmp_path):
    path = write(tmp_path / "a.csv", "text\nfine\n")
    config = csv.LabelledDataConfig(predict_file=path)
    with pytest.raises(LabelledDataError, match="no labels: give --labels, --labels_file or "
                                                "--do_train with --train_file"):
        data(config, output_dir=str(tmp_path)).read(["test"])


def test_multi_label_scores_by_hand():
    probabilities = np.array([[0.9, 0.2, 0.6], [0.1, 0.7, 0.4], [0.8, 0.8, 0.1]])
    targets = np.array([[1, 0, 1], [0, 1, 1], [0, 1, 0]])
    metrics = scoring.multi_label_metrics(probabilities, targets, ["a", "b", "c"], 0.5)
    # Predicted: {a, c}, {b}, {a, b}: 4 hits of 5 predicted, of 5 true.
    assert metrics["eval_micro_precision"] == pytest.approx(4 / 5)
    assert metrics["eval_micro_recall"] == pytest.approx(4 / 5)
    assert metrics["eval_micro_f1"] == pytest.approx(4 / 5)
    assert metrics["eval_a_precision"] == 0.5 and metrics["eval_a_recall"] == 1.0
    assert metrics["eval_c_f1"] == pytest.approx(2 / 3)
    assert metrics["eval_macro_f1"] == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert metrics["eval_exact_match"] == pytest.approx(1 / 3)
    expected_loss = -np.mean(np.where(targets, np.log(probabilities),
                                      np.log(1 - probabilities)))
    assert metrics["eval_loss"] == pytest.approx(expected_loss)


def test_single_label_scores_each_label():
    probabilities = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])
    metrics = scoring.single_label_metrics(probabilities, [0, 1, 2], ["x", "y", "z"])
    assert metrics["eval_accuracy"] == pytest.approx(2 / 3)
    assert (metrics["eval_x_precision"], metrics["eval_x_recall"]) == (0.5, 1.0)
    assert metrics["eval_y_f1"] == 0.0 and metrics["eval_z_f1"] == 1.0
    assert metrics["eval_macro_f1"] == pytest.approx((2 / 3 + 0 + 1) / 3)


def test_the_predictions_file_names_the_labels(tmp_path):
    examples = [csv.Example("a1", 2, "one, two"), csv.Example("a2", 3, "x")]
    references = csv.LabelledReferences(
        "multi_label", ["p", "q"], examples, None,
        {"text": "body", "text_b": None, "label": "tags", "id": "key"}, ",", threshold=0.5,
        separator="|")
    outputs.write_outputs(np.array([[0.9, 0.6], [0.1, 0.2]]), references, str(tmp_path))
    assert (tmp_path / "predictions.csv").read_text() == (
        'key,body,tags,p,q\na1,"one, two",p|q,0.900000,0.600000\na2,x,,0.100000,0.200000\n')
    assert (tmp_path / "test_results.tsv").read_text() == "0.9\t0.6\n0.1\t0.2\n"


def test_the_shipped_example_has_five_labels():
    example = data(csv.LabelledDataConfig(
        train_file=os.path.join(EXAMPLE, "train.csv"),
        eval_file=os.path.join(EXAMPLE, "dev.csv"),
        predict_file=os.path.join(EXAMPLE, "test.csv")))
    example.read(["train", "dev", "test"])
    assert example.labels() == ["account", "billing", "bug", "feature", "praise"]


def test_an_action_without_its_file_names_the_flag():
    with pytest.raises(LabelledDataError, match=r"--do_eval \(or --eval_every_steps\) needs "
                                                "--eval_file"):
        data(csv.LabelledDataConfig()).read(["dev"])


def test_a_folder_given_for_a_file_is_named(tmp_path):
    with pytest.raises(LabelledDataError) as error:
        read_table(str(tmp_path), "--train_file")
    assert str(error.value) == f"--train_file={tmp_path} is a folder; give a .csv or .tsv file"


@pytest.mark.parametrize("problem_type,cells,labels,message", [
    ("single_label", ["bug", "billing|bug"], None,
     "a.csv:3: column 'label': 'billing|bug' holds '|', which separates the labels of a row "
     "with several: give --problem_type=multi_label"),
    ("multi_label", ["bug", "account,praise"], None,
     "a.csv:3: column 'label': 'account,praise': no cell of the file holds "
     "--label_separator=|, but this one holds ',': give --label_separator=, (or, for labels "
     "that hold it, --labels_file)"),
    ("multi_label", ["bug;praise", "account"], None,
     "a.csv:2: column 'label': 'bug;praise': no cell of the file holds --label_separator=|, "
     "but this one holds ';': give --label_separator=;"),
    ("multi_label", ["bug", "a|b"], ("bug", "a|b"),
     "--labels: the label 'a|b' holds --label_separator=|, which separates a cell's labels: "
     "rename it, or give another --label_separator"),
    # A label that --labels names is that label, whatever it holds.
    ("multi_label", ["bug", "b,c"], ("bug", "b,c"), None),
    ("single_label", ["bug", "b|c"], ("bug", "b|c"), None),
])
def test_label_cells_of_another_problem_type_or_separator_name_the_flag(
        tmp_path, problem_type, cells, labels, message):
    path = write(tmp_path / "a.csv", "text,label\n" + "".join(
        f'fine,"{cell}"\n' for cell in cells))
    labelled = data(csv.LabelledDataConfig(train_file=path, problem_type=problem_type,
                                           labels=labels))
    if message is None:
        labelled.read(["train"])
        assert labelled.labels() == list(labels)
        return
    with pytest.raises(LabelledDataError) as error:
        labelled.read(["train"])
    assert str(error.value).replace(str(tmp_path) + os.sep, "").startswith(message)


@pytest.mark.parametrize("flags,message", [
    ({"text_column": "body", "text_b_column": "body"},
     "--text_column and --text_b_column both name the column 'body'"),
    ({"text_column": "label"}, "--text_column and --label_column both name the column 'label'"),
    ({"text_column": "body", "label_column": "body"},
     "--text_column and --label_column both name the column 'body'"),
])
def test_one_column_named_by_two_flags_is_refused(tmp_path, flags, message):
    path = write(tmp_path / "a.csv", "body,label\nfine,x\n")
    with pytest.raises(LabelledDataError) as error:
        data(csv.LabelledDataConfig(train_file=path, **flags)).read(["train"])
    assert str(error.value) == f"{path}:1: {message}: give each its own column"


def test_a_label_column_with_a_value_per_row_is_no_classifications(tmp_path):
    rows = "".join(f"{i},the man\n" for i in range(25))
    path = write(tmp_path / "a.csv", "label,text\n" + rows)
    with pytest.raises(LabelledDataError) as error:
        data(csv.LabelledDataConfig(train_file=path)).read(["train"])
    assert str(error.value) == (
        f"{path}: column 'label' holds a different label in each of its 25 rows, which would "
        "train one class per row: give the labels' column as --label_column (or, for a number "
        "per row, --problem_type=regression)")
    # A regression, or a handful of rows, is judged no further.
    regression = data(csv.LabelledDataConfig(train_file=path, problem_type="regression"))
    regression.read(["train"])
    few = write(tmp_path / "few.csv", "label,text\n" + "".join(rows.splitlines(True)[:5]))
    data(csv.LabelledDataConfig(train_file=few)).read(["train"])


def test_empty_texts_are_warned_of_in_one_line(tmp_path, capsys):
    rows = "".join(f"{'' if i % 2 else 'the man'},x\n" for i in range(14))
    path = write(tmp_path / "a.csv", "text,label\n" + rows)
    data(csv.LabelledDataConfig(train_file=path)).read(["train"])
    warnings = capsys.readouterr().err.splitlines()
    assert [line.split(": warning: ", 1)[1] for line in warnings] == [
        f"{path}:3: 7 rows have an empty text (lines 3, 5, 7, 9, 11 ...); the model reads no "
        "text there"]


def test_a_regression_dev_set_of_one_value_cannot_be_scored(tmp_path):
    train = write(tmp_path / "train.csv", "text,score\nthe man,1.5\nthe dog,2\n")
    dev = write(tmp_path / "dev.csv", "text,score\nthe man,2\nthe dog,2.0\n")
    regression = data(csv.LabelledDataConfig(train_file=train, eval_file=dev,
                                             label_column="score", problem_type="regression"))
    regression.read(["train", "dev"])
    regression.check_scorable("train")
    with pytest.raises(LabelledDataError) as error:
        regression.check_scorable("dev")
    assert str(error.value) == (f"{dev}: every value of column 'score' is 2: pearson and "
                                "spearman, which score a regression, are undefined without "
                                "variation; give a dev file whose values vary")


def test_a_file_for_an_action_the_run_does_not_take_is_refused(tmp_path):
    path = write(tmp_path / "a.csv", "text,label\nfine,x\n")
    both = data(csv.LabelledDataConfig(train_file=path, eval_file=path))
    both.check_files_read(("train", "dev"))
    with pytest.raises(LabelledDataError) as error:
        both.check_files_read(("train",))
    assert str(error.value) == (f"--eval_file={path} is read by --do_eval (or "
                                "--eval_every_steps) alone: add it, or leave --eval_file out")


def test_labels_named_like_the_predictions_columns_keep_the_header_unique(tmp_path):
    examples = [csv.Example("a1", 2, "one")]
    references = csv.LabelledReferences(
        "single_label", ["id", "other", "text"], examples, None,
        {"text": "text", "text_b": None, "label": "label", "id": None}, ",")
    outputs.write_outputs(np.array([[0.2, 0.3, 0.5]]), references, str(tmp_path))
    assert (tmp_path / "predictions.csv").read_text().splitlines() == [
        "id,text,label,probability_id,probability_other,probability_text",
        "a1,one,text,0.200000,0.300000,0.500000"]
