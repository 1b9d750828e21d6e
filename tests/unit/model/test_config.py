"""Tests for bert_tf.model.config."""

import json

import pytest

from bert_tf.model.config import BertConfig, ConfigError

ORIGINAL_BASE = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
    "type_vocab_size": 2, "vocab_size": 30522,
}


def _write(tmp_path, values, name="bert_config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(values))
    return str(path)


def test_reads_original_bert_config_and_writes_it_back(tmp_path):
    config = BertConfig.from_json_file(_write(tmp_path, ORIGINAL_BASE))
    assert config.hidden_size == 768 and config.type_vocab_size == 2
    assert config.hidden_act == "gelu" and config.head_size == 64
    out = tmp_path / "out" / "bert_config.json"
    config.to_json_file(str(out))
    assert json.loads(out.read_text()) == ORIGINAL_BASE


def test_tolerates_unknown_keys(tmp_path):
    config = BertConfig.from_json_file(
        _write(tmp_path, {**ORIGINAL_BASE, "directionality": "bidi", "pooler_fc_size": 768}))
    assert config.num_hidden_layers == 12


def test_reads_hugging_face_config_with_its_gelu_meaning(tmp_path):
    hf = {**ORIGINAL_BASE, "model_type": "bert", "architectures": ["BertModel"],
          "layer_norm_eps": 1e-12, "pad_token_id": 0}
    assert BertConfig.from_json_file(_write(tmp_path, hf)).hidden_act == "gelu_exact"
    hf["hidden_act"] = "gelu_new"
    assert BertConfig.from_json_file(_write(tmp_path, hf)).hidden_act == "gelu"
    assert BertConfig.from_hf_dict(hf).to_hf_dict()["hidden_act"] == "gelu_new"


@pytest.mark.parametrize("change, message", [
    ({"hidden_size": 100, "num_attention_heads": 12}, "not a multiple of num_attention_heads"),
    ({"num_hidden_layers": 0}, "num_hidden_layers must be a positive integer"),
    ({"vocab_size": -5}, "vocab_size must be a positive integer"),
    ({"intermediate_size": 3.5}, "intermediate_size must be a positive integer"),
    ({"hidden_act": "gelu2"}, "unknown hidden_act 'gelu2'"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob must be in"),
])
def test_invalid_values_get_clear_errors(tmp_path, change, message):
    path = _write(tmp_path, {**ORIGINAL_BASE, **change})
    with pytest.raises(ConfigError, match=message) as info:
        BertConfig.from_json_file(path)
    assert path in str(info.value)


def test_missing_or_broken_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        BertConfig.from_json_file(str(tmp_path / "nope.json"))
    broken = tmp_path / "broken.json"
    broken.write_text("{vocab_size: 3")
    with pytest.raises(ConfigError, match="not a valid JSON"):
        BertConfig.from_json_file(str(broken))
    without_vocab = {k: v for k, v in ORIGINAL_BASE.items() if k != "vocab_size"}
    with pytest.raises(ConfigError, match="vocab_size"):
        BertConfig.from_json_file(_write(tmp_path, without_vocab))


def test_hf_config_of_another_model_is_refused():
    with pytest.raises(ConfigError, match="model_type 'roberta'"):
        BertConfig.from_hf_dict({**ORIGINAL_BASE, "model_type": "roberta"})


def test_a_misspelt_key_is_refused_naming_the_closest(tmp_path):
    path = _write(tmp_path, {**ORIGINAL_BASE, "num_hiden_layers": 2})
    with pytest.raises(ConfigError, match="unknown key 'num_hiden_layers'; did you mean "
                                          "'num_hidden_layers'"):
        BertConfig.from_json_file(path)
    with pytest.raises(ConfigError, match="unknown key 'colour'; known keys: vocab_size"):
        BertConfig.from_dict({**ORIGINAL_BASE, "colour": 1})


def test_released_multilingual_keys_and_hf_extras_are_accepted(tmp_path):
    multilingual = {**ORIGINAL_BASE, "directionality": "bidi", "pooler_fc_size": 768,
                    "pooler_num_attention_heads": 12, "pooler_num_fc_layers": 3,
                    "pooler_size_per_head": 128, "pooler_type": "first_token_transform"}
    assert BertConfig.from_json_file(_write(tmp_path, multilingual)).hidden_size == 768
    hf = {**ORIGINAL_BASE, "model_type": "bert", "architectures": ["BertModel"],
          "torch_dtype": "float32", "pad_token_id": 0}
    assert BertConfig.from_hf_dict(hf).num_hidden_layers == 12
