"""TF Hub's BERT interface: encoder and preprocessor SavedModels, written and read.

TensorFlow's tutorials put BERT into a Keras model as two SavedModels, each
wrapped in hub.KerasLayer (tensorflow_hub, with tf-keras):

  preprocessor(strings [batch]) -> {"input_word_ids", "input_mask",
      "input_type_ids"}: int32 [batch, 128]
  preprocessor.tokenize(strings [batch]) -> int32 ragged [batch, (tokens)]
  preprocessor.bert_pack_inputs([tokens_a, tokens_b], seq_length=...) -> the
      same dict, [CLS] a [SEP] b [SEP] at seq_length, for sentence pairs
  encoder({"input_word_ids", "input_mask", "input_type_ids"}, training=...) ->
      {"pooled_output": [batch, hidden], "sequence_output": [batch, seq, hidden],
       "encoder_outputs": num_hidden_layers x [batch, seq, hidden],
       "default": pooled_output}

The encoder is a reusable SavedModel: it also holds `variables`,
`trainable_variables` and `regularization_losses` (none: BERT has no weight
regularizer), so hub.KerasLayer(encoder, trainable=True) trains it; its
`training` argument turns dropout on. A serving_default signature returns
pooled_output, sequence_output and default. Both SavedModels carry the vocab
(assets/vocab.txt) and the casing (a `do_lower_case` variable), as TF Hub's
BERT models do, and the encoder its bert_config.json in assets/.

The preprocessor tokenizes as bert_tf does (text_ops.BertTextTokenizer: the
ids of tokenization.FullTokenizer) and truncates a pair as the original
run_classifier.py does, longest segment first; tokenize's output is
[batch, (tokens)], and bert_pack_inputs also takes TF Hub's
[batch, (words), (pieces)]. It needs tensorflow_text's ops, so users
`import tensorflow_text` before loading it, as with TF Hub's own.

Reading: read_weights gives an encoder's weights their original (google)
names and shapes, for checkpoints.py to load as it loads any checkpoint.
An encoder is named by its own folder or by the folder of a TF Hub output
that holds it as encoder/ (encoder_folder).
It reads two kinds of encoder:
- bert_tf's own export: the weights sit under the root's `encoder`
  attribute, as in bert_tf's checkpoints, and assets/bert_config.json says
  the config.
- TF Hub's published BERT encoders, which TF Model Garden's
  export_tfhub_lib wrote from its BertEncoder: weights such as
  transformer/layer_0/self_attention/query/kernel, the attention's split by
  head ([hidden, heads, head_size]). Their variable names are in
  saved_model.pb's object graph, whose nodes line up with those of the
  variables file's; the config follows from the weights' shapes (the
  original's tanh GELU, which Model Garden's "gelu" is, and dropout 0.1,
  which a SavedModel does not record).
"""

import os
import re
import shutil
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2, trackable_object_graph_pb2

from bert_tf.checkpoints.checkpoint_names import ENCODER, encoder_weight_names, merge_heads
from bert_tf.model import recompute
from bert_tf.model.config import BertConfig

# TF Hub's names for the encoder's inputs, and bert_tf's for the same tensors.
INPUT_NAMES = {"input_word_ids": "input_ids", "input_mask": "input_mask",
               "input_type_ids": "segment_ids"}
# The sequence length of the preprocessor's own call, as TF Hub's.
DEFAULT_SEQ_LENGTH = 128
# The SavedModels' folders in convert_checkpoint.py's tf_hub output.
ENCODER_FOLDER = "encoder"
PREPROCESSOR_FOLDER = "preprocessor"
# Where an export keeps its config and vocab.
CONFIG_ASSET = "bert_config.json"
VOCAB_ASSET = "vocab.txt"
# The casing variable's key in the SavedModel's variables file.
_CASING_KEY = "do_lower_case/.ATTRIBUTES/VARIABLE_VALUE"


class TFHubError(ValueError):
    """A SavedModel that bert_tf cannot read as a BERT encoder; names the folder."""


def _encoder_spec():
    """The encoder's input signature: TF Hub's three int32 [batch, seq] tensors."""
    return {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES}


