"""Tests for bert_tf.checkpoints.checkpoints: three formats, one name table, clear errors."""

import gc
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoints, model_files
from bert_tf.checkpoints.checkpoint_names import FORMATS, encoder_weight_names
from bert_tf.checkpoints.checkpoints import CheckpointError
from bert_tf.data import conll
from bert_tf.model.config import BertConfig
from bert_tf.model.heads import (
    ClassifierHead,
    Head,
    MaskedLMHead,
    NextSentenceHead,
    SpanHead,
    head_types,
)
from bert_tf.model.modeling import BertModel
from bert_tf.tasks import ClassificationTask, TaggingTask
from tests import helpers

ROOT = helpers.ROOT


def _pretraining_model(config):
    encoder = BertModel(config)
    return encoder, {"mlm": MaskedLMHead(config, encoder.get_embedding_table()),
                     "nsp": NextSentenceHead(config)}


def _outputs(encoder, heads, inputs):
    out = encoder(inputs)
    positions = np.array([[1, 2]] * len(inputs["input_ids"]), np.int32)
    return (out["sequence_output"].numpy(),
            heads["mlm"](out["sequence_output"], positions).numpy(),
            heads["nsp"](out["pooled_output"]).numpy())


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_with_heads(tmp_path, tiny_config, tiny_inputs, fmt):
    source = _pretraining_model(tiny_config)
    path = str(tmp_path / ("hf" if fmt == "hf" else "ckpt/model"))
    saver = {"google": checkpoints.save_google_checkpoint, "hf": checkpoints.save_hf_folder,
             "tf2": checkpoints.save_tf2_checkpoint}[fmt]
    saver(path, *source)
    target = _pretraining_model(tiny_config)
    folder = path if fmt == "hf" else str(tmp_path / "ckpt")
    report = checkpoints.load_weights(folder, *target)
    assert report.format == fmt and report.initialized == []
    for a, b in zip(_outputs(*source, tiny_inputs), _outputs(*target, tiny_inputs), strict=True):
        np.testing.assert_array_equal(a, b)
    assert checkpoints.find_config(folder) == tiny_config


def test_google_names_are_the_originals(tmp_path, tiny_config):
    prefix = checkpoints.save_google_checkpoint(
        str(tmp_path / "bert_model.ckpt"), *_pretraining_model(tiny_config))
    shapes = dict(tf.train.list_variables(prefix))
    assert shapes["bert/embeddings/word_embeddings"] == [99, 64]
    assert shapes["bert/encoder/layer_1/intermediate/dense/kernel"] == [64, 128]
    assert shapes["bert/encoder/layer_0/attention/output/LayerNorm/gamma"] == [64]
    assert shapes["cls/predictions/output_bias"] == [99]
    assert shapes["cls/seq_relationship/output_weights"] == [2, 64]
    heads_names = len(MaskedLMHead.weight_names()) + len(NextSentenceHead.weight_names())
    assert len(shapes) == len(encoder_weight_names(2)) + heads_names


def test_hf_layout_transposes_linear_weights(tmp_path, tiny_config):
    from safetensors.numpy import load_file

    encoder, heads = _pretraining_model(tiny_config)
    checkpoints.save_hf_folder(str(tmp_path), encoder, heads)
    tensors = load_file(str(tmp_path / "model.safetensors"))
    kernel = encoder.layer_0.intermediate.kernel.numpy()
    np.testing.assert_array_equal(tensors["bert.encoder.layer.0.intermediate.dense.weight"],
                                  kernel.T)
    assert tensors["cls.seq_relationship.weight"].shape == (2, 64)
    assert json.loads((tmp_path / "config.json").read_text())["hidden_act"] == "gelu_new"


