"""Tests for run_classifier.py (and predict_text.py), run as a user runs them.

A tiny BERT (2 layers, hidden 32) over tests/fixtures/pretraining_vocab.txt is
saved as an original Google checkpoint, or as a Hugging Face folder, in a
temporary folder; data folders are copies of tests/fixtures/glue or small
generated ones in the same layout. The MRPC run with the original README's
flags, predict_text.py on its export and one failing run are subprocesses,
like a user's. The other runs call main() in this process after parsing the
flags with absl, as app.run would: importing TensorFlow in a subprocess costs
seconds each time, and tfds.testing.mock_data works in-process only.
Importing run_classifier defines its flags in absl's global FLAGS, so no other
test may import run_pretraining.py or predict_text.py in-process.
"""

import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)
from absl import app, flags

from bert_tf import finetune
from bert_tf.checkpoints import checkpoints
from bert_tf.data import glue
from bert_tf.model.config import BertConfig
from bert_tf.model.modeling import BertModel
from bert_tf.records import input_pipeline
from bert_tf.serving import export_runner
from bert_tf.text import tokenization
from bert_tf.training import run_checks, run_dir
from tests import helpers
from tests.helpers.cluster_helpers import two_workers_and_one_process

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
GLUE = os.path.join(FIXTURES, "glue")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
OTHER_VOCAB = os.path.join(FIXTURES, "tokenization_vocab_small.txt")
MAX_POSITIONS = 64


@pytest.fixture(scope="module")
def encoder():
    """A tiny random BERT over VOCAB."""
    tf.keras.utils.set_random_seed(0)
    config = BertConfig(
        vocab_size=len(tokenization.load_vocab(VOCAB)), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2)
    model = BertModel(config)
    model({"input_ids": np.ones((1, 4), np.int32), "input_mask": np.ones((1, 4), np.int32),
           "segment_ids": np.zeros((1, 4), np.int32)})
    return model


@pytest.fixture(scope="module")
def google_checkpoint(encoder, tmp_path_factory):
    """The original's bert_model.ckpt, with bert_config.json beside it."""
    folder = tmp_path_factory.mktemp("google")
    return checkpoints.save_google_checkpoint(str(folder / "bert_model.ckpt"), encoder)


def run_script(script, *flag_args, stdin=None):
    """Runs a script of the repository with flags (and stdin's text); returns the
    CompletedProcess."""
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *flag_args],
                          cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300,
                          check=False)


def copy_task(name, tmp_path):
    """A copy of a GLUE fixture folder, to run on or to break."""
    return shutil.copytree(os.path.join(GLUE, name), tmp_path / name)


def small_flags(checkpoint, data_dir, output_dir, *extra):
    """Tiny batches, 1 epoch, no XLA: what every run here shares."""
    return [f"--data_dir={data_dir}", f"--init_checkpoint={checkpoint}",
            f"--vocab_file={VOCAB}", f"--output_dir={output_dir}", "--max_seq_length=32",
            "--train_batch_size=2", "--eval_batch_size=2", "--predict_batch_size=3",
            "--num_train_epochs=1", "--learning_rate=1e-3", "--jit_compile=false", *extra]


def read_results(path):
    """eval_results.txt as {key: float}."""
    results = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, value = line.rstrip("\n").split(" = ")
            results[key] = float(value)
    return results


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def no_temporary_files(folder):
    """Whether any .tmp file or folder is left anywhere under folder."""
    return not [name for _, dirs, files in os.walk(folder) for name in dirs + files
                if name.endswith(".tmp")]


# MRPC end to end, with the original README's flag spellings.


