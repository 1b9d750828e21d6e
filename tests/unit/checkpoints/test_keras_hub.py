"""keras-hub presets: a bert_tf model written as a preset, and a keras-hub preset read back."""

import json
import os
import subprocess
import sys

import keras_hub
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
TEXTS = ["The quick brown fox jumped.", "Héllo, WORLD! unaffable runner"]


def _inputs(vocab_file=VOCAB, seq_length=16):
    """TEXTS[0] and TEXTS[1] as one bert_tf pair, and TEXTS[0] alone, padded."""
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    ids = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)) for text in TEXTS]
    special = {"cls_id": tokenizer.vocab["[CLS]"], "sep_id": tokenizer.vocab["[SEP]"]}
    packed = [tokenization.pack_ids(*ids, max_seq_length=seq_length, **special),
              tokenization.pack_ids(ids[0], max_seq_length=seq_length, **special)]
    return ids, {key: np.array([example[key] for example in packed], np.int32)
                 for key in packed[0]}


def _keras_hub_outputs(backbone, inputs):
    """A BertBackbone's outputs for bert_tf's inputs."""
    return backbone({"token_ids": inputs["input_ids"], "padding_mask": inputs["input_mask"],
                     "segment_ids": inputs["segment_ids"]})


@pytest.mark.slow
def test_a_bert_tf_preset_loads_in_keras_hub_with_the_same_outputs_and_ids(tmp_path):
    _, model = tiny_google_checkpoint(str(tmp_path / "google"))
    preset = tmp_path / "preset"
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "convert_checkpoint.py"),
         f"--input={tmp_path / 'google'}", f"--output={preset}", "--output_format=keras_hub"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert {"config.json", "model.weights.h5", "tokenizer.json", "metadata.json"} <= set(
        os.listdir(preset))
    with open(preset / "config.json", encoding="utf-8") as f:
        config = json.load(f)["config"]
    assert (config["num_layers"], config["hidden_dim"], config["num_heads"],
            config["intermediate_dim"], config["max_sequence_length"],
            config["num_segments"]) == (2, 32, 2, 64, 64, 2)

    backbone = keras_hub.models.BertBackbone.from_preset(str(preset))
    tokenizer = keras_hub.models.BertTokenizer.from_preset(str(preset))
    ids, inputs = _inputs()
    for text, expected in zip(TEXTS, ids, strict=True):
        assert np.asarray(tokenizer(text)).tolist() == expected
    expected = model(inputs, training=False)
    got = _keras_hub_outputs(backbone, inputs)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5)


@pytest.fixture(scope="module")
def keras_hub_preset(tmp_path_factory):
    """A preset that keras-hub wrote itself: a tiny random BertBackbone and its tokenizer."""
    folder = tmp_path_factory.mktemp("keras_hub") / "preset"
    tf.keras.utils.set_random_seed(1)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(tokenization.load_vocab(VOCAB)), num_layers=2, num_heads=2,
        hidden_dim=32, intermediate_dim=64, max_sequence_length=64)
    backbone.save_to_preset(str(folder))
    keras_hub.models.BertTokenizer(vocabulary=VOCAB, lowercase=True).save_to_preset(str(folder))
    return folder, backbone


def test_a_keras_hub_preset_reads_into_bert_tf_with_the_same_outputs(keras_hub_preset):
    folder, backbone = keras_hub_preset
    files = model_files.find(str(folder), max_seq_length=32)
    assert files.do_lower_case is True
    assert tokenization.load_vocab(files.vocab_file) == tokenization.load_vocab(VOCAB)
    config = files.bert_config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.intermediate_size, config.hidden_act) == (2, 32, 2, 64, "gelu")
    model = BertModel(config)
    report = checkpoints.load_weights(str(folder), model)
    assert report.format == "keras_hub" and len(report.loaded) == 39

    _, inputs = _inputs()
    expected = _keras_hub_outputs(backbone, inputs)
    got = model(inputs, training=False)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5)


