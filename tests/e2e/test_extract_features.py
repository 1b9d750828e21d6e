"""Tests for extract_features.py, run as a user runs it.

A tiny random BERT (2 layers, hidden 32) is saved as the original's release
folder (bert_model.ckpt, bert_config.json, vocab.txt), so the script finds its
config and vocab beside --init_checkpoint. Each test runs the script in a
subprocess; the formats, layers, pooling and parity are tested in-process in
test_feature_extraction.py.
"""

import collections
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.runtime import cpu
from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import HIDDEN, hidden_states, tiny_google_checkpoint

ROOT = helpers.ROOT
LINES = ["The quick brown fox jumped.", "How old are you? ||| What is your age?"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(checkpoint prefix, BertModel, FullTokenizer) of a tiny random BERT."""
    folder = tmp_path_factory.mktemp("tiny")
    prefix, model = tiny_google_checkpoint(str(folder))
    return prefix, model, tokenization.FullTokenizer(str(folder / "vocab.txt"))


def extract_features(*flag_args, env=None):
    """Runs extract_features.py; returns the CompletedProcess."""
    return subprocess.run([sys.executable, os.path.join(ROOT, "extract_features.py"),
                           *flag_args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False, env=env)


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_writes_the_originals_json_lines(tiny, tmp_path):
    prefix, model, tokenizer = tiny
    input_file = write_lines(tmp_path / "input.txt", LINES)
    output_file = tmp_path / "output.jsonl"
    result = extract_features(f"--input_file={input_file}", f"--output_file={output_file}",
                              f"--init_checkpoint={prefix}", "--layers=-1,-2",
                              "--max_seq_length=16", "--batch_size=8",
                              "--log_every_n_examples=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Extracted 1 of 2 examples" in result.stderr
    assert "Extracted 2 of 2 examples" in result.stderr

    raw = output_file.read_text(encoding="utf-8").splitlines()
    assert len(raw) == 2
    assert raw[0].startswith('{"linex_index": 0, "features": [{"token": "[CLS]", "layers": '
                             '[{"index": -1, "values": [')
    expected_tokens = [
        ["[CLS]", "the", "quick", "brown", "fox", "j", "##um", "##ped", ".", "[SEP]"],
        ["[CLS]", "how", "old", "are", "you", "?", "[SEP]", "what", "is", "your", "age", "?",
         "[SEP]"],
    ]
    states = [hidden_states(model, tokenizer, tokenizer.tokenize(LINES[0])),
              hidden_states(model, tokenizer, tokenizer.tokenize("How old are you?"),
                            tokenizer.tokenize("What is your age?"))]
    for i, (text, tokens, state) in enumerate(zip(raw, expected_tokens, states, strict=True)):
        line = json.loads(text)
        assert list(line) == ["linex_index", "features"] and line["linex_index"] == i
        assert [f["token"] for f in line["features"]] == tokens
        for position, feature in enumerate(line["features"]):
            assert list(feature) == ["token", "layers"]
            assert [list(layer) for layer in feature["layers"]] == [["index", "values"]] * 2
            assert [layer["index"] for layer in feature["layers"]] == [-1, -2]
            for layer, layer_state in zip(feature["layers"], (state[2], state[1]), strict=True):
                values = layer["values"]
                assert len(values) == HIDDEN
                assert all(isinstance(v, float) and v == round(v, 6) for v in values)
                np.testing.assert_allclose(values, layer_state[position], atol=1e-5)
        # The original's writer: json.dumps of ordered dicts, default separators.
        original = collections.OrderedDict(
            [("linex_index", i), ("features", [collections.OrderedDict(
                [("token", f["token"]), ("layers", [collections.OrderedDict(
                    [("index", layer["index"]), ("values", layer["values"])])
                    for layer in f["layers"]])]) for f in line["features"]])])
        assert json.dumps(original) == text


@pytest.mark.parametrize("case", ["empty line", "bare separator", "layers", "checkpoint"])
def test_bad_input_is_one_clear_line(tiny, tmp_path, case):
    prefix = tiny[0]
    lines = {"empty line": [LINES[0], "", LINES[1]],
             "bare separator": [LINES[0], "|||"]}.get(case, LINES)
    input_file = write_lines(tmp_path / "input.txt", lines)
    output_file = tmp_path / "output.jsonl"
    checkpoint = str(tmp_path / "missing.ckpt") if case == "checkpoint" else prefix
    layers = [] if case == "layers" else ["--layers=-1"]
    result = extract_features(f"--input_file={input_file}", f"--output_file={output_file}",
                              f"--init_checkpoint={checkpoint}", "--max_seq_length=16",
                              *layers)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    message = {
        "empty line": f"{input_file}:2: empty line",
        "bare separator": f"{input_file}:2: nothing on one side of '|||'",
        # The default --layers=-1,-2,-3,-4 asks for 4 layers of a 2-layer model.
        "layers": "--layers=-1,-2,-3,-4: layer -3 is out of range: the model has 2 layers",
        "checkpoint": f"--init_checkpoint={checkpoint}: checkpoint not found",
    }[case]
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith(f"extract_features.py: error: {message}"), result.stderr[-2000:]
    assert not os.path.exists(output_file)


def test_features_are_float32_by_default_on_a_cpu_with_bfloat16_units(tiny, tmp_path):
    input_file = write_lines(tmp_path / "input.txt", LINES)
    env = {**os.environ, cpu.CPU_BFLOAT16_ENV: "1"}
    result = extract_features(f"--input_file={input_file}",
                              f"--output_file={tmp_path / 'out.jsonl'}",
                              f"--init_checkpoint={tiny[0]}", "--layers=-1",
                              "--max_seq_length=32", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Precision policy: float32 (as given)" in result.stderr
    # The training scripts' setting is not the features' precision.
    result = extract_features(f"--input_file={input_file}",
                              f"--output_file={tmp_path / 'trained.jsonl'}",
                              f"--init_checkpoint={tiny[0]}", "--inference_precision=as_trained")
    assert result.returncode != 0
    assert "--inference_precision=as_trained: extract_features.py trains nothing" in (
        result.stderr)


def test_bfloat16_computation_writes_close_float32_values(tiny, tmp_path):
    prefix = tiny[0]
    input_file = write_lines(tmp_path / "input.txt", LINES)
    values = {}
    # bfloat16 under the flag's earlier name, which still works.
    for flag, choice in (("inference_precision", "float32"), ("mixed_precision", "bfloat16")):
        output_file = tmp_path / f"{choice}.jsonl"
        result = extract_features(f"--input_file={input_file}", f"--output_file={output_file}",
                                  f"--init_checkpoint={prefix}", "--layers=-1",
                                  "--max_seq_length=32", f"--{flag}={choice}")
        assert result.returncode == 0, result.stderr[-2000:]
        assert f"Precision policy: {'mixed_' if choice == 'bfloat16' else ''}{choice}" \
            in result.stderr
        lines = [json.loads(line) for line in output_file.read_text().splitlines()]
        values[choice] = np.array([layer["values"] for line in lines
                                      for feature in line["features"]
                                      for layer in feature["layers"]])
    np.testing.assert_allclose(values["bfloat16"], values["float32"], atol=0.1)
    assert not np.array_equal(values["bfloat16"], values["float32"])