@pytest.fixture(scope="module")
def mrpc_run(google_checkpoint, tmp_path_factory):
    """One train + eval + predict + export run on a copy of the MRPC fixture."""
    tmp_path = tmp_path_factory.mktemp("mrpc")
    data_dir = copy_task("MRPC", tmp_path)
    output_dir, export_dir = tmp_path / "output", tmp_path / "export"
    result = run_script(
        "run_classifier.py", "--task_name=MRPC", "--do_train=true", "--do_eval=true",
        "--do_predict=true", f"--bert_config_file={os.path.dirname(google_checkpoint)}"
        "/bert_config.json", f"--export_dir={export_dir}",
        *small_flags(google_checkpoint, data_dir, output_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    return result, data_dir, output_dir, export_dir


def test_mrpc_writes_the_originals_results(mrpc_run):
    result, data_dir, output_dir, _ = mrpc_run
    results = read_results(output_dir / "eval_results.txt")
    assert set(results) == {"eval_accuracy", "eval_loss", "f1", "global_step"}
    # 2 train examples at batch 2 for 1 epoch: one step, and a checkpoint of it.
    assert results["global_step"] == 1
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-1")
    assert results["eval_loss"] > 0
    # The results are also printed, as the original does.
    assert f"eval_loss = {results['eval_loss']}" in result.stdout

    test_examples = glue.get_processor("mrpc").get_test_examples(str(data_dir))
    probabilities = np.array(read_tsv(output_dir / "test_results.tsv"), np.float64)
    # One line per test example (the padding to predict_batch_size=3 is dropped).
    assert probabilities.shape == (len(test_examples), 2) == (2, 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)

    submission = read_tsv(output_dir / "MRPC.tsv")
    assert submission[0] == ["index", "prediction"]
    assert submission[1:] == [[e.guid.split("-")[1], str(p.argmax())]
                              for e, p in zip(test_examples, probabilities, strict=True)]
    assert no_temporary_files(output_dir)


def test_mrpc_export_gives_the_runs_predictions(mrpc_run):
    _, data_dir, output_dir, export_dir = mrpc_run
    assert tf.saved_model.contains_saved_model(str(export_dir))
    assert no_temporary_files(export_dir.parent)
    model = tf.saved_model.load(str(export_dir))
    processor = glue.get_processor("mrpc")

    # MRPC is a pair task: serving_default takes pairs.
    test_examples = processor.get_test_examples(str(data_dir))
    outputs = model.signatures["serving_default"](
        text_a=tf.constant([e.text_a for e in test_examples]),
        text_b=tf.constant([e.text_b for e in test_examples]))
    np.testing.assert_allclose(outputs["probabilities"].numpy(),
                               np.array(read_tsv(output_dir / "test_results.tsv"), np.float64),
                               atol=1e-5)

    # eval_results.txt agrees with the model on the dev set, recomputed by hand.
    dev = processor.get_dev_examples(str(data_dir))
    dev_outputs = model.signatures["pair"](text_a=tf.constant([e.text_a for e in dev]),
                                           text_b=tf.constant([e.text_b for e in dev]))
    probabilities = dev_outputs["probabilities"].numpy()
    labels = np.array([int(e.label) for e in dev])
    results = read_results(output_dir / "eval_results.txt")
    expected_loss = -np.mean(np.log(probabilities[np.arange(len(dev)), labels]))
    assert results["eval_loss"] == pytest.approx(expected_loss, abs=1e-5)
    assert results["eval_accuracy"] == np.mean(probabilities.argmax(-1) == labels)


def test_two_workers_write_once_and_predict_everything(google_checkpoint, tmp_path):
    """MultiWorkerMirroredStrategy over two local processes vs one process.

    A learning rate of 1e-12 keeps the weights at the checkpoint's, far
    within the tolerance (a rate of 0 is refused as training nothing), and
    --seed the new head's at the same initial values, so the two workers'
    results must equal one process's: the chief's predictions cover every
    example although training shards the records between workers.
    Only the chief writes to --output_dir; the other worker's records go to a
    folder of its own under TMPDIR, deleted at the end.
    """
    data_dir = copy_task("MRPC", tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def job(output_dir, name, tf_config):
        env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
        env.update(CUDA_VISIBLE_DEVICES="-1", PYTHONPATH=ROOT, TMPDIR=str(scratch))
        if tf_config:
            env["TF_CONFIG"] = tf_config
        command = [sys.executable, os.path.join(ROOT, "run_classifier.py"), "--task_name=MRPC",
                   "--do_train", "--do_eval", "--do_predict",
                   *small_flags(google_checkpoint, data_dir, output_dir),
                   "--learning_rate=1e-12", "--predict_batch_size=2", "--seed=1"]
        return command, env, tmp_path / f"{name}.log"

    two_workers_and_one_process(job, tmp_path, ROOT)

    workers, single = tmp_path / "workers", tmp_path / "single"
    assert sorted(os.listdir(workers)) == sorted(os.listdir(single))
    assert os.listdir(scratch) == []
    ours = np.array(read_tsv(workers / "test_results.tsv"), np.float64)
    alone = np.array(read_tsv(single / "test_results.tsv"), np.float64)
    assert ours.shape == alone.shape == (2, 2)
    np.testing.assert_allclose(ours, alone, atol=1e-6)
    np.testing.assert_allclose(
        [v for _, v in sorted(read_results(workers / "eval_results.txt").items())],
        [v for _, v in sorted(read_results(single / "eval_results.txt").items())], atol=1e-6)
    assert read_tsv(workers / "MRPC.tsv") == read_tsv(single / "MRPC.tsv")


def test_predict_text_classifies_pairs_with_the_export(mrpc_run, tmp_path):
    _, data_dir, output_dir, export_dir = mrpc_run
    test_examples = glue.get_processor("mrpc").get_test_examples(str(data_dir))
    # The test set, then its pairs swapped and the first again: 5 pairs.
    pairs = [(e.text_a, e.text_b) for e in test_examples]
    pairs += [(b, a) for a, b in pairs] + pairs[:1]
    result = run_script("predict_text.py", f"--export_dir={export_dir}", "--pair",
                        *[text for pair in pairs for text in pair])
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    expected = np.array(read_tsv(output_dir / "test_results.tsv"), np.float64)
    assert len(lines) == len(pairs) and lines[-1] == lines[0]
    for (prediction, probabilities, shown), example, row in zip(
            lines[:len(test_examples)], test_examples, expected, strict=True):
        assert int(prediction) == row.argmax()
        # Each probability names its label: MRPC's are 0 and 1.
        named = [p.split(":") for p in probabilities.split()]
        assert [name for name, _ in named] == ["0", "1"]
        assert [float(p) for _, p in named] == pytest.approx(row, abs=1e-3)
        assert shown == f"{example.text_a} ||| {example.text_b}"

    # The same pairs from a file, in batches of 2: the same lines, in a file.
    input_file, output_file = tmp_path / "pairs.tsv", tmp_path / "labels.tsv"
    input_file.write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    from_file = run_script("predict_text.py", f"--export_dir={export_dir}", "--pair",
                           f"--input_file={input_file}", "--batch_size=2",
                           f"--output_file={output_file}")
    assert from_file.returncode == 0, from_file.stderr[-3000:]
    assert from_file.stdout == ""
    assert output_file.read_text(encoding="utf-8") == result.stdout
    assert "5/5 lines in " in from_file.stderr
    assert no_temporary_files(tmp_path)


def test_predict_text_reads_stdin_and_warns_once_about_empty_lines(mrpc_run):
    result = run_script("predict_text.py", f"--export_dir={mrpc_run[3]}", "--input_file=-",
                        "--batch_size=2", stdin="A tab\tand \x1b[31mred\n\nfine\n \n")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [shown for _, _, shown in lines] == ["A tab\\tand \\x1b[31mred", "", "fine", " "]
    assert lines[1][:2] == lines[3][:2]
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == ["predict_text.py: warning: <stdin>: 2 lines with an empty text, the "
                        "first line 2; their predictions reflect no text"]
    assert "4 lines in " in result.stderr


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_pair_line_without_one_tab_is_one_line_and_writes_nothing(mrpc_run, tmp_path,
                                                                     source):
    # On stdin the bad line comes after a batch was labelled and written.
    text = "He said yes.\tHe agreed.\n" * 3 + "no tab here\n"
    input_file, output_file = tmp_path / "pairs.tsv", tmp_path / "labels.tsv"
    input_file.write_text(text, encoding="utf-8")
    flag, name, stdin = ((input_file, input_file, None) if source == "file"
                         else ("-", "<stdin>", text))
    result = run_script("predict_text.py", f"--export_dir={mrpc_run[3]}", "--pair",
                        f"--input_file={flag}", "--batch_size=2", f"--output_file={output_file}",
                        stdin=stdin)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"predict_text.py: error: {name}:4: a pair's line is text_a<TAB>text_b, but this one "
        "has 0 tabs")
    assert not output_file.exists() and no_temporary_files(tmp_path)


def test_predict_entities_refuses_what_is_not_a_tagger_export(mrpc_run, tmp_path):
    export_dir = mrpc_run[3]
    # An export of bert_tf's from before exports named their task: its
    # signature tells. And a folder that is no SavedModel at all.
    untold = shutil.copytree(export_dir, tmp_path / "untold")
    info = json.loads((untold / export_runner.INFO_FILE).read_text())
    del info["task"]
    (untold / export_runner.INFO_FILE).write_text(json.dumps(info))
    for folder, message in [
            (export_dir, f"{export_dir} holds a ClassificationTask model, not a TaggingTask "
                         "one: use predict_text.py"),
            (untold, f"{untold}: its 'serving_default' signature takes text_a, text_b, not text: "
                     "it is not the export this tool serves"),
            (tmp_path, f"{tmp_path} is not a SavedModel folder (no saved_model.pb): give the "
                       "folder that a training script's --export_dir wrote")]:
        result = run_script("predict_entities.py", f"--export_dir={folder}", "he said yes")
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines()[-1] == (
            f"predict_entities.py: error: {message}")


def test_predict_text_says_which_inputs_it_cut_and_counts_them(mrpc_run, tmp_path):
    # The export's max_seq_length is 32: a pair of 20 words each is cut.
    long_pair = "\t".join(["the king saw the man " * 4] * 2)
    lines = ["He said yes.\tHe agreed.", *[long_pair] * 7]
    input_file = tmp_path / "pairs.tsv"
    input_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    result = run_script("predict_text.py", f"--export_dir={mrpc_run[3]}", "--pair",
                        f"--input_file={input_file}", "--batch_size=3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.stdout.splitlines()) == 8
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        *[f"predict_text.py: warning: line {n} is longer than the export's max_seq_length: "
          "its prediction reads its beginning only, as training did" for n in range(2, 7)],
        "predict_text.py: warning: 7 of 8 inputs were cut to the export's max_seq_length, "
        "the first line 2"]


def test_predict_text_escapes_what_would_break_its_line(mrpc_run):
    export_dir = mrpc_run[3]
    result = run_script("predict_text.py", f"--export_dir={export_dir}",
                        "two\tcolumns\nand \x1b[31mred", "")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split("\t")[2] == "two\\tcolumns\\nand \\x1b[31mred"
    assert "predict_text.py: warning: argument 2 is empty" in result.stderr


def test_predict_text_names_an_argument_that_is_not_utf8(mrpc_run):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "predict_text.py"),
         f"--export_dir={mrpc_run[3]}", "fine", b"caf\xe9"], cwd=ROOT, capture_output=True,
        text=True, timeout=300, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "predict_text.py: error: argument 2 is not valid UTF-8: b'caf\\xe9'")