def test_pretrained_into_classifier_reports_new_head_and_unused_heads(tmp_path, tiny_config):
    checkpoints.save_google_checkpoint(
        str(tmp_path / "bert_model.ckpt"), *_pretraining_model(tiny_config))
    encoder = BertModel(tiny_config)
    classifier = ClassifierHead(tiny_config, num_labels=2)
    report = checkpoints.load_weights(str(tmp_path), encoder, {"classifier": classifier})
    assert report.initialized == ["output_weights", "output_bias"]
    assert "cls/predictions/output_bias" in report.skipped
    assert "Left at initial values (2): output_weights, output_bias" in report.summary()
    found = checkpoints.detect_heads(str(tmp_path), BertModel(tiny_config), head_types())
    assert sorted(found) == ["mlm", "nsp"]


def test_a_new_head_class_is_looked_for_with_no_list_to_edit():
    assert head_types() == (MaskedLMHead, NextSentenceHead, ClassifierHead, SpanHead)

    class QualityHead(Head):
        checkpoint_key = "quality"

    class FinerClassifierHead(ClassifierHead):
        checkpoint_key = "finer_classifier"

    assert head_types()[4:] == (QualityHead, FinerClassifierHead)
    del QualityHead, FinerClassifierHead
    gc.collect()  # Python's list of subclasses holds them weakly.
    assert len(head_types()) == 4


def test_detect_heads_sizes_the_classifier(tmp_path, tiny_config):
    encoder = BertModel(tiny_config)
    checkpoints.save_hf_folder(str(tmp_path), encoder,
                               {"classifier": ClassifierHead(tiny_config, num_labels=3)})
    found = checkpoints.detect_heads(str(tmp_path), encoder, head_types())
    assert list(found) == ["classifier"] and found["classifier"].num_labels == 3


def test_head_under_another_key_is_refused(tmp_path, tiny_config):
    encoder = BertModel(tiny_config)
    with pytest.raises(ValueError, match="must be filed under 'nsp'"):
        checkpoints.save_tf2_checkpoint(str(tmp_path / "m"), encoder,
                                        {"classifier": NextSentenceHead(tiny_config)})


def test_partly_stored_head_is_an_error(tmp_path, tiny_config):
    values = _google_values(tmp_path, tiny_config)
    values["cls/predictions/output_bias"] = np.zeros([99], np.float32)
    _save_raw(str(tmp_path / "model.ckpt"), values)
    encoder = BertModel(tiny_config)
    expected = "mlm head is incomplete: it lacks 'cls/predictions/transform/dense/kernel'"
    with pytest.raises(CheckpointError, match=expected):
        checkpoints.detect_heads(str(tmp_path / "model.ckpt"), encoder, head_types())
    with pytest.raises(CheckpointError, match=expected):
        checkpoints.load_weights(str(tmp_path / "model.ckpt"), encoder,
                                 {"mlm": MaskedLMHead(tiny_config,
                                                      encoder.get_embedding_table())})


@pytest.mark.slow
def test_converter_script_refuses_a_partial_head_in_one_line(tmp_path, tiny_config):
    values = _google_values(tmp_path, tiny_config)
    values["cls/predictions/output_bias"] = np.zeros([99], np.float32)
    _save_raw(str(tmp_path / "model.ckpt"), values)
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "convert_checkpoint.py"),
         f"--input={tmp_path / 'model.ckpt'}", f"--output={tmp_path / 'hf'}",
         "--output_format=hf", f"--bert_config_file={tmp_path / 'source' / 'bert_config.json'}"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "mlm head is incomplete: it lacks" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr and not (tmp_path / "hf").exists()


def test_a_released_google_folder_needs_no_state_file(tmp_path, tiny_config):
    encoder = BertModel(tiny_config)
    checkpoints.save_google_checkpoint(str(tmp_path / "bert_model.ckpt"), encoder)
    os.remove(tmp_path / "checkpoint")  # Google's zip files have none
    assert checkpoints.resolve_checkpoint_path(str(tmp_path)) == (
        "google", str(tmp_path / "bert_model.ckpt"))
    assert checkpoints.find_config(str(tmp_path)) == tiny_config


