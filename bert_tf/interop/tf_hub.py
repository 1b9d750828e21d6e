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

Reading: the encoder's weights sit under the root's `encoder` attribute, so
its variables file reads as a bert_tf checkpoint (checkpoints.py). Encoders
exported by other tools (TF Model Garden's) name and shape their weights
otherwise and are refused with a message.
"""

import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

from bert_tf.model.checkpoint_names import ENCODER
from bert_tf.model.config import BertConfig
from bert_tf.text import text_ops

# TF Hub's names for the encoder's inputs, and bert_tf's for the same tensors.
INPUT_NAMES = {"input_word_ids": "input_ids", "input_mask": "input_mask",
               "input_type_ids": "segment_ids"}
# The sequence length of the preprocessor's own call, as TF Hub's.
DEFAULT_SEQ_LENGTH = 128
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


def variables_prefix(folder):
    """The checkpoint prefix of a SavedModel's variables."""
    return os.path.join(folder, "variables", "variables")


def check_encoder(folder, names):
    """Checks that a SavedModel's variables are those of an encoder bert_tf exported.

    Args:
      folder: The SavedModel, for the message.
      names: The names in its variables file (with object paths).

    Raises:
      TFHubError: for another SavedModel: a preprocessor, a task export, or an
        encoder that another tool exported.
    """
    if not any(name.startswith(f"{ENCODER}/") for name in names):
        raise TFHubError(
            f"{folder}: a SavedModel, but not a BERT encoder that bert_tf exported (its "
            f"variables hold no {ENCODER}/ weights); bert_tf reads the TF Hub encoders "
            "that convert_checkpoint.py --output_format=tf_hub writes")


def config_file(folder):
    """The bert_config.json inside an exported encoder, or None."""
    path = os.path.join(folder, "assets", CONFIG_ASSET)
    return path if os.path.exists(path) else None


def read_config(folder):
    """The BertConfig of an exported encoder.

    Raises:
      TFHubError: if the encoder holds no bert_config.json.
    """
    path = config_file(folder)
    if path is None:
        raise TFHubError(f"{folder}: a SavedModel without assets/{CONFIG_ASSET}; pass "
                         "--bert_config_file")
    return BertConfig.from_json_file(path)


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

