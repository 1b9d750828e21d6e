"""run_classifier.py on CSV and TSV files of one's own, and predict_text.py on its exports.

Three runs, each shared by the tests of its problem type: the shipped
five-label CSV (data/own_data_example/), a multi-label CSV and a regression
TSV of pairs, each trained, evaluated, predicted and exported on a tiny
random BERT (2 layers, hidden 32); the multi-label model is exported by a
later run with --export_dir alone, which reads the labels back. Every
output must name the labels; bad files must end in one line naming the
file, line and column.

The runs go through cli.run in this process, as a user's command line does
(flags parsed by absl, errors printed as one line), which saves a TensorFlow
import per run; predict_text.py runs as a subprocess, since its flags
cannot share absl's FLAGS with run_classifier.py's.
"""

import contextlib
import csv
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)
from absl import flags

from bert_tf import cli
from bert_tf.serving import export_runner
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
EXAMPLE = os.path.join(ROOT, "data", "own_data_example")
FIVE_LABELS = ["account", "billing", "bug", "feature", "praise"]
TAGS = ["bug", "login", "mobile"]
WORDS = "the man dog city house book day night said found made went came took".split()


def run_script(script, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def run_classifier(*args):
    """run_classifier.py's command line through cli.run, in this process.

    Returns:
      (exit status, stderr).
    """
    import run_classifier as script

    flags.FLAGS.unparse_flags()
    stderr = io.StringIO()
    code = 0
    with contextlib.redirect_stderr(stderr):
        try:
            cli.run(script.main, ["run_classifier.py", *[str(arg) for arg in args]])
        except SystemExit as e:
            code = e.code or 0
    flags.FLAGS.unparse_flags()
    return code, stderr.getvalue()


def read_rows(path, delimiter=","):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f, delimiter=delimiter))


def read_results(path):
    with open(path, encoding="utf-8") as f:
        return dict(line.rstrip("\n").split(" = ") for line in f)


