"""Tests for bert_tf/cli.py: one line per bad input, --help exits 0; and the scripts that use it."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests import helpers

ROOT = helpers.ROOT
SCRIPTS = ("create_pretraining_data.py", "run_pretraining.py", "run_classifier.py",
           "run_ner.py", "extract_features.py", "convert_checkpoint.py", "predict_text.py",
           "predict_entities.py")

PROGRAM = """
import logging
import sys
from bert_tf import cli

# As TensorFlow's logger is set up on import, before absl's handler is on the root logger.
logging.getLogger("tensorflow").addHandler(logging.StreamHandler())
logging.getLogger("tensorflow").setLevel(logging.INFO)

def main(argv):
    kind = argv[1]
    if kind == "log":
        logging.getLogger("tensorflow").info("Assets written to: somewhere")
    if kind == "value":
        raise ValueError("data.txt:3: no tag column\\n(second line)")
    if kind == "file":
        open("/nonexistent/file.txt")
    if kind == "bug":
        raise TypeError("a bug keeps its traceback")
    print("fine")

cli.run(main)
"""


def _run(*args, script=None):
    command = [sys.executable, os.path.join(ROOT, script)] if script else [
        sys.executable, "-c", PROGRAM]
    return subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("kind,line", [
    ("value", "-c: error: data.txt:3: no tag column (second line)"),
    ("file", "-c: error: [Errno 2] No such file or directory: '/nonexistent/file.txt'")])
def test_a_user_error_is_one_line_and_exit_1(kind, line):
    result = _run(kind)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [line]


def test_tensorflows_log_lines_print_once():
    result = _run("log")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("Assets written to: somewhere") == 1, result.stderr


def test_verbose_adds_the_traceback_and_a_bug_keeps_it():
    result = _run("--verbose", "value")
    assert result.returncode == 1 and "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("-c: error: data.txt:3:")
    bug = _run("bug")
    assert bug.returncode == 1 and "Traceback" in bug.stderr and "TypeError" in bug.stderr
    assert _run("ok").stdout == "fine\n"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_exits_0(script):
    result = _run("--help", script=script)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--" in result.stdout
    if script in ("run_pretraining.py", "run_classifier.py", "run_ner.py",
                  "extract_features.py"):
        # Defined in bert_tf/runtime/xla.py, not in the script: shown all the same.
        assert "--jit_compile: <auto|true|false>: Compile the train" in result.stdout


def test_a_misspelt_config_key_stops_run_classifier_in_one_line(tmp_path):
    config = {"vocab_size": 10, "hidden_size": 32, "num_hiden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 64}
    (tmp_path / "bert_config.json").write_text(json.dumps(config))
    (tmp_path / "vocab.txt").write_text("".join(f"t{i}\n" for i in range(10)))
    result = _run("--task_name=SST-2", f"--data_dir={tmp_path}", "--do_train",
                  f"--bert_config_file={tmp_path / 'bert_config.json'}",
                  f"--vocab_file={tmp_path / 'vocab.txt'}", f"--output_dir={tmp_path / 'out'}",
                  script="run_classifier.py")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"run_classifier.py: error: {tmp_path / 'bert_config.json'}: unknown key "
        "'num_hiden_layers'; did you mean 'num_hidden_layers'?")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("script,flag,message", [
    ("run_classifier.py", "--train_batch_size=0", "flag --train_batch_size=0: 0 is not a "
     "positive integer"),
    ("run_classifier.py", "--eval_batch_size=0", "flag --eval_batch_size=0: 0 is not"),
    ("run_classifier.py", "--predict_batch_size=0", "flag --predict_batch_size=0: 0 is not"),
    ("run_classifier.py", "--learning_rate=-1", "--learning_rate must not be negative"),
    ("run_classifier.py", "--max_seq_length=2", "flag --max_seq_length=2: 2 is not integer "
     ">= 4"),
    ("run_pretraining.py", "--max_predictions_per_seq=200",
     "--max_predictions_per_seq cannot exceed --max_seq_length"),
])
def test_flags_out_of_bounds_are_refused_before_any_work(tmp_path, script, flag, message):
    given = (["--input_file=x"] if script == "run_pretraining.py"
             else ["--task_name=SST-2", f"--data_dir={tmp_path}"])
    result = _run(*given, f"--output_dir={tmp_path / 'out'}", "--do_train", flag,
                  script=script)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert lines[-1].startswith(f"{script}: error: ") and message in lines[-1]
    # One line, not the ~120 lines of absl's usage before it.
    assert "flags:" not in result.stderr and "--output_dir:" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["unknown label", "not utf-8", "output_dir is a file",
                                  "missing column", "header only", "no data_dir",
                                  "no checkpoint", "bad config value"])
def test_run_classifier_data_errors_are_one_line(tmp_path, case):
    data_dir = tmp_path / "MRPC"
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "glue", "MRPC"), data_dir)
    vocab = os.path.join(ROOT, "tests", "fixtures", "pretraining_vocab.txt")
    with open(vocab, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    config = {"vocab_size": vocab_size, "hidden_size": 32, "num_hidden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 64,
              "max_position_embeddings": 64}
    (tmp_path / "bert_config.json").write_text(json.dumps(config))
    output_dir = tmp_path / "out"
    train = data_dir / "train.tsv"
    extra = []
    if case == "unknown label":
        with open(train, "a", encoding="utf-8") as f:
            f.write("7\t1\t2\ta sentence\tanother\n")
        expected = f"{train}:4: unknown label '7'"
    elif case == "not utf-8":
        with open(train, "ab") as f:
            f.write(b"1\t1\t2\tcaf\xe9\tanother\n")
        expected = f"{train}:4"
    elif case == "output_dir is a file":
        output_dir.write_text("a file")
        expected = f"{output_dir} is not a directory"
    elif case == "missing column":
        with open(train, "a", encoding="utf-8") as f:
            f.write("1\t1\t2\tonly one sentence\n")
        expected = f"{train}:4: 4 columns, but the rows of this mrpc file have 5"
    elif case == "header only":
        train.write_text(train.read_text().splitlines()[0] + "\n")
        expected = "mrpc: no train examples in"
    elif case == "no data_dir":
        shutil.rmtree(data_dir)
        expected = f"mrpc: data file not found: {train}"
    elif case == "no checkpoint":
        extra = [f"--init_checkpoint={tmp_path / 'missing' / 'bert_model.ckpt'}"]
        expected = "checkpoint not found"
    else:
        config["num_attention_heads"] = 5
        (tmp_path / "bert_config.json").write_text(json.dumps(config))
        expected = "hidden_size (32) is not a multiple of num_attention_heads (5)"
    result = _run("--task_name=MRPC", f"--data_dir={data_dir}", "--do_train",
                  f"--bert_config_file={tmp_path / 'bert_config.json'}", f"--vocab_file={vocab}",
                  f"--output_dir={output_dir}", "--max_seq_length=32", "--train_batch_size=1",
                  "--jit_compile=false", *extra, script="run_classifier.py")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert lines[-1].startswith("run_classifier.py: error: ") and expected in lines[-1]


@pytest.mark.parametrize("case", ["truncated safetensors", "truncated google", "no input"])
def test_convert_checkpoint_bad_inputs_are_one_line(tmp_path, tiny_config, case):
    from bert_tf.checkpoints import checkpoints
    from bert_tf.model.modeling import BertModel

    encoder = BertModel(tiny_config)
    if case == "truncated safetensors":
        source = checkpoints.save_hf_folder(str(tmp_path / "hf"), encoder)
        data = tmp_path / "hf" / "model.safetensors"
    else:
        source = checkpoints.save_google_checkpoint(str(tmp_path / "g" / "bert_model.ckpt"),
                                                    encoder)
        (data,) = (tmp_path / "g").glob("bert_model.ckpt.data-*")
    data.write_bytes(data.read_bytes()[:1000])
    expected = "cannot be read"
    if case == "no input":
        source, expected = str(tmp_path / "nothing"), "checkpoint not found"
    result = _run(f"--input={source}", f"--output={tmp_path / 'out'}", "--output_format=tf2",
                  script="convert_checkpoint.py")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert lines[-1].startswith("convert_checkpoint.py: error: ") and expected in lines[-1]
    assert not (tmp_path / "out").exists()


def _limit_file_size():
    """For the child: files may grow to 100 kB only, as on a full disk.

    Writing past the limit then fails with EFBIG instead of killing the
    process (SIGXFSZ ignored); rlimits bind root too, unlike permissions.
    """
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))


@pytest.mark.slow
@pytest.mark.parametrize("output_format", ["hf", "google", "tf2"])
def test_a_conversion_that_cannot_write_leaves_nothing_and_says_so(tmp_path, tiny_config,
                                                                   output_format):
    from bert_tf.checkpoints import checkpoints
    from bert_tf.model.modeling import BertModel

    source = checkpoints.save_hf_folder(str(tmp_path / "hf"), BertModel(tiny_config))
    output = tmp_path / "out" / ("converted" if output_format == "hf" else "bert_model.ckpt")
    script = [sys.executable, os.path.join(ROOT, "convert_checkpoint.py"), f"--input={source}",
              f"--output={output}", f"--output_format={output_format}"]
    full = subprocess.run(script, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False, preexec_fn=_limit_file_size)
    lines = full.stderr.strip().splitlines()
    assert full.returncode == 1 and "Traceback" not in full.stderr
    assert lines[-1].startswith(f"convert_checkpoint.py: error: cannot write {output}: ")
    assert "File too large" in lines[-1]
    # Nothing that looks like a result, and no temporary folder.
    assert sorted(os.listdir(tmp_path)) == ["hf"]

    # Under a path that cannot be a folder: the same one line.
    (tmp_path / "a_file").write_text("")
    blocked = tmp_path / "a_file" / "converted"
    result = _run(f"--input={source}", f"--output={blocked}",
                  f"--output_format={output_format}", script="convert_checkpoint.py")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(
        f"convert_checkpoint.py: error: cannot write {blocked}: ")
    assert sorted(os.listdir(tmp_path)) == ["a_file", "hf"]