def test_find_vocab_and_casing_beside_the_checkpoint(tmp_path, tiny_config):
    prefix = checkpoints.save_google_checkpoint(str(tmp_path / "bert_model.ckpt"),
                                                BertModel(tiny_config))
    with pytest.raises(checkpoints.ConfigError, match="--vocab_file is required"):
        checkpoints.find_vocab(prefix)
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    assert checkpoints.find_vocab(prefix) == str(tmp_path / "vocab.txt")
    assert checkpoints.find_vocab(str(tmp_path)) == str(tmp_path / "vocab.txt")
    assert checkpoints.find_vocab(prefix, "other.txt") == "other.txt"
    assert checkpoints.find_do_lower_case(prefix, True) is True
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    assert checkpoints.find_do_lower_case(str(tmp_path), True) is False
    (tmp_path / "tokenizer_config.json").write_text("{not json")
    with pytest.raises(checkpoints.ConfigError, match="cannot read .*tokenizer_config.json"):
        checkpoints.find_do_lower_case(str(tmp_path), True)


def _save_raw(prefix, values):
    names = sorted(values)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(values[n]) for n in names])


def _google_values(tmp_path, config):
    """{original name: array} of a fresh encoder, as an original checkpoint holds it."""
    prefix = checkpoints.save_google_checkpoint(
        str(tmp_path / "source" / "bert_model.ckpt"), BertModel(config))
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def test_optimizer_slots_of_original_checkpoints_are_training_state(tmp_path, tiny_config):
    values = _google_values(tmp_path, tiny_config)
    values["bert/pooler/dense/kernel/adam_m"] = np.zeros((64, 64), np.float32)
    values["global_step"] = np.array(10, np.int64)
    _save_raw(str(tmp_path / "model.ckpt-10"), values)
    report = checkpoints.load_weights(str(tmp_path / "model.ckpt-10"), BertModel(tiny_config))
    assert report.skipped == []
    assert set(report.training_state) == {"bert/pooler/dense/kernel/adam_m", "global_step"}
    # The log names no weight as unused: only the training state, counted.
    assert "Not used" not in report.summary()
    assert "Training state, not part of the model (2 tensors" in report.summary()


def test_missing_tensor_names_the_variable(tmp_path, tiny_config):
    values = _google_values(tmp_path, tiny_config)
    del values["bert/encoder/layer_1/output/dense/bias"]
    _save_raw(str(tmp_path / "model.ckpt"), values)
    with pytest.raises(CheckpointError, match="'bert/encoder/layer_1/output/dense/bias'"):
        checkpoints.load_weights(str(tmp_path / "model.ckpt"), BertModel(tiny_config))


def test_unexpected_tensor_names_the_variable(tmp_path, tiny_config):
    deeper = BertConfig(**{**tiny_config.to_dict(), "num_hidden_layers": 3})
    _save_raw(str(tmp_path / "model.ckpt"), _google_values(tmp_path, deeper))
    with pytest.raises(CheckpointError, match="unexpected tensor 'bert/encoder/layer_2/"):
        checkpoints.load_weights(str(tmp_path / "model.ckpt"), BertModel(tiny_config))


def test_shape_mismatch_names_the_variable(tmp_path, tiny_config):
    wider = BertConfig(**{**tiny_config.to_dict(), "vocab_size": 120})
    _save_raw(str(tmp_path / "model.ckpt"), _google_values(tmp_path, wider))
    with pytest.raises(CheckpointError,
                       match=r"shape mismatch for 'bert/embeddings/word_embeddings'.*\(120, 64\)"):
        checkpoints.load_weights(str(tmp_path / "model.ckpt"), BertModel(tiny_config))


def test_hf_names_without_prefix_and_with_gamma_beta(tmp_path, tiny_config, tiny_inputs):
    from safetensors.numpy import load_file, save_file

    encoder = BertModel(tiny_config)
    checkpoints.save_hf_folder(str(tmp_path), encoder)
    tensors = load_file(str(tmp_path / "model.safetensors"))
    assert "embeddings.word_embeddings.weight" in tensors  # no "bert." without heads
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma")
                .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in tensors.items()}
    save_file(renamed, str(tmp_path / "model.safetensors"))
    target = BertModel(tiny_config)
    checkpoints.load_weights(str(tmp_path), target)
    np.testing.assert_array_equal(encoder(tiny_inputs)["pooled_output"],
                                  target(tiny_inputs)["pooled_output"])


