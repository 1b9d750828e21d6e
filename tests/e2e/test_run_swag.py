"""run_swag.py and predict_choices.py, run as a user runs them, on tests/fixtures/swag.

A tiny random BERT (2 layers, hidden 32) saved as an original Google checkpoint
fine-tunes on the hand-made questions in SWAG's layout: train, eval, predict
and export in one run; predict_choices.py then runs the export on the test
file. The scripts are subprocesses, like a user's.
"""

import csv
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)

from bert_tf.data import swag
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
SWAG = os.path.join(ROOT, "tests", "fixtures", "swag")


def run_script(script, *flag_args):
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *flag_args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def small_flags(checkpoint, data_dir, output_dir, *extra):
    return [f"--data_dir={data_dir}", f"--init_checkpoint={checkpoint}",
            f"--output_dir={output_dir}", "--max_seq_length=32", "--train_batch_size=4",
            "--eval_batch_size=4", "--predict_batch_size=4", "--num_train_epochs=2",
            "--learning_rate=1e-3", "--jit_compile=false", *extra]


def read_predictions(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_google_checkpoint(str(tmp_path_factory.mktemp("google")))[0]


@pytest.fixture(scope="module")
def swag_run(checkpoint, tmp_path_factory):
    """One train + eval + predict + export run on a copy of the fixture."""
    tmp_path = tmp_path_factory.mktemp("swag")
    data_dir = shutil.copytree(SWAG, tmp_path / "data")
    output_dir, export_dir = tmp_path / "output", tmp_path / "export"
    result = run_script("run_swag.py", "--do_train=true", "--do_eval=true", "--do_predict=true",
                        f"--export_dir={export_dir}",
                        *small_flags(checkpoint, data_dir, output_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    return data_dir, output_dir, export_dir


def test_the_run_writes_results_and_predictions_in_input_order(swag_run):
    data_dir, output_dir, _ = swag_run
    with open(output_dir / "eval_results.txt", encoding="utf-8") as f:
        results = dict(line.strip().split(" = ") for line in f)
    assert set(results) == {"eval_accuracy", "eval_loss", "global_step"}
    assert int(results["global_step"]) == 4  # 8 questions, batch 4, 2 epochs
    rows = read_predictions(output_dir / swag.PREDICTIONS_FILE)
    test = swag.read_examples(os.path.join(data_dir, "test.csv"), 4, labelled=False)
    assert [row["id"] for row in rows] == [e.example_id for e in test]
    for row, example in zip(rows, test, strict=True):
        probabilities = [float(row[f"probability{i}"]) for i in range(4)]
        assert sum(probabilities) == pytest.approx(1.0, abs=1e-5)
        # The written probabilities are rounded to 6 places, which can tie.
        assert probabilities[int(row["prediction"])] == max(probabilities)
        assert row["ending"] == example.endings[int(row["prediction"])]


def test_the_export_gives_the_runs_numbers(swag_run):
    data_dir, output_dir, export_dir = swag_run
    model = tf.saved_model.load(str(export_dir))

    def choose(split, labelled):
        examples = swag.read_examples(os.path.join(data_dir, split), 4, labelled)
        outputs = model.signatures["choose"](
            context=tf.constant([e.context for e in examples]),
            endings=tf.constant([swag.second_segments(e) for e in examples]))
        return examples, outputs["probabilities"].numpy()

    _, test_probabilities = choose("test.csv", labelled=False)
    written = [[float(row[f"probability{i}"]) for i in range(4)]
               for row in read_predictions(output_dir / swag.PREDICTIONS_FILE)]
    np.testing.assert_allclose(test_probabilities, written, atol=1e-5)

    # eval_results.txt agrees with the export on the dev set, recomputed here.
    dev, probabilities = choose("val.csv", labelled=True)
    labels = np.array([e.label for e in dev])
    with open(output_dir / "eval_results.txt", encoding="utf-8") as f:
        results = {key: float(value) for key, value in (line.strip().split(" = ") for line in f)}
    assert results["eval_accuracy"] == np.mean(probabilities.argmax(-1) == labels)
    assert results["eval_loss"] == pytest.approx(
        -np.mean(np.log(probabilities[np.arange(len(dev)), labels])), abs=1e-5)


def test_predict_choices_runs_the_export_on_a_file(swag_run, tmp_path):
    data_dir, output_dir, export_dir = swag_run
    out = tmp_path / "predictions.csv"
    result = run_script("predict_choices.py", f"--export_dir={export_dir}",
                        f"--input_file={os.path.join(data_dir, 'test.csv')}",
                        f"--output_file={out}", "--batch_size=2")
    assert result.returncode == 0, result.stderr[-3000:]
    from_export = read_predictions(out)
    from_run = read_predictions(output_dir / swag.PREDICTIONS_FILE)
    assert [row["prediction"] for row in from_export] == [row["prediction"] for row in from_run]
    for exported, run in zip(from_export, from_run, strict=True):
        for i in range(4):
            assert float(exported[f"probability{i}"]) == pytest.approx(
                float(run[f"probability{i}"]), abs=1e-5)


def test_predict_choices_warns_about_cut_and_empty_endings(swag_run, tmp_path):
    data_dir, _, export_dir = swag_run
    with open(os.path.join(data_dir, "test.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    rows[2][8] = "the king saw the man " * 250  # 5,000 characters; the export reads 32 pieces
    rows[3][7] = ""
    edited = tmp_path / "test.csv"
    with open(edited, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    result = run_script("predict_choices.py", f"--export_dir={export_dir}",
                        f"--input_file={edited}", f"--output_file={tmp_path / 'out.csv'}")
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        f"predict_choices.py: warning: {edited}: 1 row has an empty ending, the first line 4 "
        "(ending0); such a choice is sent2 alone",
        "predict_choices.py: warning: line 3 is longer than the export's max_seq_length: its "
        "prediction reads its beginning only, as training did",
        "predict_choices.py: warning: 1 of 5 questions were cut to the export's "
        "max_seq_length, the first line 3"]


def test_a_file_with_other_endings_than_the_export_is_one_line(swag_run, tmp_path):
    data_dir, _, export_dir = swag_run
    three = tmp_path / "three.csv"
    with open(os.path.join(data_dir, "test.csv"), encoding="utf-8", newline="") as f:
        rows = [row[:-1] for row in csv.reader(f)]  # drops ending3
    with open(three, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    result = run_script("predict_choices.py", f"--export_dir={export_dir}",
                        f"--input_file={three}", f"--output_file={tmp_path / 'out.csv'}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"predict_choices.py: error: {three}:1: the header has 3 endings (ending0 to ending2), "
        "but the model takes 4 per question")
    assert not (tmp_path / "out.csv").exists()


def test_a_bad_row_fails_before_training_in_one_line(checkpoint, tmp_path):
    data_dir = shutil.copytree(SWAG, tmp_path / "data")
    with open(data_dir / "val.csv", "a", encoding="utf-8") as f:
        f.write("9,v,1,x,A man sits.,He,gold,stands.,sleeps.,runs.,jumps.,7\n")
    output_dir = tmp_path / "output"
    result = run_script("run_swag.py", "--do_train", "--do_eval",
                        *small_flags(checkpoint, data_dir, output_dir))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"run_swag.py: error: {data_dir / 'val.csv'}:8: label '7' is not one of the endings' "
        "numbers 0 to 3")
    assert not os.path.exists(output_dir / "train.tf_record")
    assert not os.path.exists(output_dir / "eval_results.txt")
