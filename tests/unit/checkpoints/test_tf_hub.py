"""TF Hub's BERT interface: a bert_tf model exported as encoder + preprocessor, and read back."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoints, model_files
from bert_tf.model.modeling import BertModel
from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import VOCAB, tiny_google_checkpoint

ROOT = helpers.ROOT
GLUE = os.path.join(ROOT, "tests", "fixtures", "glue")
TEXTS = ["The quick brown fox jumped.", "Héllo, WORLD! unaffable runner",
         "a b c", "jumps over the lazy dog"]


def run_script(script, *flag_args, env=None):
    """Runs a script of the repository; returns the CompletedProcess."""
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *flag_args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env=env)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tiny Google checkpoint and its TF Hub export, written by convert_checkpoint.py."""
    folder = tmp_path_factory.mktemp("hub")
    _, model = tiny_google_checkpoint(str(folder / "google"))
    result = run_script("convert_checkpoint.py", f"--input={folder / 'google'}",
                        f"--output={folder / 'tf_hub'}", "--output_format=tf_hub")
    assert result.returncode == 0, result.stderr[-3000:]
    return folder / "tf_hub", model


def _reference(model, seq_length=64):
    """TEXTS as bert_tf tokenizes and packs them, and its encoder's outputs.

    The preprocessor's length is TF Hub's 128 cut to the tiny model's 64 positions.
    """
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    packed = [tokenization.pack_ids(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)),
                                    max_seq_length=seq_length, cls_id=tokenizer.vocab["[CLS]"],
                                    sep_id=tokenizer.vocab["[SEP]"]) for text in TEXTS]
    inputs = {key: np.array([example[key] for example in packed], np.int32)
              for key in packed[0]}
    outputs = model(inputs, training=False)
    return tokenizer, inputs, outputs


@pytest.mark.slow
def test_the_export_has_tf_hubs_layout_vocab_and_casing(exported):
    folder, _ = exported
    assert sorted(os.listdir(folder)) == ["encoder", "preprocessor"]
    for part in ("encoder", "preprocessor"):
        assert os.path.exists(folder / part / "saved_model.pb")
        with open(folder / part / "assets" / "vocab.txt", encoding="utf-8") as f, \
                open(VOCAB, encoding="utf-8") as original:
            assert f.read() == original.read()
    encoder = tf.saved_model.load(str(folder / "encoder"))
    assert bool(encoder.do_lower_case.numpy())
    assert len(encoder.trainable_variables) == 39 and list(encoder.regularization_losses) == []
    assert set(encoder.signatures["serving_default"].structured_outputs) == {
        "pooled_output", "sequence_output", "default"}


@pytest.mark.slow
def test_hub_keras_layer_matches_bert_tf_then_trains_and_predicts(exported, tmp_path):
    folder, model = exported
    tokenizer, inputs, outputs = _reference(model)
    reference = tmp_path / "reference.npz"
    np.savez(reference, texts=np.array([t.encode() for t in TEXTS]),
             pooled=outputs["pooled_output"].numpy(),
             sequence=outputs["sequence_output"].numpy())
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1"}
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "helpers", "hub_keras_layer_check.py"),
         str(folder), str(reference)],
        capture_output=True, text=True, timeout=300, check=False, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])

    assert found["keras"].startswith("tf_keras")
    assert found["input_keys"] == ["input_mask", "input_type_ids", "input_word_ids"]
    assert found["input_word_ids"] == inputs["input_ids"].tolist()
    assert found["input_mask"] == inputs["input_mask"].tolist()
    assert found["output_keys"] == ["default", "encoder_outputs", "pooled_output",
                                    "sequence_output"]
    assert found["num_encoder_outputs"] == 2 and found["default_is_pooled"]
    assert found["pooled_error"] < 1e-5 and found["sequence_error"] < 1e-5

    ids = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)) for text in TEXTS[:2]]
    pair = tokenization.pack_ids(*ids, max_seq_length=16, cls_id=tokenizer.vocab["[CLS]"],
                                 sep_id=tokenizer.vocab["[SEP]"])
    assert found["pair_input_word_ids"] == [pair["input_ids"]]
    assert found["pair_input_type_ids"] == [pair["segment_ids"]]

    # Fine-tuning moved every weight of the encoder and lowered the loss.
    assert found["encoder_trainable_weights"] == 39
    assert found["encoder_weights_changed"] == 39
    assert found["loss_after"] < found["loss_before"]
    assert found["predictions_shape"] == [len(TEXTS), 2]
    # Loading the trainable encoder warns of no gradient: its gradients are
    # TensorFlow's own, of the saved forward ops.
    assert "custom gradients" not in result.stderr
    # TensorFlow's C++ startup lines, printed before any Python, aside.
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(
        ("I0000", "W0000", "E0000", "WARNING: All log messages before absl"))]
    assert len(set(lines)) == len(lines) and max(map(len, lines), default=0) <= 300, (
        result.stderr)