def test_nothing_to_read(tmp_path, tiny_config):
    with pytest.raises(CheckpointError, match="neither model.safetensors nor a TF checkpoint"):
        checkpoints.load_weights(str(tmp_path), BertModel(tiny_config))
    with pytest.raises(CheckpointError, match="checkpoint not found"):
        checkpoints.load_weights(str(tmp_path / "bert_model.ckpt"), BertModel(tiny_config))


def test_a_file_in_place_of_a_model_says_what_to_give(tmp_path, tiny_config):
    """A vocab, a config or a checkpoint's own file as --init_checkpoint or --input."""
    prefix = checkpoints.save_google_checkpoint(str(tmp_path / "bert_model.ckpt"),
                                                BertModel(tiny_config))
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    for name in ("vocab.txt", "bert_config.json"):
        path = str(tmp_path / name)
        for read in (lambda path: checkpoints.load_weights(path, BertModel(tiny_config)),
                     lambda path: checkpoints.convert(path, str(tmp_path / "hf"), "hf", [])):
            with pytest.raises(CheckpointError, match=(
                    f"^{path} is a file, not a checkpoint: give the model's folder \\(Google's, "
                    "Hugging Face's, a TF Hub encoder or a keras-hub preset\\) or its "
                    "checkpoint prefix \\(bert_model.ckpt, the name before .index\\)$")):
                read(path)
    with pytest.raises(CheckpointError, match=(
            f"^{prefix}.index is one file of the checkpoint {prefix}: give {prefix}$")):
        checkpoints.load_weights(prefix + ".index", BertModel(tiny_config))
    assert not (tmp_path / "hf").exists()


def test_a_keras_hub_preset_in_part_names_the_file_it_lacks(tmp_path):
    preset = tmp_path / "preset"
    (preset / "assets" / "tokenizer").mkdir(parents=True)
    for name in ("model.weights.h5", "metadata.json", "tokenizer.json",
                 "assets/tokenizer/vocabulary.txt"):
        (preset / name).write_text("")
    with pytest.raises(model_files.ModelFilesError, match=(
            f"^{preset}: a keras-hub preset without config.json: copy the whole preset folder$")):
        model_files.find(str(preset))


@pytest.mark.slow
def test_converter_script_google_to_hf_and_back(tmp_path, tiny_config, tiny_inputs):
    encoder, heads = _pretraining_model(tiny_config)
    checkpoints.save_google_checkpoint(str(tmp_path / "google" / "bert_model.ckpt"),
                                       encoder, heads)
    (tmp_path / "google" / "vocab.txt").write_text("[PAD]\n")
    script = os.path.join(ROOT, "convert_checkpoint.py")
    subprocess.run([sys.executable, script, f"--input={tmp_path / 'google' / 'bert_model.ckpt'}",
                    f"--output={tmp_path / 'hf'}", "--output_format=hf"],
                   check=True, capture_output=True)
    result = subprocess.run(
        [sys.executable, script, f"--input={tmp_path / 'hf'}",
         f"--output={tmp_path / 'back' / 'bert_model.ckpt'}", "--output_format=google"],
        check=True, capture_output=True, text=True)
    # The load report and what was written, once each: no line twice, none long.
    lines = [re.sub(r"^[IWE]\d{4} [\d:.]+\s+\d+ \S+\] ", "", line)
             for line in result.stderr.splitlines()]
    assert any(line.startswith("Loaded ") for line in lines)
    assert any(line.startswith("Wrote google checkpoint") for line in lines)
    assert len(set(lines)) == len(lines) and max(map(len, lines)) <= 300, result.stderr
    assert result.stdout == ""
    assert (tmp_path / "hf" / "vocab.txt").read_text() == "[PAD]\n"
    target = _pretraining_model(BertConfig.from_json_file(str(tmp_path / "back" /
                                                              "bert_config.json")))
    checkpoints.load_weights(str(tmp_path / "back"), *target)
    for a, b in zip(_outputs(encoder, heads, tiny_inputs), _outputs(*target, tiny_inputs),
                    strict=True):
        np.testing.assert_array_equal(a, b)


