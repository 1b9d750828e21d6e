"""Tests for bert_tf.serving.served_model: dynamic shapes cut each batch, and change no output.

The serving modules of classification and tagging run a tiny random model
both ways at max_seq_length 64, where short sentences are cut to 16
columns; question answering's are checked against run_squad.py's windows in
tests/unit/tasks/test_question_answering.py, for both shapes.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.model.config import BertConfig
from bert_tf.model.heads import ClassifierHead
from bert_tf.model.modeling import BertModel
from bert_tf.serving import served_model
from bert_tf.serving.classification import ClassificationServingModule
from bert_tf.serving.tagging import TaggingServingModule
from bert_tf.text import text_ops, tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES,
                     "pretraining_vocab.txt")
SEQ = 64
SENTENCES = ["He was in the house of the man.", "the", "",
             "he said that it was not to be , and that the man of the house was in it"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def _packed(lengths):
    """A packed batch whose rows have these numbers of real tokens."""
    ragged = tf.ragged.constant([[7] * (n - 2) for n in lengths], dtype=tf.int64)
    return text_ops.BertPacker(SEQ, 101, 102)(ragged)


@pytest.mark.parametrize("lengths, dynamic_length", [([5, 3], 16), ([17, 2], 32),
                                                     ([64, 9], 64), ([2], 16)])
def test_dynamic_shapes_cut_the_batch_to_its_longest_row_in_steps_of_16(lengths,
                                                                          dynamic_length):
    def shape_of(features):
        return {"input_ids": features["input_ids"]}

    packed = _packed(lengths)
    dynamic = served_model.ServedModel(shape_of, "dynamic")(packed)["input_ids"]
    static = served_model.ServedModel(shape_of, "static")(packed)["input_ids"]
    assert dynamic.shape == (len(lengths), dynamic_length)
    assert static.shape == (len(lengths), SEQ)
    # What is cut is padding only.
    np.testing.assert_array_equal(dynamic, static[:, :dynamic_length])
    assert not np.any(static[:, dynamic_length:])


def test_unknown_shapes_are_refused():
    with pytest.raises(ValueError, match="unknown export shapes 'ragged'"):
        served_model.ServedModel(lambda features: features, "ragged")


def _model(num_labels):
    """A tiny encoder and head with wide random weights."""
    tf.keras.utils.set_random_seed(5)
    config = BertConfig(vocab_size=len(tokenization.load_vocab(VOCAB)), hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2,
                        initializer_range=0.5)
    return BertModel(config), ClassifierHead(config, num_labels)


def test_classifier_outputs_do_not_depend_on_the_shapes():
    encoder, head = _model(3)
    outputs = {}
    for shapes in served_model.SHAPES:
        module = ClassificationServingModule(encoder, head, VOCAB, True, SEQ, shapes=shapes)
        outputs[shapes] = (module.single(tf.constant(SENTENCES[:3])),
                           module.pair(tf.constant(SENTENCES), tf.constant(SENTENCES[::-1])))
    for dynamic, static in zip(outputs["dynamic"], outputs["static"], strict=True):
        np.testing.assert_allclose(dynamic["probabilities"], static["probabilities"],
                                   atol=1e-5)
        np.testing.assert_array_equal(dynamic["predictions"], static["predictions"])
    # Different inputs, different outputs: the comparison means something.
    assert np.ptp(outputs["static"][1]["probabilities"][:, 0]) > 1e-3


def test_tagger_outputs_do_not_depend_on_the_shapes():
    encoder, head = _model(len(TAGS))
    outputs = {}
    for shapes in served_model.SHAPES:
        module = TaggingServingModule(encoder, head, TAGS, VOCAB, True, SEQ, (SEQ - 2) // 2,
                                      shapes=shapes)
        outputs[shapes] = module.tag(tf.constant(SENTENCES))
    dynamic, static = outputs["dynamic"], outputs["static"]
    assert int(tf.reduce_sum(static["num_entities"])) > 2
    for name in ("entity_type", "entity_text", "entity_start", "entity_end", "num_entities"):
        np.testing.assert_array_equal(dynamic[name], static[name])
    np.testing.assert_allclose(dynamic["entity_score"], static["entity_score"], atol=1e-5)
