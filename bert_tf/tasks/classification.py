"""Sentence (pair) classification or regression on the pooled [CLS] output (GLUE).

Its GLUE data (glue.GlueData) scores the predictions and writes the
output files; serving/classification.py is its raw-text export.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs, hf_labels

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


class ClassificationTask(Task):
    """Sentence (pair) classification, or regression (STS-B).

    Features: input_ids, input_mask, segment_ids [batch, seq]; label_ids
    [batch, 1] (int32, or float32 for regression); is_real_example [batch, 1]
    (0 for the padding examples that make the last eval batch full).
    """

    def __init__(self, num_labels, is_regression=False, sentence_pairs=False,
                 max_seq_length=128, label_list=None):
        """Describes the task.

        Args:
          num_labels: Classes (ignored for regression, which has one output).
          is_regression: Squared-error loss and a score instead of classes.
          sentence_pairs: Whether the exported model's default signature
            takes pairs.
          max_seq_length: The records' sequence length.
          label_list: The label strings in id order, for a converted
            checkpoint's id2label (hf_task_config); None: unnamed.
        """
        self.num_labels = 1 if is_regression else num_labels
        self.label_list = None if is_regression or label_list is None else list(label_list)
        self.is_regression = is_regression
        self.sentence_pairs = sentence_pairs
        self.max_seq_length = max_seq_length

    def feature_specs(self):
        """run_classifier.py's records (the original's)."""
        return record_specs.classification_features(self.max_seq_length,
                                                         self.is_regression)

    def hf_task_config(self):
        """BertForSequenceClassification, with the labels' names when known."""
        config = {"architectures": ["BertForSequenceClassification"]}
        if self.is_regression:
            config["problem_type"] = "regression"
        elif self.label_list:
            config.update(hf_labels(self.label_list))
        return config

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead}."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, self.num_labels)}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, num_labels]}."""
        pooled = encoder(encoder_inputs(features), training=training)["pooled_output"]
        return {"logits": heads[_CLASSIFIER](pooled, training=training)}

    def losses(self, features, outputs):
        """Returns {"loss": mean over real examples} of the cross-entropy, or of
        the squared error for regression."""
        labels = features["label_ids"][:, 0]
        if self.is_regression:
            per_example = tf.square(outputs["logits"][:, 0] - tf.cast(labels, tf.float32))
        else:
            per_example = keras.losses.sparse_categorical_crossentropy(
                labels, outputs["logits"], from_logits=True)
        weights = tf.cast(features["is_real_example"][:, 0], tf.float32)
        return {"loss": tf.reduce_sum(per_example * weights)
                / tf.maximum(tf.reduce_sum(weights), 1.0)}

    def predictions(self, features, outputs):
        """Returns predictions: probabilities [batch, num_labels], or for
        regression the score [batch]; and is_real_example [batch]."""
        if self.is_regression:
            values = outputs["logits"][:, 0]
        else:
            values = tf.nn.softmax(outputs["logits"], axis=-1)
        return {"predictions": values, "is_real_example": features["is_real_example"][:, 0]}