def _save_with_vocab(root, folder, signatures, vocab_file, do_lower_case):
    """Saves a SavedModel whose root holds the vocab and casing, as TF Hub's BERT does.

    The vocab becomes assets/vocab.txt, whatever its own name.
    """
    root.do_lower_case = tf.Variable(bool(do_lower_case), trainable=False, name="do_lower_case")
    with tempfile.TemporaryDirectory() as staging:
        # An asset keeps its file's name.
        renamed = os.path.join(staging, VOCAB_ASSET)
        shutil.copyfile(vocab_file, renamed)
        root.vocab_file = tf.saved_model.Asset(renamed)
        tf.saved_model.save(root, folder, signatures=signatures)


def export_encoder(folder, encoder, vocab_file, do_lower_case):
    """Writes a BertModel as a TF Hub BERT encoder SavedModel.

    Args:
      folder: The SavedModel folder to write (it must not hold another).
      encoder: A float32 BertModel.
      vocab_file: Its vocab.txt, copied into assets/.
      do_lower_case: Its casing, kept as the `do_lower_case` variable.

    Returns:
      The folder.
    """
    root = tf.train.Checkpoint(**{ENCODER: encoder})

    @tf.function
    def call(inputs, training=False):
        """TF Hub's encoder call: see the module docstring."""
        outputs = encoder({ours: inputs[theirs] for theirs, ours in INPUT_NAMES.items()},
                          training=training)
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
                "encoder_outputs": outputs["encoder_outputs"],
                "default": outputs["pooled_output"]}

    # Both traces are saved: hub.KerasLayer passes training=True while fitting.
    # They are traced without bert_tf's custom gradients (recompute.py): a
    # SavedModel cannot keep them, and every load of the encoder would warn,
    # once per function, that a gradient may fail. Those gradients compute the
    # forward ops' own gradients, only holding less memory; a fine-tuning user
    # gets the same ones from TensorFlow's gradients of the saved forward ops.
    with recompute.forward_only():
        for training in (False, True):
            call.get_concrete_function(_encoder_spec(), training=training)

    @tf.function(input_signature=[_encoder_spec()])
    def serve(inputs):
        """For TF Serving: a signature's outputs must be tensors, so no encoder_outputs."""
        outputs = call(inputs, training=False)
        return {key: outputs[key] for key in ("pooled_output", "sequence_output", "default")}

    root.__call__ = call
    # Every variable, dropout's random state included, which the call reads.
    root.variables = [variable.value for variable in encoder.variables]
    root.trainable_variables = [variable.value for variable in encoder.trainable_variables]
    root.regularization_losses = []
    with recompute.forward_only():
        _save_with_vocab(root, folder, {"serving_default": serve}, vocab_file, do_lower_case)
    encoder.config.to_json_file(os.path.join(folder, "assets", CONFIG_ASSET))
    return folder


def _packer(cls_id, sep_id, default_seq_length):
    """bert_pack_inputs: tokenized segments to the encoder's inputs, at a given seq_length.

    Args:
      cls_id: The id of "[CLS]".
      sep_id: The id of "[SEP]".
      default_seq_length: The seq_length when the call gives none.

    Returns:
      A trackable whose `__call__` takes a list of one or two int32 ragged
      tensors ([batch, (tokens)] or [batch, (words), (pieces)]) and
      seq_length, and returns {"input_word_ids", "input_mask",
      "input_type_ids"}: int32 [batch, seq_length].
    """
    from bert_tf.text import text_ops  # tensorflow_text: see export_preprocessor

    def pack(inputs, seq_length=default_seq_length):
        segments = [segment.merge_dims(1, -1) if segment.ragged_rank > 1 else segment
                    for segment in inputs]
        packed = text_ops.BertPacker(seq_length, cls_id, sep_id)(*segments)
        return {theirs: packed[ours] for theirs, ours in INPUT_NAMES.items()}

    packer = tf.train.Checkpoint()
    packer.__call__ = tf.function(pack, autograph=False)
    # TF Hub's traces: one or two segments of either ragged rank, and
    # seq_length as a tensor, so that any length works after loading.
    for ragged_rank in (1, 2):
        for num_segments in (1, 2):
            segment = tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32)
            packer.__call__.get_concrete_function(
                [segment] * num_segments, seq_length=tf.TensorSpec([], tf.int32))
    return packer