def test_a_bad_dev_row_fails_before_training_and_writes_no_results(google_checkpoint, tmp_path):
    data_dir = copy_task("MRPC", tmp_path)
    with open(data_dir / "dev.tsv", "a", encoding="utf-8") as f:
        f.write("1\t11\t12\tonly one sentence\n")
    output_dir = tmp_path / "output"
    result = run_script("run_classifier.py", "--task_name=MRPC", "--do_train=true",
                        "--do_eval=true", *small_flags(google_checkpoint, data_dir, output_dir))
    assert result.returncode != 0
    assert f"{data_dir / 'dev.tsv'}:3: 4 columns, but the rows of this mrpc file have 5" \
        in result.stderr
    assert not (output_dir / "eval_results.txt").exists()
    # The dev file is checked before training, so no time went into a model.
    assert tf.train.latest_checkpoint(str(output_dir)) is None


# In-process runs: absl's flags are parsed as app.run parses them, then main().


@pytest.fixture
def run_main():
    """Calls run_classifier.main with flags; the flags are reset afterwards."""
    import run_classifier

    def run(*flag_args):
        # Each call is a new command line: no flag carries over from the last.
        flags.FLAGS.unparse_flags()
        flags.FLAGS(["run_classifier.py", *[str(f) for f in flag_args]])
        run_classifier.main([])

    yield run
    flags.FLAGS.unparse_flags()


