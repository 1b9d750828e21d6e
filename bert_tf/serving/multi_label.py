"""The raw-text export of a multi-label classifier (tasks.MultiLabelTask).

  model = tf.saved_model.load(export_dir)
  out = model.signatures["serving_default"](text_a=tf.constant(["The app crashes on login."]))
  out["labels"]         # [b"bug|login"]: the names at or above the threshold
  out["probabilities"]  # [[0.91, 0.08, 0.77]]: each label's, in label_list.txt's order
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.serving.classification import ClassificationServingModule

# The script that runs this export on a file; the export records it.
TOOL = "predict_text.py"


def serving_module(task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                   shapes="dynamic", jit_compile=False):
    """A MultiLabelServingModule with "single", "pair" and "serving_default".

    Args:
      task: The tasks.MultiLabelTask trained (its label_list, threshold and
        label_separator; sentence_pairs picks the default signature).
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
    module = MultiLabelServingModule(
        encoder, heads[ClassifierHead.checkpoint_key], vocab_file, do_lower_case,
        max_seq_length, task.label_list, task.threshold, task.label_separator, shapes,
        jit_compile)
    signatures = {"single": module.single, "pair": module.pair,
                  "serving_default": module.pair if task.sentence_pairs else module.single}
    return module, signatures


class MultiLabelServingModule(ClassificationServingModule):
    """Labels raw text: a ClassificationServingModule with one sigmoid per label.

    Signatures:
      single: text_a [batch] string -> probabilities [batch, num_labels]
        float32, predictions [batch, num_labels] int64 (1 for each label at or
        above the threshold), labels [batch] string (their names, joined by
        the label separator; empty for none), truncated [batch] bool (the
        input had more word pieces than fit max_seq_length and was cut, as
        in training).
      pair: text_a, text_b [batch] strings -> the same.
    """

    def __init__(self, encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                 label_list, threshold=0.5, label_separator="|", shapes="dynamic",
                 jit_compile=False):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          classifier_head: Its heads.ClassifierHead, one output per label.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          label_list: The labels' names, in the head's order.
          threshold: A label is predicted at this probability or more.
          label_separator: What joins the predicted labels' names.
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
        """
        super().__init__(encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                         shapes=shapes, jit_compile=jit_compile, label_list=label_list,
                         name="bert_multi_label_classifier")
        self.threshold = float(threshold)
        self.label_separator = label_separator

    def _outputs(self, logits):
        """Logits [batch, num_labels] -> each label's probability, the chosen ones, their names."""
        probabilities = tf.sigmoid(logits)
        chosen = probabilities >= self.threshold  # [batch, num_labels]
        names = tf.ragged.boolean_mask(
            tf.broadcast_to(self.label_names, tf.shape(chosen)), chosen)
        return {"probabilities": probabilities, "predictions": tf.cast(chosen, tf.int64),
                "labels": tf.strings.reduce_join(names, axis=-1,
                                                 separator=self.label_separator)}