def export_preprocessor(folder, vocab_file, do_lower_case, seq_length=DEFAULT_SEQ_LENGTH):
    """Writes a TF Hub BERT preprocessor SavedModel for a vocab and casing.

    Args:
      folder: The SavedModel folder to write.
      vocab_file: The model's vocab.txt, copied into assets/.
      do_lower_case: Whether the model is uncased.
      seq_length: The length of the root call's outputs (bert_pack_inputs
        takes its own).

    Returns:
      The folder.
    """
    # tensorflow_text holds about 116 MB: imported here, not by fine-tuning,
    # which imports this module through checkpoints.py.
    from bert_tf.text import text_ops

    tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case)
    root = tf.train.Checkpoint()
    root.tokenizer = tokenizer
    root.tokenize = tf.train.Checkpoint()
    root.tokenize.__call__ = tokenizer.tokenize
    root.bert_pack_inputs = _packer(tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"],
                                    seq_length)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="sentences")])
    def preprocess(sentences):
        """Strings [batch] to the encoder's inputs at the default seq_length."""
        return root.bert_pack_inputs.__call__([tokenizer.tokenize(sentences)],
                                              seq_length=tf.constant(seq_length))

    root.__call__ = preprocess
    _save_with_vocab(root, folder, {"serving_default": preprocess}, vocab_file, do_lower_case)
    return folder


def is_saved_model(path):
    """Whether a path is a SavedModel folder (which --init_checkpoint reads as an encoder)."""
    return bool(path) and os.path.isdir(path) and os.path.exists(
        os.path.join(path, "saved_model.pb"))


def encoder_folder(path):
    """The encoder SavedModel that a path names, or None.

    Args:
      path: A checkpoint path as a user gives it, or None.

    Returns:
      path, when it is a SavedModel folder; its encoder/, when it is the
      folder of a TF Hub output (encoder/ and preprocessor/ SavedModels, as
      convert_checkpoint.py --output_format=tf_hub writes them); else None.
    """
    if is_saved_model(path):
        return path
    encoder = os.path.join(path, ENCODER_FOLDER) if path else None
    if encoder and is_saved_model(encoder):
        return encoder
    return None


def variables_prefix(folder):
    """The checkpoint prefix of a SavedModel's variables."""
    return os.path.join(folder, "variables", "variables")


def config_file(folder):
    """The bert_config.json inside an encoder that bert_tf exported, or None."""
    path = os.path.join(folder, "assets", CONFIG_ASSET)
    return path if os.path.exists(path) else None


# TF Model Garden's BertEncoder: each block's sublayers and the original's scopes.
_MODEL_GARDEN_BLOCK = {
    "self_attention/query": "attention/self/query",
    "self_attention/key": "attention/self/key",
    "self_attention/value": "attention/self/value",
    "self_attention/attention_output": "attention/output/dense",
    "self_attention_layer_norm": "attention/output/LayerNorm",
    "intermediate": "intermediate/dense",
    "output": "output/dense",
    "output_layer_norm": "output/LayerNorm",
}
_MODEL_GARDEN_OTHERS = {
    "word_embeddings/embeddings": "bert/embeddings/word_embeddings",
    "position_embedding/embeddings": "bert/embeddings/position_embeddings",
    "type_embeddings/embeddings": "bert/embeddings/token_type_embeddings",
    "embeddings/layer_norm/gamma": "bert/embeddings/LayerNorm/gamma",
    "embeddings/layer_norm/beta": "bert/embeddings/LayerNorm/beta",
    "pooler_transform/kernel": "bert/pooler/dense/kernel",
    "pooler_transform/bias": "bert/pooler/dense/bias",
}
_MODEL_GARDEN_LAYER = re.compile(r"transformer/layer_(\d+)/(.+)/(kernel|bias|gamma|beta)$")


def _google_name(model_garden_name):
    """The original's name of a Model Garden BertEncoder weight, or None."""
    if model_garden_name in _MODEL_GARDEN_OTHERS:
        return _MODEL_GARDEN_OTHERS[model_garden_name]
    match = _MODEL_GARDEN_LAYER.match(model_garden_name)
    if match and match.group(2) in _MODEL_GARDEN_BLOCK:
        layer, sublayer, weight = match.groups()
        return f"bert/encoder/layer_{layer}/{_MODEL_GARDEN_BLOCK[sublayer]}/{weight}"
    return None