def test_export_dir_alone_exports_the_finished_run(mrpc_run, run_main, google_checkpoint,
                                                  tmp_path):
    _, data_dir, output_dir, _ = mrpc_run
    checkpoints_before = sorted(output_dir.glob("ckpt-*"))
    export_dir = tmp_path / "export_again"
    # The run's own command without --do_* and --data_dir: nothing is trained or read.
    run_main("--task_name=MRPC", f"--init_checkpoint={google_checkpoint}",
             f"--vocab_file={VOCAB}", f"--output_dir={output_dir}", "--max_seq_length=32",
             f"--export_dir={export_dir}")
    assert checkpoints_before and sorted(output_dir.glob("ckpt-*")) == checkpoints_before
    test_examples = glue.get_processor("mrpc").get_test_examples(str(data_dir))
    outputs = tf.saved_model.load(str(export_dir)).signatures["serving_default"](
        text_a=tf.constant([e.text_a for e in test_examples]),
        text_b=tf.constant([e.text_b for e in test_examples]))
    np.testing.assert_allclose(outputs["probabilities"].numpy(),
                               np.array(read_tsv(output_dir / "test_results.tsv"), np.float64),
                               atol=1e-5)
    # With no trained run to export, it refuses rather than export a random head.
    with pytest.raises(run_checks.RunCheckError, match=(
            "--export_dir would use a random head: --init_checkpoint=.* has no .* "
            r"\(2 weights of the task's head are missing")):
        run_main("--task_name=MRPC", f"--init_checkpoint={google_checkpoint}",
                 f"--vocab_file={VOCAB}", f"--output_dir={tmp_path / 'empty'}",
                 "--max_seq_length=32", f"--export_dir={tmp_path / 'not_written'}")
    assert not (tmp_path / "not_written").exists()
    with pytest.raises(finetune.FinetuneError, match="At least one of do_train"):
        run_main("--task_name=MRPC", f"--init_checkpoint={google_checkpoint}",
                 f"--output_dir={tmp_path / 'empty'}", "--export_dir=")


def test_predicting_with_a_random_head_needs_asking_by_name(run_main, google_checkpoint,
                                                            tmp_path):
    """A pretrained encoder alone: its classifier head would be random."""
    data_dir, output_dir = copy_task("SST-2", tmp_path), tmp_path / "output"
    with pytest.raises(run_checks.RunCheckError, match=(
            "--do_predict would use a random head: --init_checkpoint=.*; add --do_train, or "
            "--allow_random_weights to run on the random head anyway")):
        run_main("--task_name=SST-2", "--do_predict",
                 *small_flags(google_checkpoint, data_dir, output_dir))
    assert not (output_dir / "test_results.tsv").exists()
    run_main("--task_name=SST-2", "--do_predict", "--allow_random_weights",
             *small_flags(google_checkpoint, data_dir, output_dir))
    assert (output_dir / "test_results.tsv").exists()


def test_mnli_evaluates_and_predicts_both_matched_and_mismatched(
        run_main, google_checkpoint, tmp_path, capsys):
    data_dir = copy_task("MNLI", tmp_path)
    output_dir = tmp_path / "output"
    run_main("--task_name=MNLI", "--do_train", "--do_eval", "--do_predict",
             *small_flags(google_checkpoint, data_dir, output_dir))
    results = read_results(output_dir / "eval_results.txt")
    assert set(results) == {"global_step"} | {
        f"{split}_{key}" for split in ("dev_matched", "dev_mismatched")
        for key in ("eval_loss", "eval_accuracy")}
    assert "dev_mismatched_eval_accuracy = " in capsys.readouterr().out
    processor = glue.get_processor("mnli")
    for split, name in (("test_matched", "MNLI-m.tsv"), ("test_mismatched", "MNLI-mm.tsv")):
        examples = processor.get_test_examples(str(data_dir), split)
        assert len(read_tsv(output_dir / f"test_results_{split}.tsv")) == len(examples)
        submission = read_tsv(output_dir / name)
        assert submission[0] == ["index", "prediction"]
        assert len(submission) == len(examples) + 1
        assert {row[1] for row in submission[1:]} <= set(processor.get_labels())
    # What convert_checkpoint.py --output_format=hf needs beside the checkpoint.
    settings = json.loads((output_dir / "hf_settings.json").read_text())
    assert settings["config"]["architectures"] == ["BertForSequenceClassification"]
    assert settings["config"]["id2label"] == {str(i): label for i, label in
                                              enumerate(processor.get_labels())}
    assert settings["do_lower_case"] is True
    assert (output_dir / "vocab.txt").exists()


def test_a_failure_during_eval_leaves_no_results_file(
        run_main, google_checkpoint, tmp_path, monkeypatch):
    """MNLI's second dev split fails after the first is evaluated: no partial results."""
    metrics = glue.evaluation_metrics
    calls = []

    def failing_on_the_second_split(*args):
        calls.append(args[0])
        if len(calls) == 2:
            raise RuntimeError("interrupted")
        return metrics(*args)

    # GlueData.score (data/glue/records.py) scores each dev split with it.
    monkeypatch.setattr(glue.records, "evaluation_metrics", failing_on_the_second_split)
    output_dir = tmp_path / "output"
    with pytest.raises(RuntimeError, match="interrupted"):
        run_main("--task_name=MNLI", "--do_eval", "--allow_random_weights",
                 *small_flags(google_checkpoint, copy_task("MNLI", tmp_path), output_dir))
    assert calls == ["mnli", "mnli"]
    assert not (output_dir / "eval_results.txt").exists()
    assert no_temporary_files(output_dir)