def one_error_line(result):
    """The error line of a failed run_classifier(), checked to be its only one."""
    code, stderr = result
    assert code == 1 and "Traceback" not in stderr, stderr[-2000:]
    # The log's lines may come before it; the error is one line, the last.
    errors = [line for line in stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and stderr.strip().splitlines()[-1] == errors[0], stderr[-2000:]
    return errors[0]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    prefix, _ = tiny_google_checkpoint(str(tmp_path_factory.mktemp("bert")))
    return prefix


def train_flags(checkpoint, output_dir):
    """One epoch of tiny batches, train, evaluate and predict, no XLA."""
    return ["--do_train", "--do_eval", "--do_predict", f"--init_checkpoint={checkpoint}",
            "--do_lower_case=false", f"--output_dir={output_dir}", "--max_seq_length=32",
            "--train_batch_size=4", "--eval_batch_size=4", "--predict_batch_size=3",
            "--num_train_epochs=1", "--learning_rate=1e-3", "--jit_compile=false", "--seed=1"]


def served(export_dir, signature, **texts):
    model = tf.saved_model.load(str(export_dir))
    outputs = model.signatures[signature](**{k: tf.constant(v) for k, v in texts.items()})
    return {name: value.numpy() for name, value in outputs.items()}


# Five labels, from the shipped example.


@pytest.fixture(scope="module")
def single_run(checkpoint, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("single")
    output_dir, export_dir = tmp / "out", tmp / "model"
    result = run_classifier(f"--train_file={EXAMPLE}/train.csv",
                            f"--eval_file={EXAMPLE}/dev.csv",
                            f"--predict_file={EXAMPLE}/test.csv",
                            *train_flags(checkpoint, output_dir), f"--export_dir={export_dir}")
    assert result[0] == 0, result[1][-3000:]
    return output_dir, export_dir


def test_five_labels_score_and_predict_by_name(single_run):
    output_dir, _ = single_run
    assert (output_dir / "label_list.txt").read_text().split() == FIVE_LABELS
    results = read_results(output_dir / "eval_results.txt")
    assert {"eval_loss", "eval_accuracy", "eval_macro_f1", "truncated_examples",
            "global_step"} <= set(results)
    for label in FIVE_LABELS:
        assert {f"eval_{label}_precision", f"eval_{label}_recall", f"eval_{label}_f1"} <= set(
            results)
    rows = read_rows(output_dir / "predictions.csv")
    assert rows[0] == ["id", "text", "label", *FIVE_LABELS]
    tests = read_rows(os.path.join(EXAMPLE, "test.csv"))[1:]
    assert [row[:2] for row in rows[1:]] == tests
    probabilities = np.array([row[3:] for row in rows[1:]], np.float64)
    assert [row[2] for row in rows[1:]] == [FIVE_LABELS[i] for i in probabilities.argmax(-1)]
    original = np.loadtxt(output_dir / "test_results.tsv", delimiter="\t")
    np.testing.assert_allclose(original, probabilities, atol=1e-6)


def test_five_labels_export_and_predict_text_give_the_names(single_run):
    output_dir, export_dir = single_run
    rows = read_rows(output_dir / "predictions.csv")[1:]
    texts = [row[1] for row in rows]
    outputs = served(export_dir, "serving_default", text_a=texts)
    assert [label.decode() for label in outputs["labels"]] == [row[2] for row in rows]
    np.testing.assert_allclose(outputs["probabilities"],
                               np.array([row[3:] for row in rows], np.float64), atol=1e-5)
    result = run_script("predict_text.py", f"--export_dir={export_dir}", *texts[:2])
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [(line[0], line[2]) for line in lines] == [(row[2], row[1]) for row in rows[:2]]
    # Each probability names its label, in label_list.txt's order.
    labels = (output_dir / "label_list.txt").read_text(encoding="utf-8").split()
    assert [p.split(":")[0] for p in lines[0][1].split()] == labels


def test_a_later_run_predicts_with_the_saved_labels_and_refuses_others(single_run, checkpoint,
                                                                      tmp_path):
    output_dir, _ = single_run
    test = tmp_path / "new.tsv"
    test.write_text("text\nI was charged twice this month.\n", encoding="utf-8")
    again = run_classifier("--do_predict", f"--predict_file={test}",
                           f"--output_dir={output_dir}", f"--init_checkpoint={checkpoint}",
                           "--do_lower_case=false", "--max_seq_length=32",
                           "--jit_compile=false")
    assert again[0] == 0, again[1][-3000:]
    first = read_rows(output_dir / "predictions.tsv", "\t")
    before = read_rows(output_dir / "predictions.csv")
    assert first[0] == ["id", "text", "label", *FIVE_LABELS]
    # The same text as the test file's first row: the same label, from the saved list's order.
    assert first[1][:3] == ["2", *before[1][1:3]]
    np.testing.assert_allclose(np.array(first[1][3:], np.float64),
                               np.array(before[1][3:], np.float64), atol=1e-5)

    other = run_classifier("--do_predict", f"--predict_file={test}",
                           f"--output_dir={output_dir}", f"--init_checkpoint={checkpoint}",
                           "--do_lower_case=false", "--labels=billing,bug,feature,account,praise",
                           "--max_seq_length=32")
    assert one_error_line(other) == (
        "run_classifier.py: error: --labels=billing,bug,feature,account,praise: "
        f"{output_dir} holds a run with --labels={','.join(FIVE_LABELS)}; give that, or "
        "another --output_dir")


def test_a_fine_tuned_run_loaded_with_its_labels_in_another_order_is_refused(
        single_run, tmp_path):
    output_dir, _ = single_run
    test = tmp_path / "new.csv"
    test.write_text("text\nI was charged twice this month.\n", encoding="utf-8")
    result = run_classifier("--do_predict", f"--predict_file={test}",
                            f"--output_dir={tmp_path / 'out'}", f"--init_checkpoint={output_dir}",
                            "--do_lower_case=false", "--labels=billing,bug,feature,account,praise",
                            "--max_seq_length=32", "--jit_compile=false")
    assert one_error_line(result) == (
        "run_classifier.py: error: --labels=billing,bug,feature,account,praise: "
        f"--init_checkpoint={output_dir}'s head was trained with --labels="
        f"{','.join(FIVE_LABELS)} (in {output_dir}), the same labels in another order: give "
        "them in that order")
    assert not (tmp_path / "out" / "predictions.csv").exists()
    # Without --labels, the folder's label_list.txt gives them, in its order.
    result = run_classifier("--do_predict", f"--predict_file={test}",
                            f"--output_dir={tmp_path / 'out'}", f"--init_checkpoint={output_dir}",
                            "--do_lower_case=false", "--max_seq_length=32", "--jit_compile=false")
    assert result[0] == 0, result[1][-3000:]
    assert read_rows(tmp_path / "out" / "predictions.csv")[0] == ["id", "text", "label",
                                                                   *FIVE_LABELS]


@pytest.mark.parametrize("case", ["label outside the list", "empty label", "missing column",
                                  "eval file without evaluation"])
def test_a_bad_file_is_one_line_naming_file_line_and_column(checkpoint, tmp_path, case):
    train = tmp_path / "train.csv"
    rows = "id,text,label\n1,the man,billing\n2,the dog,bug\n"
    flags, expected = [], None
    if case == "label outside the list":
        train.write_text(rows + "3,the city,refund\n", encoding="utf-8")
        flags = ["--labels=billing,bug"]
        expected = (f"{train}:4: label 'refund' is not one of the 2 labels of --labels "
                    "(billing, bug)")
    elif case == "empty label":
        train.write_text(rows + "3,the city,\n", encoding="utf-8")
        expected = f"{train}:4: column 'label': empty label cell"
    elif case == "missing column":
        train.write_text(rows, encoding="utf-8")
        flags = ["--label_column=category"]
        expected = (f"{train}:1: no column 'category' (--label_column); its columns are: id, "
                    "text, label")
    else:
        train.write_text(rows, encoding="utf-8")
        flags = [f"--eval_file={train}"]
        expected = (f"--eval_file={train} is read by --do_eval (or --eval_every_steps) alone: "
                    "add it, or leave --eval_file out")
    result = run_classifier("--do_train", f"--train_file={train}",
                            f"--init_checkpoint={checkpoint}",
                            f"--output_dir={tmp_path / 'out'}", "--do_lower_case=false",
                            "--max_seq_length=32", *flags)
    assert one_error_line(result) == f"run_classifier.py: error: {expected}"
    assert not (tmp_path / "out" / "label_list.txt").exists()


# Multi-label.


def write_multi_label(path, rows, seed):
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write("text,labels\n")
        for i in range(rows):
            tags = [tag for j, tag in enumerate(TAGS) if (i % 7 + 1) >> j & 1]
            f.write(" ".join(rng.choice(WORDS, 6)) + "," + "|".join(tags) + "\n")


@pytest.fixture(scope="module")
def multi_run(checkpoint, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("multi")
    write_multi_label(tmp / "train.csv", 12, 0)
    write_multi_label(tmp / "dev.csv", 7, 1)
    output_dir, export_dir = tmp / "out", tmp / "model"
    result = run_classifier("--problem_type=multi_label",
                            f"--train_file={tmp / 'train.csv'}", f"--eval_file={tmp / 'dev.csv'}",
                            f"--predict_file={tmp / 'dev.csv'}", "--threshold=0.5",
                            # The labels are no sequence: dynamic padding must leave them whole.
                            "--dynamic_padding", *train_flags(checkpoint, output_dir))
    assert result[0] == 0, result[1][-3000:]
    # The export alone, later: the labels come from output_dir's label_list.txt.
    result = run_classifier("--problem_type=multi_label", f"--output_dir={output_dir}",
                            f"--init_checkpoint={checkpoint}", "--do_lower_case=false",
                            "--max_seq_length=32", "--jit_compile=false",
                            f"--export_dir={export_dir}")
    assert result[0] == 0, result[1][-3000:]
    return tmp, output_dir, export_dir


def test_multi_label_scores_each_label_and_writes_every_label_over_the_threshold(multi_run):
    tmp, output_dir, _ = multi_run
    assert (output_dir / "label_list.txt").read_text().split() == TAGS
    results = read_results(output_dir / "eval_results.txt")
    assert {"eval_loss", "eval_micro_f1", "eval_macro_f1", "eval_micro_precision",
            "eval_micro_recall", "eval_exact_match"} <= set(results)
    assert {f"eval_{tag}_{score}" for tag in TAGS for score in ("precision", "recall", "f1")
            } <= set(results)
    rows = read_rows(output_dir / "predictions.csv")
    assert rows[0] == ["id", "text", "labels", *TAGS]
    for row in rows[1:]:
        probabilities = [float(p) for p in row[3:]]
        assert row[2] == "|".join(tag for tag, p in zip(TAGS, probabilities, strict=True)
                                  if p >= 0.5)
    assert [row[1] for row in rows[1:]] == [row[0] for row in read_rows(tmp / "dev.csv")[1:]]


def test_an_export_takes_the_runs_problem_type_and_names_a_flag_against_it(multi_run,
                                                                          checkpoint, tmp_path):
    _, output_dir, _ = multi_run
    # --output_dir alone: the run's problem type, labels, casing and length.
    result = run_classifier(f"--output_dir={output_dir}", "--jit_compile=false",
                            f"--export_dir={tmp_path / 'taken'}")
    assert result[0] == 0, result[1][-3000:]
    info = export_runner.read_info(str(tmp_path / "taken"))
    assert (info["task"], info["max_seq_length"], info["labels"]) == (
        "MultiLabelTask", 32, (output_dir / "label_list.txt").read_text().split())
    result = run_classifier(f"--output_dir={output_dir}", f"--init_checkpoint={checkpoint}",
                            "--problem_type=single_label", "--jit_compile=false",
                            f"--export_dir={tmp_path / 'model'}")
    assert one_error_line(result) == (
        f"run_classifier.py: error: --problem_type=single_label: {output_dir} holds a run with "
        "--problem_type=multi_label (and task: 'MultiLabelTask' there, 'ClassificationTask' "
        "now); give that, or another --output_dir")
    assert not (tmp_path / "model").exists()


def test_multi_label_export_and_predict_text_give_the_names(multi_run):
    _, output_dir, export_dir = multi_run
    rows = read_rows(output_dir / "predictions.csv")[1:]
    texts = [row[1] for row in rows]
    outputs = served(export_dir, "single", text_a=texts)
    assert [label.decode() for label in outputs["labels"]] == [row[2] for row in rows]
    np.testing.assert_allclose(outputs["probabilities"],
                               np.array([row[3:] for row in rows], np.float64), atol=1e-5)
    assert outputs["predictions"].tolist() == [
        [int(float(p) >= 0.5) for p in row[3:]] for row in rows]
    result = run_script("predict_text.py", f"--export_dir={export_dir}", *texts[:3])
    assert result.returncode == 0, result.stderr[-3000:]
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == [
        row[2] for row in rows[:3]]


# Regression on pairs.


@pytest.fixture(scope="module")
def regression_run(checkpoint, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("regression")
    rng = np.random.default_rng(2)
    with open(tmp / "train.tsv", "w", encoding="utf-8") as f:
        f.write("sentence1\tsentence2\tscore\n")
        for i in range(12):
            f.write(f"{' '.join(rng.choice(WORDS, 5))}\t{' '.join(rng.choice(WORDS, 4))}\t"
                    f"{i % 5}.5\n")
    output_dir, export_dir = tmp / "out", tmp / "model"
    result = run_classifier("--problem_type=regression", "--label_column=score",
                            f"--train_file={tmp / 'train.tsv'}",
                            f"--eval_file={tmp / 'train.tsv'}",
                            f"--predict_file={tmp / 'train.tsv'}",
                            *train_flags(checkpoint, output_dir), f"--export_dir={export_dir}")
    assert result[0] == 0, result[1][-3000:]
    return tmp, output_dir, export_dir


def test_regression_scores_and_predicts_values(regression_run):
    tmp, output_dir, export_dir = regression_run
    assert not (output_dir / "label_list.txt").exists()
    results = read_results(output_dir / "eval_results.txt")
    assert {"eval_loss", "pearson", "spearman", "truncated_examples"} <= set(results)
    rows = read_rows(output_dir / "predictions.tsv", "\t")
    assert rows[0] == ["id", "sentence1", "sentence2", "score"]
    values = np.array([float(row[3]) for row in rows[1:]])
    np.testing.assert_allclose(np.loadtxt(output_dir / "test_results.tsv"), values, atol=1e-6)
    # Pairs: the export's default signature takes two texts.
    outputs = served(export_dir, "serving_default", text_a=[row[1] for row in rows[1:]],
                     text_b=[row[2] for row in rows[1:]])
    np.testing.assert_allclose(outputs["predictions"], values, atol=1e-5)


def test_a_regression_value_that_is_no_number_is_one_line(regression_run, checkpoint,
                                                         tmp_path):
    train = tmp_path / "train.tsv"
    train.write_text("sentence1\tsentence2\tscore\nthe man\tthe dog\thigh\n", encoding="utf-8")
    result = run_classifier("--problem_type=regression", "--label_column=score", "--do_eval",
                            f"--eval_file={train}", f"--output_dir={regression_run[1]}",
                            f"--init_checkpoint={checkpoint}", "--do_lower_case=false",
                            "--max_seq_length=32")
    assert one_error_line(result) == (f"run_classifier.py: error: {train}:2: column 'score': "
                                      "'high' is not a number (--problem_type=regression)")
