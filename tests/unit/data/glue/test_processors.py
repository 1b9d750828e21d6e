"""Tests for bert_tf.data.glue.processors and .base: every task's fixture, split getters, errors."""

import logging
import os

import pytest

from bert_tf.data import glue
from bert_tf.data.glue import InputExample
from tests import helpers

FIXTURES = os.path.join(helpers.FIXTURES, "glue")


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
