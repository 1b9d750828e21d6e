"""The raw-text export of multiple choice (MultipleChoiceTask, SWAG).

serving_module() builds a MultipleChoiceServingModule from a trained
encoder and its one-output classifier head; predict_choices.py (TOOL) runs
the export on a file.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.serving import served_model

# The script that runs this export on a file; the export records it.
TOOL = "predict_choices.py"


def serving_module(task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                   shapes="dynamic", jit_compile=False):
    """A MultipleChoiceServingModule with "choose" (also "serving_default").

    Args:
      task: The tasks.MultipleChoiceTask trained (its num_choices).
      encoder, heads, vocab_file, do_lower_case, max_seq_length, shapes,
        jit_compile: As classification.serving_module's.

    Returns:
      (module, {signature name: tf.function}) for export.save_model.
    """
    module = MultipleChoiceServingModule(encoder, heads[ClassifierHead.checkpoint_key],
                                         vocab_file, do_lower_case, max_seq_length,
                                         task.num_choices, shapes, jit_compile)
    return module, {"choose": module.choose, "serving_default": module.choose}


class MultipleChoiceServingModule(tf.Module):
    """Chooses among raw-text endings: tokenizes in the graph, runs the encoder and the head.

    Each choice is packed as training packed it: [CLS] context [SEP] ending
    [SEP], the pair cut as run_classifier.py cuts one.

    Signatures:
      choose: context [batch] string, endings [batch, num_choices] string (for
        SWAG, each the start of the next sentence and one ending, as
        swag.second_segments joins them) -> probabilities [batch, num_choices],
        predictions [batch] (int64, the chosen ending), truncated [batch] bool
        (some choice had more word pieces than fit max_seq_length, and was
        cut as in training).
    """

    def __init__(self, encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                 num_choices, shapes="dynamic", jit_compile=False):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          classifier_head: Its one-output heads.ClassifierHead.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          num_choices: The endings of each question.
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
        """
        super().__init__(name="bert_multiple_choice")
        # Imported here, not at the top: text_ops loads tensorflow_text, which
        # only an export needs (ClassificationServingModule says why).
        from bert_tf.text import text_ops

        self.encoder = encoder
        self.classifier_head = classifier_head
        self.num_choices = num_choices
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(
            max_seq_length, self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"])
        self.model = served_model.ServedModel(self._scores, shapes, jit_compile)
        # The signature's endings have this many columns; the serving function checks it.
        self.choose = tf.function(
            self._choose, input_signature=[
                tf.TensorSpec([None], tf.string, name="context"),
                tf.TensorSpec([None, num_choices], tf.string, name="endings")])

    def _scores(self, features):
        """Packed sequences [questions * choices, seq] -> {"logits": [questions * choices, 1]}."""
        pooled = self.encoder(features, training=False, pooled_only=True)["pooled_output"]
        return {"logits": self.classifier_head(pooled, training=False)}

    def _choose(self, context, endings):
        """The "choose" signature; see the class docstring."""
        # Each question's context once per ending, and the endings flat, both
        # [questions * choices] in question-major order.
        contexts = self.tokenizer.tokenize(tf.repeat(context, self.num_choices))
        flat_endings = self.tokenizer.tokenize(tf.reshape(endings, [-1]))
        logits = self.model(self.packer(contexts, flat_endings))["logits"]
        probabilities = tf.nn.softmax(tf.reshape(logits, [-1, self.num_choices]), axis=-1)
        # [CLS] and two [SEP]s take places too.
        pieces = contexts.row_lengths() + flat_endings.row_lengths() + 3
        truncated = tf.reduce_any(
            tf.reshape(pieces > self.packer.max_seq_length, [-1, self.num_choices]), axis=-1)
        return {"probabilities": probabilities,
                "predictions": tf.argmax(probabilities, axis=-1), "truncated": truncated}
