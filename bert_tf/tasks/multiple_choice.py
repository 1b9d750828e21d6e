"""Multiple choice (SWAG): which of several endings follows the context.

A family whose records hold several sequences: each
record is one question with num_choices [CLS] context [SEP] ending [SEP]
sequences, so its input_ids, input_mask and segment_ids have the leading
shape (num_choices,) (record_specs.FeatureSpec.leading_shape). The reader gives
them back as [batch, choices, seq], --dynamic_padding cuts the same columns
from every choice, and the model scores each choice on its own, as the BERT
paper scores SWAG: the pooled [CLS] output through one dense unit, a softmax
over the choices. The head is a ClassifierHead with one output, the layout
of Hugging Face's BertForMultipleChoice, so no new head type is needed.

Its data is swag.SwagData (run_swag.py); score() and write_outputs() take
swag.SwagReferences.
"""

import os

import numpy as np
import tensorflow as tf

from bert_tf import swag
from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.serving import served_model
from bert_tf.tasks.base import Task, encoder_inputs

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


class MultipleChoiceTask(Task):
    """Picks the right one of num_choices sequences (SWAG).

    Features: record_specs.multiple_choice_features'.
    """

    serving_tool = "predict_choices.py"

    def __init__(self, num_choices, max_seq_length=128):
        """Describes the task.

        Args:
          num_choices: The sequences of each record (4 for SWAG).
          max_seq_length: Tokens per sequence.
        """
        self.num_choices = num_choices
        self.max_seq_length = max_seq_length

    def feature_specs(self):
        """[choices, seq] sequences, the label and is_real_example."""
        return record_specs.multiple_choice_features(self.num_choices,
                                                          self.max_seq_length)

    def hf_task_config(self):
        """BertForMultipleChoice."""
        return {"architectures": ["BertForMultipleChoice"]}

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead} with one output: a choice's score."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, 1)}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, choices]}."""
        inputs = encoder_inputs(features)
        # [batch, choices, seq] -> [batch * choices, seq]: every choice is a
        # sequence of its own to the encoder.
        seq = tf.shape(inputs["input_ids"])[-1]
        flat = {name: tf.reshape(value, [-1, seq]) for name, value in inputs.items()}
        pooled = encoder(flat, training=training, pooled_only=True)["pooled_output"]
        # [batch * choices, 1] -> [batch, choices]
        scores = heads[_CLASSIFIER](pooled, training=training)
        return {"logits": tf.reshape(scores, [-1, self.num_choices])}

    def _per_example_loss(self, features, outputs):
        """Cross-entropy over the choices, [batch]."""
        return keras.losses.sparse_categorical_crossentropy(
            features["label_ids"][:, 0], outputs["logits"], from_logits=True)

    def losses(self, features, outputs):
        """Returns {"loss": mean over real examples}."""
        weights = tf.cast(features["is_real_example"][:, 0], tf.float32)
        return {"loss": tf.reduce_sum(self._per_example_loss(features, outputs) * weights)
                / tf.maximum(tf.reduce_sum(weights), 1.0)}

    def predictions(self, features, outputs):
        """Returns probabilities [batch, choices] and is_real_example [batch]."""
        return {"predictions": tf.nn.softmax(outputs["logits"], axis=-1),
                "is_real_example": features["is_real_example"][:, 0]}

    def score(self, predictions, references):
        """Accuracy of the most probable choice, and the loss.

        Args:
          predictions: {"predictions": [examples, choices]} over the real
            examples, in order.
          references: A swag.SwagReferences with their right choices.

        Returns:
          {"eval_accuracy": float, "eval_loss": float}.
        """
        probabilities = np.asarray(predictions["predictions"], np.float64)
        labels = np.asarray(references.labels)
        chosen = probabilities.argmax(-1)
        right = probabilities[np.arange(len(labels)), labels]
        return {"eval_accuracy": float(np.mean(chosen == labels)),
                "eval_loss": float(-np.mean(np.log(np.maximum(right, 1e-30))))}

    @property
    def main_metric(self):
        """eval_accuracy: the share of questions whose right ending is chosen."""
        return "eval_accuracy"

    def write_outputs(self, predictions, references, output_dir):
        """predictions.csv: each question's chosen ending and every ending's probability.

        Args:
          predictions: {"predictions": [examples, choices]}, in input order.
          references: A swag.SwagReferences with the examples.
          output_dir: The folder to write it in.
        """
        swag.write_predictions(os.path.join(output_dir, swag.PREDICTIONS_FILE),
                               references.examples, np.asarray(predictions["predictions"]))

    def serving_module(self, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                       shapes="dynamic", jit_compile=False):
        """A MultipleChoiceServingModule with "choose" (also "serving_default")."""
        module = MultipleChoiceServingModule(encoder, heads[_CLASSIFIER], vocab_file,
                                             do_lower_case, max_seq_length, self.num_choices,
                                             shapes, jit_compile)
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
