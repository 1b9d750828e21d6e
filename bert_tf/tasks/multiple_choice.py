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

Its data is swag.SwagData (run_swag.py), which scores the predictions and
writes predictions.csv; serving/multiple_choice.py is its raw-text export.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


class MultipleChoiceTask(Task):
    """Picks the right one of num_choices sequences (SWAG).

    Features: record_specs.multiple_choice_features'.
    """

    def __init__(self, settings):
        """Describes the task.

        Args:
          settings: The run's swag.SwagSettings, its data's too: the
            sequences of each record (num_choices, 4 for SWAG) and their
            length (max_seq_length).
        """
        self.settings = settings

    @property
    def num_choices(self):
        """The sequences of each record."""
        return self.settings.num_choices

    @property
    def max_seq_length(self):
        """Tokens per sequence."""
        return self.settings.max_seq_length

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