@pytest.mark.slow
def test_a_keras_hub_preset_starts_a_fine_tuning_run(keras_hub_preset, tmp_path):
    folder, backbone = keras_hub_preset
    data_dir = tmp_path / "MRPC"
    tf.io.gfile.makedirs(str(data_dir))
    for name in ("train.tsv", "dev.tsv"):
        tf.io.gfile.copy(os.path.join(GLUE, "MRPC", name), str(data_dir / name))
    output_dir = tmp_path / "output"
    # A rate of 1e-12 leaves the weights as they started, to compare.
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "run_classifier.py"), "--task_name=MRPC",
         "--do_train=true", f"--data_dir={data_dir}", f"--init_checkpoint={folder}",
         f"--output_dir={output_dir}", "--max_seq_length=32", "--train_batch_size=2",
         "--num_train_epochs=1", "--learning_rate=1e-12", "--jit_compile=false"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Loaded 39 tensors from keras_hub checkpoint {folder}" in result.stderr

    trained = BertModel(model_files.find(str(folder)).bert_config)
    checkpoints.load_weights(str(output_dir), trained)
    _, inputs = _inputs()
    expected = _keras_hub_outputs(backbone, inputs)
    got = trained(inputs, training=False)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5)


def test_a_preset_of_another_model_is_refused_naming_it(keras_hub_preset, tmp_path):
    folder, _ = keras_hub_preset
    other = tmp_path / "other"
    tf.io.gfile.makedirs(str(other))
    for name in ("config.json", "model.weights.h5"):
        tf.io.gfile.copy(str(folder / name), str(other / name))
    with open(other / "config.json", encoding="utf-8") as f:
        config = json.load(f)
    config["class_name"] = "RobertaBackbone"
    with open(other / "config.json", "w", encoding="utf-8") as f:
        json.dump(config, f)
    with pytest.raises(model_files.ModelFilesError, match="not of BertBackbone"):
        model_files.find(str(other), vocab_file=VOCAB)


def test_a_tf_hub_encoder_becomes_a_preset_with_the_same_outputs(tmp_path):
    # One of TF Hub's published encoders, in small (tools/make_tf_hub_fixture.py).
    encoder = os.path.join(ROOT, "tests", "fixtures", "tf_hub_encoder")
    preset = tmp_path / "preset"
    checkpoints.convert(encoder, str(preset), "keras_hub", [])
    reference = np.load(os.path.join(encoder, "reference.npz"))
    backbone = keras_hub.models.BertBackbone.from_preset(str(preset))
    got = _keras_hub_outputs(backbone, reference)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(got[key], reference[key], atol=1e-5)
    tokenizer = keras_hub.models.BertTokenizer.from_preset(str(preset))
    assert np.asarray(tokenizer("W7 w9")).tolist() == [12, 14]


def test_a_preset_never_replaces_a_folder_of_other_files(tmp_path):
    tiny_google_checkpoint(str(tmp_path / "google"))
    with pytest.raises(checkpoints.CheckpointError, match=(
            f"^{tmp_path} holds files that are no part of an earlier keras-hub preset "
            "\\(google/bert_config.json, google/bert_model.ckpt.data-00000-of-00001, "
            "google/bert_model.ckpt.index and 2 more\\), which writing the keras-hub preset "
            "there would delete: give a new or empty folder$")):
        checkpoints.convert(str(tmp_path / "google"), str(tmp_path), "keras_hub", [])
    assert (tmp_path / "google" / "bert_model.ckpt.index").exists()


@pytest.mark.parametrize("output_format", ["keras_hub", "tf_hub"])
def test_a_cased_output_of_an_uncased_vocab_is_refused_and_nothing_is_written(tmp_path,
                                                                             output_format):
    """A preset that never lower-cases an uncased model's input would make capitals [UNK]."""
    vocab = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")
    tiny_google_checkpoint(str(tmp_path / "google"), vocab)
    with pytest.raises(tokenization.CasingError, match=(
            "^--do_lower_case=False, but .*vocab.txt has no word piece with a capital letter")):
        checkpoints.convert(str(tmp_path / "google"), str(tmp_path / "out"), output_format, [],
                            do_lower_case=False)
    assert not (tmp_path / "out").exists()
