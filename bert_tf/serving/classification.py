"""The raw-text export of sentence (pair) classification and regression (ClassificationTask).

serving_module() builds a ClassificationServingModule from a trained
encoder and classifier head; predict_text.py (TOOL) runs the export on a
file.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.serving import served_model

# The script that runs this export on a file; the export records it.
TOOL = "predict_text.py"


def serving_module(task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                   shapes="dynamic", jit_compile=False):
    """A ClassificationServingModule with "single", "pair" and "serving_default".

    Args:
      task: The tasks.ClassificationTask trained (is_regression;
        sentence_pairs picks the default signature; label_list names the
        classes in the "labels" output).
      encoder: The trained BertModel.
      heads: Its heads.
      vocab_file: The vocab it was trained with.
      do_lower_case: As in training.
      max_seq_length: As in training.
      shapes: One of served_model.SHAPES.
      jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).

    Returns:
      (module, {signature name: tf.function}) for export.save_model.
    """
    module = ClassificationServingModule(encoder, heads[ClassifierHead.checkpoint_key],
                                         vocab_file, do_lower_case, max_seq_length,
                                         task.is_regression, shapes, jit_compile,
                                         task.label_list)
    signatures = {"single": module.single, "pair": module.pair,
                  "serving_default": module.pair if task.sentence_pairs else module.single}
    return module, signatures


class ClassificationServingModule(tf.Module):
    """Classifies raw text: tokenizes in the graph, runs the encoder and the head.

    The tokenizer (text_ops.BertTextTokenizer) gives the same ids as the
    Python FullTokenizer, so served and fine-tuned inputs agree.

    Signatures:
      single: text_a [batch] string -> probabilities [batch, num_labels],
        predictions [batch] (int64 class ids; for regression: the score),
        labels [batch] string (the predicted class's name; only when the
        classes' names were given), truncated [batch] bool (the input had more word pieces than fit
        max_seq_length, and was cut as in training).
      pair: text_a, text_b [batch] strings -> the same.
    """

    def __init__(self, encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                 is_regression=False, shapes="dynamic", jit_compile=False, label_list=None,
                 name="bert_classifier"):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          classifier_head: Its heads.ClassifierHead.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          is_regression: Whether the head outputs a score (STS-B).
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
          label_list: The classes' names in id order, which the "labels" output
            gives; None: no such output.
          name: The tf.Module's name.
        """
        super().__init__(name=name)
        # Imported here, not at the top: text_ops loads tensorflow_text, about
        # 116 MB of resident memory that only an export needs, not training.
        from bert_tf.text import text_ops

        self.encoder = encoder
        self.classifier_head = classifier_head
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(
            max_seq_length, self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"])
        self.model = served_model.ServedModel(self._logits, shapes, jit_compile)
        self.is_regression = is_regression
        self.label_names = None if label_list is None else tf.constant(list(label_list))

    def _logits(self, features):
        """Packed inputs -> {"logits": [batch, num_labels]}."""
        pooled = self.encoder(features, training=False, pooled_only=True)["pooled_output"]
        return {"logits": self.classifier_head(pooled, training=False)}

    def _classify(self, segments):
        """Tokenized segments -> the output dict."""
        logits = self.model(self.packer(*segments))["logits"]
        # [CLS] and a [SEP] after each segment take places too.
        pieces = tf.add_n([segment.row_lengths() for segment in segments])
        truncated = pieces + len(segments) + 1 > self.packer.max_seq_length
        return {**self._outputs(logits), "truncated": truncated}

    def _outputs(self, logits):
        """Logits [batch, num_labels] -> probabilities, predictions and labels."""
        if self.is_regression:
            return {"probabilities": logits, "predictions": logits[:, 0]}
        probabilities = tf.nn.softmax(logits, axis=-1)
        outputs = {"probabilities": probabilities,
                   "predictions": tf.argmax(probabilities, axis=-1)}
        if self.label_names is not None:
            outputs["labels"] = tf.gather(self.label_names, outputs["predictions"])
        return outputs

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
    def single(self, text_a):
        """Classifies single sentences."""
        return self._classify([self.tokenizer.tokenize(text_a)])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a"),
                                  tf.TensorSpec([None], tf.string, name="text_b")])
    def pair(self, text_a, text_b):
        """Classifies sentence pairs."""
        return self._classify([self.tokenizer.tokenize(text_a), self.tokenizer.tokenize(text_b)])