def _write_tsv(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("\t".join(str(cell) for cell in row) + "\n" for row in rows)


def test_sts_b_regression_reports_pearson_and_spearman(run_main, google_checkpoint, tmp_path):
    data_dir = tmp_path / "STS-B"
    data_dir.mkdir()
    header = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
              "sentence1", "sentence2"]
    pairs = [("a man is in the house .", "the man was in a house ."),
             ("he said it .", "it was not he ."),
             ("the king and the man .", "a king was here ."),
             ("to be or not to be .", "it is to be ."),
             ("the house of the king .", "the king 's house .")]

    def rows(scores):
        return [[i, "main", "x", "2012", f"{i:04d}", "none", "none", a, b, *score]
                for i, ((a, b), score) in enumerate(zip(pairs, scores, strict=False))]

    _write_tsv(data_dir / "train.tsv",
               [header + ["score"]] + rows([["5.000"], ["0.500"], ["3.200"], ["1.0"]]))
    _write_tsv(data_dir / "dev.tsv", [header + ["score"]] + rows(
        [["4.0"], ["1.5"], ["2.5"], ["0.0"], ["5.0"]]))
    _write_tsv(data_dir / "test.tsv", [header] + rows([[], [], []]))
    output_dir = tmp_path / "output"
    run_main("--task_name=STS-B", "--do_train", "--do_eval", "--do_predict",
             *small_flags(google_checkpoint, data_dir, output_dir))

    results = read_results(output_dir / "eval_results.txt")
    assert set(results) == {"eval_loss", "pearson", "spearman", "global_step"}
    assert results["global_step"] == 2
    assert -1 <= results["pearson"] <= 1 and -1 <= results["spearman"] <= 1
    assert results["eval_loss"] > 0
    # One score per test example, and GLUE's [0, 5] clipped, 3-decimal form.
    scores = read_tsv(output_dir / "test_results.tsv")
    assert [len(row) for row in scores] == [1, 1, 1]
    submission = read_tsv(output_dir / "STS-B.tsv")
    assert submission[0] == ["index", "prediction"]
    assert [row[0] for row in submission[1:]] == ["0", "1", "2"]
    for (score,), (_, value) in zip(scores, submission[1:], strict=True):
        assert value == f"{min(max(float(score), 0.0), 5.0):.3f}"


def varied_length_task(google_checkpoint, tmp_path):
    """An SST-2 folder of sentences of 3 to 30 tokens, and a config without dropout.

    Returns:
      (data_dir, flags to run it with at max_seq_length 64, with XLA).
    """
    config = BertConfig.from_json_file(os.path.join(os.path.dirname(google_checkpoint),
                                                    "bert_config.json"))
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0
    config.to_json_file(str(tmp_path / "bert_config.json"))
    data_dir = tmp_path / "SST-2"
    data_dir.mkdir()
    # 1 to 28 words, each one word piece: with [CLS] and [SEP], 3 to 30 tokens,
    # so batches of 2 are cut from 64 to 16 or 32.
    words = "the king was in the house .".split() * 4
    sentences = [" ".join(words[:n]) for n in range(1, 29, 3)]
    _write_tsv(data_dir / "train.tsv",
               [["sentence", "label"]] + [[t, i % 2] for i, t in enumerate(sentences)])
    _write_tsv(data_dir / "dev.tsv",
               [["sentence", "label"]] + [[t, i % 2] for i, t in enumerate(sentences[::-1])])
    # 18, 12, 24, 15 and 21 tokens: not in order of length.
    test_sentences = [sentences[i] for i in (5, 3, 7, 4, 6)]
    _write_tsv(data_dir / "test.tsv",
               [["index", "sentence"]] + [[i, t] for i, t in enumerate(test_sentences)])
    return data_dir, ["--task_name=SST-2", "--do_train", "--do_eval", "--do_predict",
                      "--seed=1", f"--bert_config_file={tmp_path / 'bert_config.json'}",
                      "--max_seq_length=64", "--jit_compile=true"]


def test_dynamic_padding_trains_and_predicts_as_full_padding(
        run_main, google_checkpoint, tmp_path, monkeypatch):
    """Without dropout, cutting each batch's padding changes no result (XLA on)."""
    data_dir, task_flags = varied_length_task(google_checkpoint, tmp_path)
    trim_padding, trimmed_pipelines = input_pipeline.trim_padding, []
    monkeypatch.setattr(input_pipeline, "trim_padding",
                        lambda *args: trimmed_pipelines.append(1) or trim_padding(*args))
    outputs = {}
    for dynamic in (False, True):
        output_dir = tmp_path / f"output_{dynamic}"
        run_main(*small_flags(google_checkpoint, data_dir, output_dir), *task_flags,
                 f"--dynamic_padding={dynamic}")
        outputs[dynamic] = output_dir
        # Train, eval and predict each trace the trimming once, or not at all.
        assert len(trimmed_pipelines) == (3 if dynamic else 0)
    records = record_lengths(outputs[True] / "train.tf_record")
    assert records == list(range(3, 31, 3))
    # Dev and test records go shortest first with dynamic padding (the test
    # set's padding record last), in input order without it; the outputs
    # compared below are in input order either way.
    assert record_lengths(outputs[True] / "dev.tf_record") == list(range(3, 31, 3))
    assert record_lengths(outputs[False] / "dev.tf_record") == list(range(30, 0, -3))
    assert record_lengths(outputs[True] / "test.tf_record") == [12, 15, 18, 21, 24, 0]
    assert record_lengths(outputs[False] / "test.tf_record") == [18, 12, 24, 15, 21, 0]
    full, trimmed = (read_results(outputs[d] / "eval_results.txt") for d in (False, True))
    assert full["global_step"] == trimmed["global_step"] == 5
    for key in ("eval_loss", "eval_accuracy"):
        assert trimmed[key] == pytest.approx(full[key], rel=1e-4)
    # Float sums in another order: the probabilities agree to within 1e-4.
    np.testing.assert_allclose(
        np.array(read_tsv(outputs[True] / "test_results.tsv"), np.float64),
        np.array(read_tsv(outputs[False] / "test_results.tsv"), np.float64), atol=1e-4)


def test_group_by_length_trains_with_dynamic_padding_only(
        run_main, google_checkpoint, tmp_path):
    data_dir, task_flags = varied_length_task(google_checkpoint, tmp_path)
    output_dir = tmp_path / "output"
    flag_args = [*small_flags(google_checkpoint, data_dir, output_dir), *task_flags,
                 "--group_by_length"]
    with pytest.raises(finetune.FinetuneError, match="--dynamic_padding"):
        run_main(*flag_args)
    assert not output_dir.exists()
    run_main(*flag_args, "--dynamic_padding")
    results = read_results(output_dir / "eval_results.txt")
    assert results["global_step"] == 5 and 0 <= results["eval_accuracy"] <= 1
    assert len(read_tsv(output_dir / "test_results.tsv")) == 5