@pytest.mark.slow
def test_init_checkpoint_takes_the_encoder_folder(exported, tmp_path):
    folder, model = exported
    encoder = str(folder / "encoder")
    # The vocab and casing come from inside the SavedModel.
    files = model_files.find(encoder, max_seq_length=32)
    assert files.vocab_file == os.path.join(encoder, "assets", "vocab.txt")
    assert files.do_lower_case is True
    assert files.bert_config == model.config

    output_dir = tmp_path / "output"
    data_dir = tmp_path / "MRPC"
    tf.io.gfile.makedirs(str(data_dir))
    for name in ("train.tsv", "dev.tsv"):
        tf.io.gfile.copy(os.path.join(GLUE, "MRPC", name), str(data_dir / name))
    # A rate of 1e-12 leaves the weights as they started, to compare.
    result = run_script(
        "run_classifier.py", "--task_name=MRPC", "--do_train=true", "--do_eval=true",
        f"--data_dir={data_dir}", f"--init_checkpoint={encoder}", f"--output_dir={output_dir}",
        "--max_seq_length=32", "--train_batch_size=2", "--eval_batch_size=2",
        "--num_train_epochs=1", "--learning_rate=1e-12", "--jit_compile=false")
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Loaded 39 tensors from tf_hub checkpoint {encoder}" in result.stderr
    assert (output_dir / "eval_results.txt").exists()

    trained = BertModel(model.config)
    checkpoints.load_weights(str(output_dir), trained)
    _, inputs, expected = _reference(model, seq_length=32)
    got = trained(inputs, training=False)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5)


@pytest.mark.slow
def test_the_folder_of_a_tf_hub_output_reads_as_its_encoder(exported, tmp_path):
    """The folder convert_checkpoint.py wrote, given back whole as --init_checkpoint or --input."""
    folder, model = exported
    encoder = str(folder / "encoder")
    files = model_files.find(str(folder), max_seq_length=32)
    assert files.vocab_file == os.path.join(encoder, "assets", "vocab.txt")
    assert files.do_lower_case is True and files.bert_config == model.config
    report = checkpoints.load_weights(str(folder), BertModel(model.config))
    assert (report.format, report.path, len(report.loaded)) == ("tf_hub", encoder, 39)
    checkpoints.convert(str(folder), str(tmp_path / "hf"), "hf", [])
    assert open(tmp_path / "hf" / "vocab.txt").read() == open(VOCAB).read()


@pytest.mark.slow
def test_a_saved_model_that_is_no_encoder_is_refused_naming_it(exported, tiny_config):
    folder, _ = exported
    preprocessor = str(folder / "preprocessor")
    with pytest.raises(checkpoints.CheckpointError, match="a SavedModel, but not a BERT encoder"):
        checkpoints.load_weights(preprocessor, BertModel(tiny_config))


def test_a_tf_hub_encoder_that_tf_model_garden_exported_reads_with_the_same_outputs():
    # TF Hub's published BERT encoders, in small (tools/make_tf_hub_fixture.py).
    folder = os.path.join(ROOT, "tests", "fixtures", "tf_hub_encoder")
    files = model_files.find(folder, max_seq_length=12)
    assert files.do_lower_case is True
    assert files.vocab_file == os.path.join(folder, "assets", "vocab.txt")
    config = files.bert_config
    assert (config.vocab_size, config.hidden_size, config.num_hidden_layers,
            config.num_attention_heads, config.intermediate_size,
            config.max_position_embeddings, config.type_vocab_size) == (100, 32, 2, 2, 64, 64, 2)
    model = BertModel(config)
    report = checkpoints.load_weights(folder, model)
    assert report.format == "tf_hub" and len(report.loaded) == 39
    reference = np.load(os.path.join(folder, "reference.npz"))
    outputs = model({key: reference[key] for key in ("input_ids", "input_mask", "segment_ids")},
                    training=False)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(outputs[key], reference[key], atol=1e-5)


def test_an_export_without_a_vocab_asks_for_vocab_file_and_writes_nothing(tmp_path):
    tiny_google_checkpoint(str(tmp_path / "google"))
    os.remove(tmp_path / "google" / "vocab.txt")
    with pytest.raises(ValueError, match="a tf_hub output holds the vocab: pass --vocab_file"):
        checkpoints.convert(str(tmp_path / "google"), str(tmp_path / "hub"), "tf_hub", [])
    assert not (tmp_path / "hub").exists()


def test_an_encoder_folder_of_a_users_files_is_refused_and_nothing_is_written(tmp_path):
    tiny_google_checkpoint(str(tmp_path / "google"))
    encoder = tmp_path / "hub" / "encoder"
    encoder.mkdir(parents=True)
    (encoder / "notes.txt").write_text("mine")
    with pytest.raises(checkpoints.CheckpointError, match=(
            f"^{encoder} holds files that are no part of an earlier SavedModel \\(notes.txt\\)"
            ", which writing the SavedModel there would delete: give a new or empty folder$")):
        checkpoints.convert(str(tmp_path / "google"), str(tmp_path / "hub"), "tf_hub", [])
    assert os.listdir(tmp_path / "hub") == ["encoder"]
    assert os.listdir(encoder) == ["notes.txt"]
