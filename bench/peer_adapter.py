"""Plugs bert_tf into ../shared/bench-peers, so it is measured in the same run as its peers.

The harness imports it as the module bench.peer_adapter, with the repository
root on PYTHONPATH (PYTHONPATH=$PWD from the root; see bench/peer_candidates.sh):
  bench_keras.py --impl bench.peer_adapter:build   (model; see docs/benchmarks.md)
  bench_tokenization.py --impl custom --custom bench.peer_adapter:tokenizer
  bench_tokenization.py --impl custom --custom bench.peer_adapter:graph_tokenizer --tf-input

The harness's contract: build(cfg, task) returns a keras.Model; for "pretrain"
its inputs are token_ids, segment_ids, padding_mask and mask_positions, its
outputs {"mlm": [B, P, V] logits, "nsp": [B, 2] logits}; for "encoder" the
first three inputs.
"""

import tensorflow as tf

from bert_tf.model.config import BertConfig
from bert_tf.model.heads import MaskedLMHead, NextSentenceHead
from bert_tf.model.modeling import BertModel
from bert_tf.text import tokenization
from bert_tf.text.text_ops import BertTextTokenizer

keras = tf.keras


def _config(cfg):
    """A BertConfig from a bench-peers CONFIGS entry (dropout 0.1, fp32, as BERT)."""
    return BertConfig(
        vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden"],
        num_hidden_layers=cfg["num_layers"], num_attention_heads=cfg["heads"],
        intermediate_size=cfg["intermediate"], max_position_embeddings=cfg["max_position"],
        type_vocab_size=cfg["type_vocab"])


class _HarnessModel(keras.Model):
    """bert_tf's BertModel (and pretraining heads) behind the harness's input names."""

    def __init__(self, config, pretraining):
        super().__init__(name="bert_tf")
        self.encoder = BertModel(config)
        self.pretraining = pretraining
        if pretraining:
            self.mlm = MaskedLMHead(config, self.encoder.get_embedding_table())
            self.nsp = NextSentenceHead(config)

    def call(self, inputs, training=False):
        outputs = self.encoder({"input_ids": inputs["token_ids"],
                                "input_mask": inputs["padding_mask"],
                                "segment_ids": inputs["segment_ids"]}, training=training)
        if not self.pretraining:
            return outputs["pooled_output"]
        return {"mlm": self.mlm(outputs["sequence_output"], inputs["mask_positions"]),
                "nsp": self.nsp(outputs["pooled_output"])}


def build(cfg, task):
    """The harness's model builder. Args: cfg, a CONFIGS entry; task: "pretrain"|"encoder"."""
    return _HarnessModel(_config(cfg), pretraining=task == "pretrain")


def tokenizer(vocab_path):
    """The harness's tokenizer factory: the Python FullTokenizer, uncased."""
    full = tokenization.FullTokenizer(vocab_path, do_lower_case=True)
    return lambda batch: [full.convert_tokens_to_ids(full.tokenize(t)) for t in batch]


def graph_tokenizer(vocab_path):
    """The in-graph tokenizer (use with --tf-input): [None] tf.string -> RaggedTensor."""
    return BertTextTokenizer(vocab_path, do_lower_case=True).tokenize