def record_lengths(path):
    """The real tokens of every record in a classification TFRecord."""
    spec = {"input_mask": tf.io.FixedLenFeature([64], tf.int64)}
    return [int(tf.io.parse_single_example(r, spec)["input_mask"].numpy().sum())
            for r in tf.data.TFRecordDataset(str(path))]


def test_hugging_face_folder_as_init_checkpoint(run_main, encoder, tmp_path, monkeypatch):
    folder = tmp_path / "hf_model"
    checkpoints.save_hf_folder(str(folder), encoder)
    shutil.copy(VOCAB, folder / "vocab.txt")
    data_dir = copy_task("SST-2", tmp_path)
    output_dir = tmp_path / "output"
    flag_args = [f for f in small_flags(folder, data_dir, output_dir)
                 if not f.startswith("--vocab_file")]
    load_weights, reports = checkpoints.load_weights, []
    monkeypatch.setattr(checkpoints, "load_weights",
                        lambda *args: reports.append(load_weights(*args)) or reports[-1])
    run_main("--task_name=sst-2", "--do_train", "--do_eval", *flag_args)
    # Every encoder weight came from the folder; only the new head did not.
    [report] = reports
    assert (report.format, report.path) == ("hf", str(folder))
    assert len(report.loaded) == len(encoder.weights)
    assert report.initialized == ["output_weights", "output_bias"]
    results = read_results(output_dir / "eval_results.txt")
    assert set(results) == {"eval_accuracy", "eval_loss", "global_step"}
    assert results["global_step"] == 1
    # The config came from the folder's config.json, and is kept for later runs.
    written = BertConfig.from_json_file(str(output_dir / "bert_config.json"))
    assert written.vocab_size == encoder.config.vocab_size
    assert written.num_hidden_layers == 2 and written.hidden_size == 32


@pytest.mark.parametrize(("case_flag", "expected"), [
    ([], False), (["--do_lower_case=false"], False), (["--do_lower_case=true"], None)])
