"""A tiny pretrained-looking model for the tests that run scripts on a checkpoint."""

import os
import shutil

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import checkpoints
from bert_tf.model.config import BertConfig
from bert_tf.model.modeling import BertModel
from bert_tf.text import tokenization
from tests import helpers

FIXTURES = helpers.FIXTURES
VOCAB = os.path.join(FIXTURES, "tokenization_vocab_small.txt")
HIDDEN = 32
NUM_LAYERS = 2


def tiny_google_checkpoint(folder, vocab=VOCAB):
    """Saves a random 2-layer, hidden-32 BERT as the original's release folder.

    Args:
      folder: Where bert_model.ckpt, bert_config.json and vocab.txt go.
      vocab: The vocab.txt it is sized for and that is copied beside it.

    Returns:
      (checkpoint prefix, the BertModel saved).
    """
    tf.keras.utils.set_random_seed(0)
    config = BertConfig(
        vocab_size=len(tokenization.load_vocab(vocab)), hidden_size=HIDDEN,
        num_hidden_layers=NUM_LAYERS, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=64, type_vocab_size=2)
    model = BertModel(config)
    prefix = checkpoints.save_google_checkpoint(os.path.join(folder, "bert_model.ckpt"), model)
    shutil.copyfile(vocab, os.path.join(folder, "vocab.txt"))
    return prefix, model


def hidden_states(model, tokenizer, tokens_a, tokens_b=None, max_seq_length=16):
    """[embedding_output, layer_0, ...] of one example, real tokens only.

    Computed directly with BertModel, as the reference for what extraction
    writes.

    Args:
      model: A BertModel.
      tokenizer: A tokenization.FullTokenizer.
      tokens_a: The first text's word pieces.
      tokens_b: The second text's, or None.
      max_seq_length: The padded length.

    Returns:
      float32 [layers + 1, tokens, hidden].
    """
    tokens = ["[CLS]", *tokens_a, "[SEP]"] + ([*tokens_b, "[SEP]"] if tokens_b else [])
    segments = [0] * (len(tokens_a) + 2) + [1] * (len(tokens) - len(tokens_a) - 2)
    padding = [0] * (max_seq_length - len(tokens))
    inputs = {
        "input_ids": np.array([tokenizer.convert_tokens_to_ids(tokens) + padding], np.int32),
        "input_mask": np.array([[1] * len(tokens) + padding], np.int32),
        "segment_ids": np.array([segments + padding], np.int32),
    }
    outputs = model(inputs, training=False)
    states = [outputs["embedding_output"], *outputs["encoder_outputs"]]
    return np.stack([s.numpy()[0, :len(tokens)] for s in states])
