"""Exports a fine-tuned classifier as a SavedModel that takes raw text.

The SavedModel tokenizes in the graph (text_ops.BertTextTokenizer, which
gives the same ids as the Python FullTokenizer), packs [CLS] a [SEP] b [SEP],
runs the encoder and the head, and returns probabilities. A user needs
nothing but TensorFlow and tensorflow_text to serve it:

  import tensorflow as tf, tensorflow_text  # registers the text ops
  model = tf.saved_model.load(export_dir)
  model.signatures["serving_default"](text_a=tf.constant(["Nice movie!"]))

Signatures:
  "single": text_a [batch] string -> probabilities [batch, num_labels],
    predictions [batch] (int64 class ids; for regression: the score).
  "pair": text_a, text_b [batch] strings -> the same.
  "serving_default": "pair" for sentence-pair tasks, else "single".
"""

import tensorflow as tf
from absl import logging

from bert_tf import text_ops


class ClassifierExportModule(tf.Module):
    """A tf.Module that holds the tokenizer, the encoder and the classifier head."""

    def __init__(self, encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                 is_regression=False):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          classifier_head: Its heads.ClassifierHead.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          is_regression: Whether the head outputs a score (STS-B).
        """
        super().__init__(name="bert_classifier")
        self.encoder = encoder
        self.classifier_head = classifier_head
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(
            max_seq_length, self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"])
        self.is_regression = is_regression

    def _classify(self, segments):
        """Tokenized segments -> the output dict."""
        features = self.packer(*segments)
        pooled = self.encoder(features, training=False)["pooled_output"]
        logits = self.classifier_head(pooled, training=False)
        if self.is_regression:
            return {"probabilities": logits, "predictions": logits[:, 0]}
        probabilities = tf.nn.softmax(logits, axis=-1)
        return {"probabilities": probabilities,
                "predictions": tf.argmax(probabilities, axis=-1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
    def single(self, text_a):
        """Classifies single sentences."""
        return self._classify([self.tokenizer.tokenize(text_a)])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a"),
                                  tf.TensorSpec([None], tf.string, name="text_b")])
    def pair(self, text_a, text_b):
        """Classifies sentence pairs."""
        return self._classify([self.tokenizer.tokenize(text_a), self.tokenizer.tokenize(text_b)])


def export_classifier(export_dir, encoder, classifier_head, vocab_file, do_lower_case,
                      max_seq_length, is_regression=False, sentence_pairs=False):
    """Writes the raw-text SavedModel.

    It is written to a temporary folder beside export_dir and renamed, so
    that a failed export leaves no folder that looks like a SavedModel: the
    temporary folder is removed, and an earlier export_dir is left as it was.

    Args:
      export_dir: Destination folder; replaced if it exists.
      encoder, classifier_head: The trained model.
      vocab_file, do_lower_case, max_seq_length: As in training.
      is_regression: Whether the task is a regression (STS-B).
      sentence_pairs: Whether serving_default takes pairs.

    Returns:
      export_dir.
    """
    module = ClassifierExportModule(encoder, classifier_head, vocab_file, do_lower_case,
                                    max_seq_length, is_regression)
    signatures = {"single": module.single, "pair": module.pair,
                  "serving_default": module.pair if sentence_pairs else module.single}
    tmp = export_dir.rstrip("/") + ".tmp"
    # One left by a run that was killed.
    if tf.io.gfile.exists(tmp):
        tf.io.gfile.rmtree(tmp)
    try:
        tf.saved_model.save(module, tmp, signatures=signatures)
    except BaseException:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.rmtree(tmp)
        raise
    if tf.io.gfile.exists(export_dir):
        tf.io.gfile.rmtree(export_dir)
    tf.io.gfile.rename(tmp, export_dir)
    logging.info("Exported a raw-text SavedModel to %s", export_dir)
    return export_dir
