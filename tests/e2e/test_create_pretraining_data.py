"""Tests for the create_pretraining_data.py script, run as a user runs it.

Each test runs the script in a subprocess on the tiny fixtures:
pretraining_corpus.txt and pretraining_vocab.txt (see
tests/unit/pretraining_data/test_pretraining_data.py).
"""

import os
import re
import subprocess
import sys

import pytest
import tensorflow as tf

from tests import helpers
from tests.helpers import tfds_helpers

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
CORPUS = os.path.join(FIXTURES, "pretraining_corpus.txt")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")

FLAG_NAMES = (
    "input_file", "output_file", "vocab_file", "do_lower_case", "do_whole_word_mask",
    "wwm_decision_per_piece", "max_seq_length", "max_predictions_per_seq", "random_seed",
    "dupe_factor", "masked_lm_prob", "short_seq_prob", "num_workers", "window_mb", "errors",
    "input_format", "tfds_name", "tfds_split", "tfds_text_feature", "tfds_data_dir",
    "max_documents",
)


def run_script(*flags):
    """Runs the script with flags; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "create_pretraining_data.py"), *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_writes_records_and_logs_a_summary(tmp_path):
    out = tmp_path / "out"
    outputs = [str(out / "a.tfrecord"), str(out / "b.tfrecord")]
    result = run_script(f"--input_file={CORPUS}", f"--output_file={','.join(outputs)}",
                        f"--vocab_file={VOCAB}", "--max_seq_length=32",
                        "--max_predictions_per_seq=5", "--dupe_factor=3")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(out)) == ["a.tfrecord", "b.tfrecord"]
    written = int(re.search(r"instances written: (\d+)", result.stderr).group(1))
    assert written == sum(1 for _ in tf.data.TFRecordDataset(outputs)) > 0
    for statistic in ("instances/s", "tokens written", "mean mask rate", "random-next share",
                      "truncated share"):
        assert statistic in result.stderr


def test_help_explains_every_flag():
    result = run_script("--helpshort")
    for name in FLAG_NAMES:
        match = re.search(rf"--(\[no\])?{name}:(.*)", result.stdout)
        assert match and match.group(2).strip(), f"--{name} has no help"


@pytest.mark.parametrize("flags, message", [
    ({"input_file": "missing.txt"}, "input file not found: missing.txt"),
    ({"input_file": "*.nothing"}, "no input file matches"),
    ({"vocab_file": "missing_vocab.txt"}, "Cannot read vocab file missing_vocab.txt"),
    ({"max_seq_length": "4"}, "bad flag: max_seq_length=4 cannot hold a pair"),
    ({"output_file": os.path.join(CORPUS, "out.tfrecord")},
     f"cannot write {CORPUS}/out.tfrecord: {CORPUS} is a file, not a folder (--output_file)"),
    ({"masked_lm_prob": "0"}, "bad flag: masked_lm_prob must be in (0, 1], got 0.0: every "
     "record masks at least one token (the original's max(1, ...)), so 0 would still mask one "
     "a record; give the share of the tokens to mask, e.g. 0.15"),
    ({"input_file": FIXTURES}, f"--input_file={FIXTURES} is a folder; give its files, e.g. "
     f"--input_file='{FIXTURES}/*.txt' (quoted, so that the shell leaves the glob)"),
    ({"input_format": "words"},
     "flag --input_format=words: value should be one of <sentences|paragraphs|lines|files>"),
    ({"input_file": ""}, "error: give the text: --input_file or --tfds_name"),
    ({"tfds_name": "imdb_reviews"}, "error: give --input_file or --tfds_name, not both"),
    ({"input_file": "", "tfds_name": "no_such_data_set"},
     "error: --tfds_name=no_such_data_set: Dataset no_such_data_set not found."),
])
def test_bad_input_gets_a_clear_error(tmp_path, flags, message):
    settings = {"input_file": CORPUS, "output_file": str(tmp_path / "out.tfrecord"),
                "vocab_file": VOCAB}
    settings.update(flags)
    result = run_script(*(f"--{k}={v}" for k, v in settings.items()))
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not os.path.exists(tmp_path / "out.tfrecord")


def test_plain_text_and_tfds_text_go_in_through_flags_of_both_scripts(tmp_path):
    data_dir = tfds_helpers.write_text_dataset(tmp_path / "tfds")
    vocab = tmp_path / "vocab.txt"
    learned = subprocess.run(
        [sys.executable, os.path.join(ROOT, "learn_vocab.py"), "--tfds_name=tiny_documents",
         f"--tfds_data_dir={data_dir}", "--tfds_split=train[1:]", f"--output_file={vocab}",
         "--vocab_size=150", "--min_count=1", "--num_unused=0"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert learned.returncode == 0, learned.stderr
    # train[1:] holds the second and fourth texts: four sentences.
    assert "input: 4 lines" in learned.stderr
    records = [str(tmp_path / "tfds.tfrecord"), str(tmp_path / "lines.tfrecord")]
    from_tfds = run_script("--tfds_name=tiny_documents", f"--tfds_data_dir={data_dir}",
                           "--max_documents=2", f"--output_file={records[0]}",
                           f"--vocab_file={VOCAB}", "--max_seq_length=32",
                           "--max_predictions_per_seq=5", "--dupe_factor=2")
    assert from_tfds.returncode == 0, from_tfds.stderr
    assert "documents: 2 (" in from_tfds.stderr
    lines = tmp_path / "documents.txt"
    lines.write_text("".join(text.replace("\n", " ") + "\n" for text in tfds_helpers.TEXTS),
                     encoding="utf-8")
    from_lines = run_script(f"--input_file={lines}", "--input_format=lines",
                            f"--output_file={records[1]}", f"--vocab_file={vocab}",
                            "--max_seq_length=32", "--max_predictions_per_seq=5",
                            "--dupe_factor=2")
    assert from_lines.returncode == 0, from_lines.stderr
    assert "documents: 3 (" in from_lines.stderr
    for path in records:
        assert sum(1 for _ in tf.data.TFRecordDataset(path)) > 0


def test_a_vocab_with_a_repeated_token_names_both_lines(tmp_path):
    vocab = tmp_path / "vocab.txt"
    with open(VOCAB, encoding="utf-8") as f:
        lines = f.read().splitlines()
    vocab.write_text("\n".join(lines + [lines[10]]) + "\n", encoding="utf-8")
    result = run_script(f"--input_file={CORPUS}", f"--output_file={tmp_path / 'out.tfrecord'}",
                        f"--vocab_file={vocab}")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (f"Vocab file {vocab}: line {len(lines) + 1} repeats line 11, {lines[10]!r}"
            in result.stderr.strip().splitlines()[-1])
    assert not (tmp_path / "out.tfrecord").exists()


def test_a_length_that_leaves_every_pair_random_is_warned(tmp_path):
    result = run_script(f"--input_file={CORPUS}", f"--output_file={tmp_path / 'out.tfrecord'}",
                        f"--vocab_file={VOCAB}", "--max_seq_length=8",
                        "--max_predictions_per_seq=2", "--dupe_factor=1")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        "create_pretraining_data.py: warning: --max_seq_length=8: 100% of the next-sentence "
        "pairs are random (about 50% expected): a chunk of 5 word pieces seldom holds two "
        "sentences, so the next-sentence labels teach little; give a larger --max_seq_length"]
    fine = run_script(f"--input_file={CORPUS}", f"--output_file={tmp_path / 'out.tfrecord'}",
                      f"--vocab_file={VOCAB}", "--max_seq_length=64",
                      "--max_predictions_per_seq=5", "--dupe_factor=1")
    assert fine.returncode == 0 and "warning:" not in fine.stderr


def test_a_one_sentence_corpus_is_an_error_not_an_empty_file(tmp_path):
    corpus = tmp_path / "one.txt"
    corpus.write_text("The keeper wrote the weather.\n", encoding="utf-8")
    result = run_script(f"--input_file={corpus}", f"--output_file={tmp_path / 'out.tfrecord'}",
                        f"--vocab_file={VOCAB}")
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [
        f"create_pretraining_data.py: error: no instance could be made from {corpus} (1 "
        "document(s), 1 too short to form a pair), so nothing was written: the shortest input "
        "that makes one is two one-sentence documents (lines separated by a blank line) or one "
        "document of two sentences (two lines)"]
    assert os.listdir(tmp_path) == ["one.txt"]


def test_non_utf8_input_is_named_unless_replaced(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("The keeper wrote.\nThe café opened.\n\nGulls circled.\n".encode("latin-1"))
    flags = [f"--input_file={path}", f"--output_file={tmp_path / 'out.tfrecord'}",
             f"--vocab_file={VOCAB}"]
    result = run_script(*flags)
    assert result.returncode != 0
    assert f"{path}:2: byte 8 of the line is not UTF-8" in result.stderr
    assert run_script(*flags, "--errors=replace").returncode == 0


def test_a_killed_run_takes_its_workers_with_it_and_the_next_run_cleans_up(tmp_path):
    corpus = tmp_path / "corpus.txt"
    with open(CORPUS, encoding="utf-8") as f:
        text = f.read()
    corpus.write_text(text * 2000, encoding="utf-8")
    output = tmp_path / "out.tfrecord"
    command = [sys.executable, os.path.join(ROOT, "create_pretraining_data.py"),
               f"--input_file={corpus}", f"--output_file={output}", f"--vocab_file={VOCAB}",
               "--max_seq_length=32", "--max_predictions_per_seq=5", "--dupe_factor=100",
               "--num_workers=2", "--window_mb=0.05"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    # The first progress line comes 10 s in, after the workers have done
    # windows. The input is large enough (about 35 s of work on a fast CPU)
    # that the run is still going then: with dupe_factor=20 it finished in 7 s
    # on an AVX512-BF16 EPYC and left nothing to kill.
    for line in process.stderr:
        if "instances/s" in line:
            break
    process.kill()
    # stderr reaches its end only when every process holding it (the workers
    # too) has exited: a worker left running would make this time out.
    process.communicate(timeout=60)
    stale = sorted(name for name in os.listdir(tmp_path) if ".incomplete-" in name)
    assert stale == [f"out.tfrecord.incomplete-{process.pid}",
                     f"out.tfrecord.incomplete-windows-{process.pid}"]
    assert not output.exists()
    result = run_script(f"--input_file={CORPUS}", f"--output_file={output}",
                        f"--vocab_file={VOCAB}", "--max_seq_length=32",
                        "--max_predictions_per_seq=5")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "out.tfrecord"]