def _named_variables(folder):
    """{variable name: np.ndarray} of a SavedModel, by the names saved_model.pb gives them.

    The variables file keys each variable by an object path
    ("variables/7/..."); saved_model.pb's object graph holds the variable's
    own name at the same node.
    """
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(folder, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    nodes = saved_model.meta_graphs[0].object_graph_def.nodes
    reader = tf.train.load_checkpoint(variables_prefix(folder))
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    values = {}
    for node, stored in zip(nodes, graph.nodes, strict=False):
        if node.WhichOneof("kind") != "variable":
            continue
        for attribute in stored.attributes:
            if attribute.name == "VARIABLE_VALUE":
                values[node.variable.name] = reader.get_tensor(attribute.checkpoint_key)
    return values


def _model_garden_weights(folder):
    """{google name: np.ndarray} of a TF Model Garden encoder, in BertModel's shapes.

    Raises:
      TFHubError: for a SavedModel without a BERT encoder's weights.
    """
    named = _named_variables(folder)
    weights = {_google_name(name): value for name, value in named.items()}
    weights.pop(None, None)
    if "bert/embeddings/word_embeddings" not in weights:
        raise TFHubError(
            f"{folder}: a SavedModel, but not a BERT encoder: it holds neither bert_tf's "
            "encoder weights (with assets/bert_config.json) nor TF Hub's BERT encoder "
            "weights (word_embeddings/embeddings, transformer/layer_0/...)")
    hidden = weights["bert/embeddings/word_embeddings"].shape[1]
    return {name: merge_heads(name, value, hidden) for name, value in weights.items()}


def read_config(folder):
    """The BertConfig of an encoder SavedModel (see the module docstring).

    Raises:
      TFHubError: for a SavedModel that holds no BERT encoder.
    """
    path = config_file(folder)
    if path is not None:
        return BertConfig.from_json_file(path)
    weights = _model_garden_weights(folder)
    vocab_size, hidden = weights["bert/embeddings/word_embeddings"].shape
    layers = 0
    while f"bert/encoder/layer_{layers}/intermediate/dense/kernel" in weights:
        layers += 1
    named = _named_variables(folder)
    heads = named["transformer/layer_0/self_attention/query/kernel"].shape[1]
    return BertConfig(
        vocab_size=int(vocab_size), hidden_size=int(hidden), num_hidden_layers=layers,
        num_attention_heads=int(heads),
        intermediate_size=int(weights["bert/encoder/layer_0/intermediate/dense/kernel"]
                              .shape[1]),
        hidden_act="gelu",
        max_position_embeddings=int(weights["bert/embeddings/position_embeddings"].shape[0]),
        type_vocab_size=int(weights["bert/embeddings/token_type_embeddings"].shape[0]))


def read_weights(folder):
    """An encoder SavedModel's weights, in the original's names and BertModel's shapes.

    Args:
      folder: An encoder that bert_tf or TF Model Garden exported.

    Returns:
      {google name: np.ndarray}.

    Raises:
      TFHubError: for a SavedModel that holds no BERT encoder.
    """
    if config_file(folder) is None:
        return _model_garden_weights(folder)
    config = read_config(folder)
    reader = tf.train.load_checkpoint(variables_prefix(folder))
    names = encoder_weight_names(config.num_hidden_layers)
    missing = [name.tf2 for name in names if not reader.has_tensor(name.tf2)]
    if missing:
        raise TFHubError(f"{folder}: the encoder lacks {missing[0]!r}; is it complete?")
    return {name.google: reader.get_tensor(name.tf2) for name in names}


def vocab_file(folder):
    """The vocab.txt inside an exported encoder or preprocessor, or None."""
    path = os.path.join(folder, "assets", VOCAB_ASSET)
    return path if os.path.exists(path) else None


def read_do_lower_case(folder):
    """The casing an exported encoder or preprocessor records, or None."""
    reader = tf.train.load_checkpoint(variables_prefix(folder))
    if not reader.has_tensor(_CASING_KEY):
        return None
    return bool(np.asarray(reader.get_tensor(_CASING_KEY)))