def test_hf_conversion_names_the_class_labels_and_tokenizer(tmp_path, tiny_config):
    """A fine-tuned run's folder converts to what transformers' Auto classes load."""
    encoder = BertModel(tiny_config)
    heads = {"classifier": ClassifierHead(tiny_config, num_labels=3)}
    run = tmp_path / "run"
    checkpoints.save_tf2_checkpoint(str(run / "model"), encoder, heads)
    (run / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    labels = ["contradiction", "entailment", "neutral"]
    task = ClassificationTask(3, label_list=labels)
    (run / checkpoints.HF_SETTINGS_FILE).write_text(json.dumps(
        {"config": task.hf_task_config(), "do_lower_case": False}))
    checkpoints.convert(str(run / "model"), str(tmp_path / "hf"), "hf", head_types())
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["architectures"] == ["BertForSequenceClassification"]
    assert config["id2label"] == {"0": "contradiction", "1": "entailment", "2": "neutral"}
    assert config["label2id"]["neutral"] == 2
    tokenizer = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer["do_lower_case"] is False and tokenizer["tokenizer_class"] == "BertTokenizer"
    assert (tmp_path / "hf" / "special_tokens_map.json").exists()
    assert (tmp_path / "hf" / "vocab.txt").exists()

    # A tagging run's folder says token classification; the weights alone cannot.
    tags = TaggingTask(["O", "B-PER", "I-PER"], conll.ConllSettings())
    (run / checkpoints.HF_SETTINGS_FILE).write_text(json.dumps({"config": tags.hf_task_config()}))
    checkpoints.convert(str(run / "model"), str(tmp_path / "ner"), "hf", head_types())
    config = json.loads((tmp_path / "ner" / "config.json").read_text())
    assert config["architectures"] == ["BertForTokenClassification"]
    assert config["id2label"]["1"] == "B-PER"
    # Casing not recorded: uncased, every script's default.
    assert json.loads((tmp_path / "ner" / "tokenizer_config.json").read_text())[
        "do_lower_case"] is True

    # Without the run's settings: the class from the heads, transformers' label names.
    (run / checkpoints.HF_SETTINGS_FILE).unlink()
    checkpoints.convert(str(run / "model"), str(tmp_path / "bare"), "hf", head_types())
    config = json.loads((tmp_path / "bare" / "config.json").read_text())
    assert config["architectures"] == ["BertForSequenceClassification"]
    assert config["id2label"] == {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
    pretraining = tmp_path / "pretraining"
    checkpoints.save_tf2_checkpoint(str(pretraining / "model"), *_pretraining_model(tiny_config))
    checkpoints.convert(str(pretraining / "model"), str(tmp_path / "pt"), "hf", head_types())
    assert json.loads((tmp_path / "pt" / "config.json").read_text())["architectures"] == [
        "BertForPreTraining"]


@pytest.mark.parametrize("fmt", ["hf", "google"])
def test_a_truncated_checkpoint_is_a_checkpoint_error_naming_it(tmp_path, tiny_config, fmt):
    encoder = BertModel(tiny_config)
    if fmt == "hf":
        path = checkpoints.save_hf_folder(str(tmp_path / "hf"), encoder)
        data = tmp_path / "hf" / "model.safetensors"
        assert oct(data.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    else:
        path = checkpoints.save_google_checkpoint(str(tmp_path / "g" / "bert_model.ckpt"),
                                                  encoder)
        (data,) = (tmp_path / "g").glob("bert_model.ckpt.data-*")
    data.write_bytes(data.read_bytes()[:data.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="cannot be read .*is it complete"):
        checkpoints.load_weights(path, BertModel(tiny_config))


def _umask():
    umask = os.umask(0)
    os.umask(umask)
    return umask
