"""Tests for bert_tf.glue: processors on fixtures, errors, metrics, writers, TFDS."""

import logging
import math
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from bert_tf import glue
from bert_tf.glue import InputExample

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "glue")


def _dir(name):
    """The fixture folder of a task."""
    return os.path.join(FIXTURES, name)


def _write(tmp_path, name, text):
    """Writes a UTF-8 text file under tmp_path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# Every split of every task: (task, folder, split, number of examples, first example).
SPLITS = [
    ("cola", "CoLA", "train", 3, InputExample(
        "train-0", "Our friends won't buy this analysis, let alone the next one we propose.",
        None, "1")),
    ("cola", "CoLA", "dev", 2, InputExample(
        "dev-0", "The weights made the rope stretch over the pulley.", None, "1")),
    ("cola", "CoLA", "test", 2, InputExample("test-0", "Bill whistled past the house.")),
    ("sst-2", "SST-2", "train", 2, InputExample(
        "train-1", "hide new secretions from the parental units ", None, "0")),
    ("sst-2", "SST-2", "dev", 2, InputExample(
        "dev-1", "it 's a charming and often affecting journey . ", None, "1")),
    ("sst-2", "SST-2", "test", 2, InputExample(
        "test-0", "uneasy mishmash of styles and genres .")),
    ("mrpc", "MRPC", "train", 2, InputExample(
        "train-1",
        'Amrozi accused his brother , whom he called " the witness " , of deliberately '
        "distorting his evidence .",
        'Referring to him as only " the witness " , Amrozi accused his brother of deliberately '
        "distorting his evidence .", "1")),
    ("mrpc", "MRPC", "dev", 1, InputExample(
        "dev-1", "He said the foodservice pie business doesn 't fit .",
        '" The foodservice pie business does not fit our strategy .', "1")),
    ("mrpc", "MRPC", "test", 2, InputExample(
        "test-0", "PCCW 's chief operating officer will report to Mr So .",
        "Current Chief Operating Officer Mike Butcher will report to So .")),
    ("qqp", "QQP", "train", 3, InputExample(
        "train-360472", "What causes stool color to change to yellow?",
        "What can cause stool to come out as little balls?", "0")),
    ("qqp", "QQP", "dev", 1, InputExample(
        "dev-333602", "What, according to you, is the best Disney film?",
        "What is the best Disney movie?", "1")),
    ("qqp", "QQP", "test", 2, InputExample(
        "test-0", "Would the idea of Trump and Putin in bed together scare you?",
        "Do you think that if Donald Trump were elected President, he would be impeached?")),
    ("qnli", "QNLI", "train", 2, InputExample(
        "train-0", "When did the third Digimon series begin?",
        "Unlike the two seasons before it, the third season is darker.", "not_entailment")),
    ("qnli", "QNLI", "dev", 1, InputExample(
        "dev-0", "What came into force after the new constitution was herald?",
        "As of that day, the new constitution heralding the Second Republic came into force.",
        "entailment")),
    ("qnli", "QNLI", "test", 1, InputExample(
        "test-0", "What organization is devoted to Jihad against Israel?",
        'The Muslim Brotherhood took a "quiescent" stance towards Israel.')),
    ("rte", "RTE", "train", 2, InputExample(
        "train-0", "No Weapons of Mass Destruction Found in Iraq Yet.",
        "Weapons of Mass Destruction Found in Iraq.", "not_entailment")),
    ("rte", "RTE", "dev", 1, InputExample(
        "dev-0", "Dana Reeve, the widow of the actor Christopher Reeve, has died of lung cancer.",
        "Christopher Reeve had an accident.", "not_entailment")),
    ("rte", "RTE", "test", 1, InputExample(
        "test-0", "Mangla was summoned after Madhumita's sister Nidhi Shukla made a complaint.",
        "Shukla is related to Mangla.")),
    ("wnli", "WNLI", "train", 2, InputExample(
        "train-0", "I stuck a pin through a carrot. When I pulled the pin out, it had a hole.",
        "The carrot had a hole.", "1")),
    ("wnli", "WNLI", "dev", 1, InputExample(
        "dev-0", "The drain is clogged with hair. It has to be cleaned.",
        "The hair has to be cleaned.", "0")),
    ("wnli", "WNLI", "test", 1, InputExample(
        "test-0", "Horses ran away when they came in sight.",
        "Horses ran away when the trains came.")),
    ("sts-b", "STS-B", "train", 2, InputExample(
        "train-0", "A plane is taking off.", "An air plane is taking off.", 5.0)),
    ("sts-b", "STS-B", "dev", 1, InputExample(
        "dev-0", "A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.", 5.0)),
    ("sts-b", "STS-B", "test", 1, InputExample(
        "test-0", "A girl is styling her hair.", "A girl is brushing her hair.")),
    ("mnli", "MNLI", "train", 2, InputExample(
        "train-0", "Conceptually cream skimming has two basic dimensions.",
        "Product and geography are what make cream skimming work.", "neutral")),
    ("mnli", "MNLI", "dev_matched", 1, InputExample(
        "dev_matched-0", "The new rights are nice enough",
        "Everyone really likes the newest benefits", "neutral")),
    ("mnli", "MNLI", "dev_mismatched", 1, InputExample(
        "dev_mismatched-0", "Your contribution helped make it possible.",
        "Your contributions were of no help.", "contradiction")),
    ("mnli", "MNLI", "test_matched", 1, InputExample(
        "test_matched-0", "Hierbas, ans seco, ans dulce, and frigola.",
        "Hierbas is a name worth looking out for.")),
    ("mnli", "MNLI", "test_mismatched", 2, InputExample(
        "test_mismatched-0", "What have you decided, what are you going to do?",
        "So what's your decision?")),
    ("xnli", "XNLI", "train", 2, InputExample(
        "train-1", "从 概念 上 看 , 奶油 收入 有 两 个 基本 方面 产品 和 地理 .",
        "产品 和 地理 是 什么 使 奶油 抹 霜 工作 .", "neutral")),
    ("xnli", "XNLI", "dev", 2, InputExample(
        "dev-2", "他 说 , 妈妈 , 我 回来 了 .", "他 一 句 话 也 没 说 .", "contradiction")),
    ("ax", "diagnostic", "test", 3, InputExample(
        "test-0", "The cat sat on the mat.", "The cat did not sit on the mat.")),
]


@pytest.mark.parametrize("task,folder,split,count,first", SPLITS,
                         ids=[f"{s[0]}-{s[2]}" for s in SPLITS])
def test_every_processor_reads_its_fixture(task, folder, split, count, first):
    processor = glue.get_processor(task)
    examples = processor.get_examples(_dir(folder), split)
    assert len(examples) == count
    assert examples[0] == first
    assert len({e.guid for e in examples}) == count
    if split.startswith("test"):
        assert all(e.label is None for e in examples)
    elif processor.is_regression:
        assert all(isinstance(e.label, float) for e in examples)
    else:
        assert all(e.label in processor.get_labels() for e in examples)


def test_the_split_getters_and_submission_file_names():
    expected = {"cola": "CoLA.tsv", "sst-2": "SST-2.tsv", "mrpc": "MRPC.tsv", "qqp": "QQP.tsv",
                "qnli": "QNLI.tsv", "rte": "RTE.tsv", "wnli": "WNLI.tsv",
                "sts-b": "STS-B.tsv", "ax": "AX.tsv"}
    for task, name in expected.items():
        assert glue.get_processor(task).submission_file() == name
    mnli = glue.get_processor("MNLI")
    assert mnli.eval_splits == ("dev_matched", "dev_mismatched")
    assert mnli.predict_splits == ("test_matched", "test_mismatched")
    assert [mnli.submission_file(s) for s in mnli.predict_splits] == ["MNLI-m.tsv",
                                                                      "MNLI-mm.tsv"]
    assert mnli.get_dev_examples(_dir("MNLI"))[0].guid == "dev_matched-0"
    mismatched = mnli.get_test_examples(_dir("MNLI"), "test_mismatched")
    assert [e.guid for e in mismatched] == ["test_mismatched-0", "test_mismatched-1"]
    with pytest.raises(ValueError, match="no eval split 'test_matched'.*dev_mismatched"):
        mnli.get_dev_examples(_dir("MNLI"), "test_matched")
    assert len(glue.get_processor("mrpc").get_train_examples(_dir("MRPC"))) == 2


def test_cola_headerless_files_keep_their_first_row_and_quotes_stay_literal():
    train = glue.get_processor("cola").get_train_examples(_dir("CoLA"))
    # An unbalanced quote would swallow the next row with quoting on.
    assert [e.text_a for e in train[1:]] == [
        'He said "hi to the the.', "The sailors rode the breeze clear of the rocks."]
    assert [e.label for e in train] == ["1", "0", "1"]
    # dev.tsv ends without a newline, as the real one does.
    assert glue.get_processor("cola").get_dev_examples(_dir("CoLA"))[-1].label == "0"


def test_mrpc_header_with_byte_order_mark_is_recognised():
    with open(os.path.join(_dir("MRPC"), "train.tsv"), "rb") as f:
        assert f.read(3) == b"\xef\xbb\xbf"
    labels = [e.label for e in glue.get_processor("mrpc").get_train_examples(_dir("MRPC"))]
    assert labels == ["1", "0"]


def test_qqp_skips_and_counts_rows_with_missing_fields(caplog):
    with caplog.at_level(logging.WARNING):
        train = glue.get_processor("qqp").get_train_examples(_dir("QQP"))
    assert [e.guid for e in train] == ["train-360472", "train-223629", "train-402610"]
    # Doubled quotes are literal text, as QUOTE_NONE reads them.
    assert train[1].text_a == '"Is ""rightness"" just a judgment of an observer?"'
    warning = "\n".join(r.getMessage() for r in caplog.records)
    assert "qqp: skipped 2 malformed row(s)" in warning and "lines 3, 4" in warning


def test_xnli_reads_one_language_and_renames_contradictory():
    zh = glue.get_processor("xnli")
    assert [e.label for e in zh.get_train_examples(_dir("XNLI"))] == ["neutral", "contradiction"]
    assert [e.guid for e in zh.get_dev_examples(_dir("XNLI"))] == ["dev-2", "dev-4"]
    german = glue.get_processor("xnli", language="de")
    assert [e.label for e in german.get_dev_examples(_dir("XNLI"))] == ["entailment"]
    with pytest.raises(FileNotFoundError, match="multinli.train.de.tsv"):
        german.get_train_examples(_dir("XNLI"))
    with pytest.raises(ValueError, match="no predict split"):
        zh.get_test_examples(_dir("XNLI"))


def test_ax_is_predict_only_with_mnli_labels():
    ax = glue.get_processor("AX")
    assert ax.get_labels() == glue.get_processor("mnli").get_labels()
    assert ax.eval_splits == () and ax.predict_splits == ("test",)
    assert ax.get_test_examples(_dir("diagnostic"))[2].text_a == 'He said "hi and left.'
    with pytest.raises(ValueError, match="ax has no 'train' split"):
        ax.get_train_examples(_dir("diagnostic"))
    with pytest.raises(ValueError, match="ax has no eval split"):
        ax.get_dev_examples(_dir("diagnostic"))


def test_task_names_are_case_and_dash_insensitive():
    assert glue.get_processor("SST-2").name == "sst-2"
    assert glue.get_processor("sst2").name == "sst-2"
    assert glue.get_processor("STS-B").is_regression
    assert glue.get_processor("glue/mnli_mismatched").name == "mnli"
    assert glue.get_processor("glue/stsb:2.0.0").name == "sts-b"
    assert glue.get_processor("xnli").language == "zh"


# Errors.


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(ValueError, match="Unknown task 'mrcp'") as error:
        glue.get_processor("mrcp")
    for name in ("cola", "sst-2", "mrpc", "qqp", "sts-b", "mnli", "qnli", "rte", "wnli",
                 "xnli", "ax"):
        assert name in str(error.value)
    with pytest.raises(ValueError, match="glue/mrpc"):
        glue.get_processor("glue/squad")
    with pytest.raises(ValueError, match="xnli option"):
        glue.get_processor("mnli", language="de")


def test_missing_file_names_the_task_and_the_path(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        glue.get_processor("rte").get_train_examples(str(tmp_path))
    assert "rte" in str(error.value)
    assert str(tmp_path / "train.tsv") in str(error.value)


def test_wrong_column_count_gives_file_and_line(tmp_path):
    _write(tmp_path, "train.tsv", "index\tsentence1\tsentence2\tlabel\n"
           "0\ta\tb\tentailment\n"
           "1\ta\tstray\ttab\tnot_entailment\n")
    with pytest.raises(glue.GlueDataError, match=r"train\.tsv:3: 5 columns.* have 4"):
        glue.get_processor("rte").get_train_examples(str(tmp_path))
    # A header-less CoLA file takes its width from the layout, not the first row.
    _write(tmp_path, "dev.tsv", "gj04\t1\t\tOne.\tTwo.\n")
    with pytest.raises(glue.GlueDataError, match=r"dev\.tsv:1: 5 columns.* have 4"):
        glue.get_processor("cola").get_dev_examples(str(tmp_path))


def test_unknown_label_gives_file_and_line(tmp_path):
    _write(tmp_path, "dev.tsv", "index\tsentence1\tsentence2\tlabel\n"
           "0\ta\tb\t1\n"
           "1\ta\tb\tentailed\n")
    with pytest.raises(glue.GlueDataError, match=r"dev\.tsv:3: unknown label 'entailed'"):
        glue.get_processor("wnli").get_dev_examples(str(tmp_path))
    _write(tmp_path, "train.tsv", "index\tg\tf\ty\to\ts1\ts2\tsentence1\tsentence2\tscore\n"
           "0\tg\tf\ty\to\ts1\ts2\ta\tb\t5.5\n")
    with pytest.raises(glue.GlueDataError, match=r"train\.tsv:2: unknown label '5.5'.*\[0, 5\]"):
        glue.get_processor("sts-b").get_train_examples(str(tmp_path))


def test_line_endings_and_stray_carriage_return(tmp_path):
    (tmp_path / "dev.tsv").write_bytes(b"sentence\tlabel\r\none \t1\r\n\r\ntwo\t0")
    examples = glue.get_processor("sst-2").get_dev_examples(str(tmp_path))
    assert [(e.text_a, e.label) for e in examples] == [("one ", "1"), ("two", "0")]
    # A carriage return inside a row is an error, not silently dropped.
    (tmp_path / "test.tsv").write_bytes(b"index\tsentence\n0\tone\n1\ttw\ro\n")
    with pytest.raises(glue.GlueDataError, match=r"test\.tsv:3:"):
        glue.get_processor("sst-2").get_test_examples(str(tmp_path))


def test_reading_in_small_chunks_gives_the_same_examples(monkeypatch):
    # Chunks of 5 bytes split rows, the byte-order mark and Chinese characters.
    expected = {task: glue.get_processor(task).get_train_examples(_dir(folder))
                for task, folder in (("mrpc", "MRPC"), ("xnli", "XNLI"), ("qqp", "QQP"))}
    monkeypatch.setattr(glue, "_READ_CHUNK_BYTES", 5)
    for task, folder in (("mrpc", "MRPC"), ("xnli", "XNLI"), ("qqp", "QQP")):
        assert glue.get_processor(task).get_train_examples(_dir(folder)) == expected[task]


# Metrics.


def test_metrics_match_hand_computed_values():
    predictions = [1, 1, 0, 0, 1]
    labels = [1, 0, 0, 0, 1]
    # TP 2, FP 1, TN 2, FN 0.
    assert glue.accuracy(predictions, labels) == pytest.approx(0.8)
    assert glue.f1_score(predictions, labels) == pytest.approx(2 * 2 / (2 * 2 + 1 + 0))
    assert glue.matthews_corrcoef(predictions, labels) == pytest.approx(
        (2 * 2 - 1 * 0) / math.sqrt(3 * 2 * 3 * 2))
    # Means 2 and 7/3: covariance 3, variances 2 and 42/9.
    assert glue.pearson_corrcoef([1.0, 2.0, 3.0], [1.0, 2.0, 4.0]) == pytest.approx(
        3 / math.sqrt(2 * 42 / 9))


def test_spearman_gives_ties_their_average_rank():
    # Prediction ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: r = 4.5 / sqrt(4.5 * 5).
    assert glue.spearman_corrcoef([0.1, 0.7, 0.7, 3.0], [1, 2, 3, 4]) == pytest.approx(
        4.5 / math.sqrt(4.5 * 5))
    assert glue.spearman_corrcoef([3, 1, 2], [30, 10, 20]) == pytest.approx(1.0)


def test_degenerate_inputs():
    assert glue.matthews_corrcoef([1, 1, 1, 1], [1, 0, 1, 0]) == 0.0
    assert glue.matthews_corrcoef([0, 0, 0], [0, 0, 0]) == 0.0
    assert glue.f1_score([0, 0], [0, 0]) == 0.0
    assert math.isnan(glue.pearson_corrcoef([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="no real examples"):
        glue.accuracy([1, 0], [1, 0], is_real_example=[0, 0])
    with pytest.raises(ValueError, match="equal length"):
        glue.accuracy([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="only 0 and 1"):
        glue.accuracy([1, 0], [1, 0], is_real_example=[1, 0.5])


def test_three_class_mcc_equals_its_definition():
    predictions = np.array([0, 1, 2, 2, 1, 0, 0])
    labels = np.array([0, 1, 2, 1, 1, 2, 0])
    confusion = np.zeros((3, 3))
    np.add.at(confusion, (labels, predictions), 1)
    t, p, c, s = confusion.sum(1), confusion.sum(0), np.trace(confusion), confusion.sum()
    expected = (c * s - t @ p) / math.sqrt((s * s - p @ p) * (s * s - t @ t))
    assert glue.matthews_corrcoef(predictions, labels) == pytest.approx(expected)


@pytest.mark.parametrize("metric", [glue.accuracy, glue.f1_score, glue.matthews_corrcoef,
                                    glue.pearson_corrcoef, glue.spearman_corrcoef])
def test_padding_examples_change_no_metric(metric):
    predictions = np.array([1, 0, 1, 1, 0, 1])
    labels = np.array([1, 0, 0, 1, 1, 1])
    # Padding that would move every metric if it counted.
    padded_predictions = np.concatenate([predictions, [1, 1, 0]])
    padded_labels = np.concatenate([labels, [0, 0, 1]])
    mask = np.array([1] * 6 + [0] * 3)
    assert metric(padded_predictions, padded_labels, mask) == pytest.approx(
        metric(predictions, labels))
    assert metric(padded_predictions, padded_labels) != pytest.approx(
        metric(predictions, labels))


def test_compute_metrics_reports_each_tasks_glue_metrics():
    probabilities = np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6], [0.7, 0.3]])
    labels = np.array([1, 0, 0, 0])
    assert set(glue.compute_metrics("CoLA", probabilities, labels)) == {"mcc"}
    mrpc = glue.compute_metrics("mrpc", probabilities, labels)
    assert mrpc == pytest.approx({"f1": 2 / 3, "accuracy": 0.75})
    assert set(glue.compute_metrics("qqp", probabilities, labels)) == {"f1", "accuracy"}
    for task in ("sst-2", "qnli", "rte", "wnli", "mnli", "xnli"):
        assert set(glue.compute_metrics(task, probabilities, labels)) == {"accuracy"}
    scores = glue.compute_metrics("sts-b", [[1.0], [2.0], [2.5], [4.0], [9.0]],
                                  [1.0, 2.0, 3.0, 4.0, 0.0], is_real_example=[1, 1, 1, 1, 0])
    assert set(scores) == {"pearson", "spearman"}
    assert scores["spearman"] == pytest.approx(1.0)


# Writers.


def test_write_test_results_writes_real_rows_as_the_original(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = np.array([[0.25, 0.75], [0.5, 0.5], [0.125, 0.875]], np.float32)
    assert glue.write_test_results(path, probabilities, is_real_example=[1, 1, 0]) == 2
    assert open(path).read() == "0.25\t0.75\n0.5\t0.5\n"
    assert os.listdir(tmp_path) == ["test_results.tsv"]


def test_write_test_results_failure_leaves_no_file(tmp_path):
    path = tmp_path / "test_results.tsv"
    # The third row is short: the writer has written two rows when it fails.
    with pytest.raises(ValueError, match="row 3"):
        glue.write_test_results(str(path), [[0.1, 0.9], [0.2, 0.8], [1.0]])
    assert os.listdir(tmp_path) == []
    path.write_text("previous run\n")
    with pytest.raises(ValueError, match="row 3"):
        glue.write_test_results(str(path), [[0.1, 0.9], [0.2, 0.8], [1.0]])
    assert os.listdir(tmp_path) == ["test_results.tsv"]
    assert path.read_text() == "previous run\n"


def test_write_submission_classification(tmp_path):
    examples = glue.get_processor("mnli").get_test_examples(_dir("MNLI"), "test_mismatched")
    path = str(tmp_path / "MNLI-mm.tsv")
    probabilities = [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]]
    assert glue.write_submission(path, "mnli", examples, probabilities, [1, 1, 0]) == 2
    assert open(path).read() == "index\tprediction\n0\tneutral\n1\tcontradiction\n"
    path = str(tmp_path / "MRPC.tsv")
    examples = glue.get_processor("mrpc").get_test_examples(_dir("MRPC"))
    glue.write_submission(path, "MRPC", examples, np.array([1, 0]))
    assert open(path).read() == "index\tprediction\n0\t1\n1\t0\n"


def test_write_submission_clips_sts_b_scores(tmp_path):
    examples = [InputExample("test-0", "a", "b"), InputExample("test-1", "c", "d"),
                InputExample("test-2", "e", "f")]
    path = str(tmp_path / "STS-B.tsv")
    glue.write_submission(path, "sts-b", examples, np.array([[5.7], [-0.2], [3.25]]))
    assert open(path).read() == "index\tprediction\n0\t5.000\n1\t0.000\n2\t3.250\n"


def test_write_submission_failure_leaves_no_file(tmp_path):
    examples = [InputExample("test-0", "a"), InputExample("test-1", "b"),
                InputExample("oops", "c")]
    with pytest.raises(ValueError, match="'oops' does not end in a test index"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples, [1, 0, 1])
    with pytest.raises(ValueError, match="class id 2 is out of range"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples[:2], [1, 2])
    with pytest.raises(ValueError, match="3 real predictions for 2 examples"):
        glue.write_submission(str(tmp_path / "SST-2.tsv"), "sst-2", examples[:2], [1, 0, 1])
    assert os.listdir(tmp_path) == []


# TFDS. tfds.testing.mock_data patches TFDS so that nothing is downloaded or
# read: with MockPolicy.USE_CODE, the dataset's info (features, label names)
# comes from the builder's code in the installed tensorflow_datasets, and the
# examples are random values of that feature spec (as_dataset_fn replaces them
# with chosen records). The default policy, AUTO, ends up the same offline:
# tensorflow_datasets 4.9.10 ships no metadata files for glue, so AUTO falls
# back to USE_CODE.


@pytest.mark.parametrize("config,task", [("mrpc", "mrpc"), ("sst2", "sst-2"),
                                         ("stsb", "sts-b"), ("qnli", "qnli")])
def test_tfds_random_mock_examples_map_onto_the_processor(config, task):
    processor = glue.get_processor(task)
    with tfds.testing.mock_data(num_examples=4, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = glue.examples_from_tfds(f"glue/{config}", "train")
        records = list(tfds.as_numpy(tfds.load(f"glue/{config}", split="train")))
    assert len(examples) == 4
    key_a, key_b = processor.tfds_text_keys
    for example, record in zip(examples, records, strict=True):
        assert example.guid == f"train-{record['idx']}"
        assert example.text_a == record[key_a].decode("utf-8")
        assert example.text_b == (record[key_b].decode("utf-8") if key_b else None)
        if processor.is_regression:
            assert example.label == pytest.approx(float(record["label"]))
        else:
            # Every task here orders TFDS's names as its own "0"/"1" or labels.
            assert example.label == processor.get_labels()[record["label"]]


def _records(features):
    """An as_dataset_fn that yields the given feature dicts."""
    def as_dataset(self, *args, **kwargs):
        return tf.data.Dataset.from_tensor_slices(
            {key: [f[key] for f in features] for key in features[0]})
    return as_dataset


def test_tfds_label_names_map_through_names_not_ids():
    # TFDS orders MNLI entailment, neutral, contradiction; the processor
    # orders contradiction, entailment, neutral.
    records = [{"premise": "p0", "hypothesis": "h0", "label": np.int64(0), "idx": np.int32(7)},
               {"premise": "p1", "hypothesis": "h1", "label": np.int64(2), "idx": np.int32(9)}]
    with tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE,
                                as_dataset_fn=_records(records)):
        examples = glue.examples_from_tfds("glue/mnli", "validation_matched")
    assert examples == [InputExample("validation_matched-7", "p0", "h0", "entailment"),
                        InputExample("validation_matched-9", "p1", "h1", "contradiction")]


def test_tfds_test_split_has_no_labels_and_feeds_a_submission(tmp_path):
    records = [{"sentence1": "a", "sentence2": "b", "label": np.int64(-1), "idx": np.int32(1)},
               {"sentence1": "c", "sentence2": "d", "label": np.int64(-1), "idx": np.int32(0)}]
    with tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE,
                                as_dataset_fn=_records(records)):
        examples = glue.examples_from_tfds("glue/mrpc", "test")
    assert [(e.guid, e.label) for e in examples] == [("test-1", None), ("test-0", None)]
    path = str(tmp_path / "MRPC.tsv")
    glue.write_submission(path, "mrpc", examples, [[0.3, 0.7], [0.8, 0.2]])
    assert open(path).read() == "index\tprediction\n1\t1\n0\t0\n"