def test_a_hugging_face_folders_tokenizer_config_sets_the_case(
        run_main, encoder, tmp_path, monkeypatch, capsys, case_flag, expected):
    folder = tmp_path / "hf_model"
    checkpoints.save_hf_folder(str(folder), encoder)
    shutil.copy(VOCAB, folder / "vocab.txt")
    (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    data_dir = copy_task("SST-2", tmp_path)
    flag_args = [f for f in small_flags(folder, data_dir, tmp_path / "output")
                 if not f.startswith("--vocab_file")]
    cases = []

    class RecordingTokenizer(tokenization.FullTokenizer):
        def __init__(self, vocab_file, do_lower_case=True):
            cases.append(do_lower_case)
            super().__init__(vocab_file, do_lower_case)

    monkeypatch.setattr(tokenization, "FullTokenizer", RecordingTokenizer)
    # A cased folder needs no flag; a flag that contradicts it is refused:
    # an uncased model's capitalised words would be [UNK].
    if expected is None:
        with pytest.raises(finetune.FinetuneError, match=(
                f"--do_lower_case=True contradicts --init_checkpoint={folder}, whose "
                "tokenizer_config.json says do_lower_case=False: drop the flag")):
            run_main("--task_name=sst-2", "--do_eval", *flag_args, *case_flag)
        assert cases == []
        return
    run_main("--task_name=sst-2", "--do_eval", "--allow_random_weights", *flag_args,
             *case_flag)
    assert cases == [expected]
    # The folder's record wins over what its vocab looks like.
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(("vocab", "case_flag", "line"), [
    (VOCAB, "--do_lower_case=false", "error: --do_lower_case=False, but {vocab} has no word "
     "piece with a capital letter (an uncased vocab): capitalised words would be [UNK]; pass "
     "--do_lower_case=True"),
    (OTHER_VOCAB, "--do_lower_case=true", "warning: --do_lower_case=True, but 374 word pieces "
     "of {vocab} hold capital letters (a cased vocab), which lower-cased text never matches; "
     "pass --do_lower_case=False"),
    (VOCAB, "--do_lower_case=true", None)])
def test_a_casing_that_contradicts_an_unrecorded_vocab_is_refused_or_warned(
        google_checkpoint, tmp_path, vocab, case_flag, line):
    """A checkpoint that records no casing: its vocab tells, in one line. Reading an
    uncased vocab without lower-casing is refused (tokenization.check_case_fits_vocab);
    lower-casing a cased one is a warning."""
    flag_args = [f for f in small_flags(google_checkpoint, copy_task("SST-2", tmp_path),
                                        tmp_path / "output") if not f.startswith("--vocab")]
    # --bert_config_file: the checkpoint's config, whatever the vocab's size
    # (the run stops at the size check, after the casing's).
    result = run_script("run_classifier.py", "--task_name=SST-2", "--do_eval",
                        f"--vocab_file={vocab}", case_flag, *flag_args)
    # What is said of the casing (the runs go on to stop at the random head).
    said = [text for text in result.stderr.splitlines()
            if "warning:" in text or "error: --do_lower_case" in text]
    assert said == ([] if line is None else ["run_classifier.py: " + line.format(vocab=vocab)])
    if line is not None and line.startswith("error:"):
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines()[-1] == said[0]


def _append(path, line):
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


@pytest.mark.parametrize("case", [
    "unknown task", "missing file", "wrong columns", "unknown label", "long sequences",
    "other vocab", "no vocab", "no config", "tfds of another task", "no training step"])
def test_bad_input_gets_a_clear_error(run_main, google_checkpoint, tmp_path, case):
    data_dir = copy_task("MRPC", tmp_path)
    output_dir = tmp_path / "output"
    train = data_dir / "train.tsv"
    extra = []
    error = ValueError
    if case == "unknown task":
        extra = ["--task_name=MRPC2"]
        message = ("Unknown task 'MRPC2'; known tasks: cola, sst-2, mrpc, qqp, sts-b, mnli, "
                   "qnli, rte, wnli, xnli, ax")
    elif case == "missing file":
        os.remove(train)
        error, message = FileNotFoundError, f"mrpc: data file not found: {train}"
    elif case == "wrong columns":
        _append(train, "1\t5\t6\tone sentence\n")
        message = f"{train}:4: 4 columns, but the rows of this mrpc file have 5"
    elif case == "unknown label":
        _append(train, "2\t5\t6\tone sentence\tanother one\n")
        message = f"{train}:4: unknown label '2'; mrpc labels are 0, 1"
    elif case == "long sequences":
        extra = ["--max_seq_length=128"]
        message = "--max_seq_length=128 exceeds the model's max_position_embeddings=64"
    elif case == "other vocab":
        extra = [f"--vocab_file={OTHER_VOCAB}"]
        vocab_size = len(tokenization.load_vocab(OTHER_VOCAB))
        message = (f"the vocab file has {vocab_size} tokens but the model's vocab_size is "
                   f"{len(tokenization.load_vocab(VOCAB))}")
    elif case == "no vocab":
        extra = ["--vocab_file="]
        message = "--vocab_file is required"
    elif case == "no config":
        extra = ["--init_checkpoint="]
        message = "Give --bert_config_file"
    elif case == "tfds of another task":
        extra = ["--tfds_name=glue/sst2"]
        message = "--tfds_name=glue/sst2 is not the task --task_name=MRPC"
    else:
        extra = ["--train_batch_size=4"]
        message = ("2 train examples at --train_batch_size=4 for --num_train_epochs=1.0 make "
                   "no training step")
    with pytest.raises(error) as raised:
        run_main("--task_name=MRPC", "--do_train", "--do_eval", "--do_predict",
                 *small_flags(google_checkpoint, data_dir, output_dir), *extra)
    assert message in str(raised.value)
    # Nothing was trained or written.
    assert not output_dir.exists() or os.listdir(output_dir) == []


def test_an_unknown_label_in_records_names_the_example(run_main, google_checkpoint, tmp_path,
                                                        monkeypatch):
    """A label the task lacks that comes from elsewhere than a checked TSV file."""
    def examples(processor, split, data_dir=None, tfds_name=None):
        return [glue.InputExample(f"{split}-0", "the king", "the man", "maybe")]

    monkeypatch.setattr(glue.records, "read_split", examples)
    # The file the run records as its training data (its examples come from above).
    (tmp_path / "train.tsv").write_text("", encoding="utf-8")
    with pytest.raises(glue.GlueDataError,
                       match="example train-0: unknown label 'maybe'; known: 0, 1"):
        run_main("--task_name=MRPC", "--do_train",
                 *small_flags(google_checkpoint, tmp_path, tmp_path / "output"),
                 "--train_batch_size=1")


# TFDS. tfds.testing.mock_data replaces the datasets with random examples of
# the builder's features; nothing is downloaded.


def test_tfds_glue_mrpc_trains_evaluates_and_predicts(run_main, google_checkpoint, tmp_path,
                                                      monkeypatch):
    output_dir = tmp_path / "output"
    # The mock serves any split name; TFDS itself knows only its own.
    load, splits = tfds.load, []
    monkeypatch.setattr(tfds, "load", lambda name, split, **kwargs: (
        splits.append(split) or load(name, split=split, **kwargs)))
    with tfds.testing.mock_data(num_examples=4, policy=tfds.testing.MockPolicy.USE_CODE):
        test_indices = [int(r["idx"]) for r in
                        tfds.as_numpy(tfds.load("glue/mrpc", split="test"))]
        run_main("--task_name=MRPC", "--tfds_name=glue/mrpc", "--do_train", "--do_eval",
                 "--do_predict", *small_flags(google_checkpoint, "", output_dir)[1:])
    assert splits == ["test", "train", "validation", "test"]
    results = read_results(output_dir / "eval_results.txt")
    assert set(results) == {"eval_accuracy", "eval_loss", "f1", "global_step"}
    assert results["global_step"] == 2
    assert all(math.isfinite(v) for v in results.values())
    assert len(read_tsv(output_dir / "test_results.tsv")) == 4
    submission = read_tsv(output_dir / "MRPC.tsv")
    assert [int(row[0]) for row in submission[1:]] == test_indices


def test_a_rerun_with_other_settings_is_refused_saying_what_differs(
        run_main, google_checkpoint, tmp_path):
    data_dir = copy_task("MRPC", tmp_path)
    output_dir = tmp_path / "output"
    run_main("--task_name=MRPC", "--do_train", *small_flags(google_checkpoint, data_dir,
                                                             output_dir))
    settings = json.loads((output_dir / run_dir.SETTINGS_FILE).read_text())
    assert settings["training"]["learning_rate"] == 1e-3
    # The same settings resume (here: nothing left to train).
    run_main("--task_name=MRPC", "--do_train", *small_flags(google_checkpoint, data_dir,
                                                             output_dir))
    with pytest.raises(run_dir.RunDirError, match="learning_rate: 0.001 there, 0.002 now"):
        run_main("--task_name=MRPC", "--do_train",
                 *small_flags(google_checkpoint, data_dir, output_dir), "--learning_rate=2e-3")
    # Another task's model (3 labels, not 2) is refused before its checkpoint is read,
    # naming the flag to give.
    with pytest.raises(run_dir.RunDirError, match=(
            "^--task_name=mnli: .* holds a run with --task_name=mrpc \\(and labels: ")):
        run_main("--task_name=MNLI", "--do_eval",
                 *small_flags(google_checkpoint, copy_task("MNLI", tmp_path), output_dir))


def test_another_task_of_the_same_shape_is_refused_and_legitimate_changes_are_not(
        run_main, google_checkpoint, tmp_path):
    sst2, cola = copy_task("SST-2", tmp_path), copy_task("CoLA", tmp_path)
    output_dir = tmp_path / "output"

    def sst2_run(*extra, data_dir=sst2):
        run_main("--task_name=SST-2", *small_flags(google_checkpoint, data_dir, output_dir),
                 *extra)

    sst2_run("--do_train")
    # CoLA has SST-2's two labels, hence its model's shapes: it used to
    # "resume" the finished SST-2 run and report its numbers as CoLA's.
    for actions in (["--do_train", "--do_eval"], ["--do_eval"],
                    [f"--export_dir={tmp_path / 'export'}"]):
        with pytest.raises(run_dir.RunDirError,
                           match="^--task_name=cola: .* holds a run with --task_name=sst-2; "
                                 "give that, or another --output_dir"):
            run_main("--task_name=CoLA", *actions,
                     *small_flags(google_checkpoint, cola, output_dir))
    assert not (output_dir / "eval_results.txt").exists()
    assert not (tmp_path / "export").exists()
    # This uncased vocab refuses a cased run before the folder's settings are compared.
    with pytest.raises(finetune.FinetuneError, match="--do_lower_case=False, but .* uncased"):
        sst2_run("--do_eval", "--do_lower_case=false")

    # Allowed: scoring the model on other data, with another batch size and length.
    other_dev = copy_task("SST-2", tmp_path / "other")
    with open(other_dev / "dev.tsv", "a", encoding="utf-8") as f:
        f.write("a new sentence to score . \t1\n")
    sst2_run("--do_eval", "--eval_batch_size=1", "--max_seq_length=16", data_dir=other_dev)
    assert read_results(output_dir / "eval_results.txt")["global_step"] == 1

    # Refused: training on with other training data, or records of another length.
    changed_train = copy_task("SST-2", tmp_path / "changed")
    with open(changed_train / "train.tsv", "a", encoding="utf-8") as f:
        f.write("one more training sentence . \t0\n")
    with pytest.raises(run_dir.RunDirError, match="other training data settings "
                       f"\\(train_data\\.{re.escape(str(sst2 / 'train.tsv'))}: '95 bytes, "
                       "ends [0-9a-f]{16}' there, None now; train_data\\..*changed.*: None "
                       "there, '127 bytes"):
        sst2_run("--do_train", data_dir=changed_train)
    with pytest.raises(run_dir.RunDirError, match="max_seq_length: 32 there, 16 now"):
        sst2_run("--do_train", "--max_seq_length=16")

    # Allowed: a longer training goes on from the last step; a shorter one is refused.
    sst2_run("--do_train", "--do_eval", "--num_train_epochs=2")
    assert read_results(output_dir / "eval_results.txt")["global_step"] == 2
    with pytest.raises(run_dir.RunDirError, match="num_train_steps: 2 there, 1 now"):
        sst2_run("--do_train")


def test_eval_every_steps_keeps_the_best_stops_early_and_later_runs_use_it(
        run_main, google_checkpoint, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="absl")
    data_dir, output_dir = copy_task("MRPC", tmp_path), tmp_path / "output"
    logs = "--verbosity=0"  # absl's: INFO lines, which parsing the flags would turn off
    # 4 steps, evaluated after each; a rate too small to change the one dev example's
    # prediction, so the f1 never gains after step 1: patience 1 stops at step 2.
    run_main("--task_name=MRPC", "--do_train", "--eval_every_steps=1",
             "--early_stopping_patience=1", logs,
             *small_flags(google_checkpoint, data_dir, output_dir), "--num_train_epochs=4",
             "--learning_rate=1e-9")
    assert "Stopped early at step 2: no gain in 1 evaluations, best at step 1." in (
        caplog.messages)
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-2")
    assert read_tsv(output_dir / "eval_history.tsv")[0] == [
        "step", "eval_accuracy", "eval_loss", "f1"]
    assert [row[0] for row in read_tsv(output_dir / "eval_history.tsv")[1:]] == ["1", "2"]
    best = json.loads((output_dir / "best" / "best.json").read_text())
    assert (best["step"], best["metric"]) == (1, "f1")
    # A later run on the folder evaluates (and would predict and export) the best model.
    caplog.clear()
    run_main("--task_name=MRPC", "--do_eval", logs,
             *small_flags(google_checkpoint, data_dir, output_dir))
    assert any(m.startswith("Evaluating, predicting and exporting with the best model, step 1 "
                            "(f1 = ") for m in caplog.messages)
    assert read_results(output_dir / "eval_results.txt")["global_step"] == 1
    with pytest.raises(finetune.FinetuneError, match="--early_stopping_patience counts"):
        run_main("--task_name=MRPC", "--do_train", "--early_stopping_patience=2",
                 *small_flags(google_checkpoint, data_dir, tmp_path / "other"))


def test_export_dir_with_only_output_dir_takes_the_runs_model_and_lengths(mrpc_run, run_main,
                                                                          tmp_path):
    """A finished run's folder holds its config, vocab, casing, task and max_seq_length."""
    _, _, output_dir, _ = mrpc_run
    export_dir = tmp_path / "export"
    run_main(f"--output_dir={output_dir}", f"--export_dir={export_dir}")
    info = export_runner.read_info(str(export_dir))
    assert (info["task"], info["max_seq_length"]) == ("ClassificationTask", 32)
    assert export_runner.trained_inputs(str(export_dir)) == ["text_a", "text_b"]
    with pytest.raises(app.UsageError, match=(
            r"^--max_seq_length=128: .*output's model was trained with --max_seq_length=32, "
            "and an export keeps it: drop the flag$")):
        run_main("--task_name=MRPC", f"--output_dir={output_dir}", "--max_seq_length=128",
                 f"--export_dir={tmp_path / 'not_written'}")
    assert not (tmp_path / "not_written").exists()
