"""Multi-label classification on the pooled [CLS] output: any number of labels per text.

One sigmoid per label on the classifier head (the same output_weights and
output_bias as sentence classification, so that checkpoints convert to
Hugging Face's BertForSequenceClassification with problem_type
multi_label_classification), trained with the binary cross-entropy of each
label, averaged over the labels and the examples as Hugging Face's
BCEWithLogitsLoss does. A label is predicted when its probability is at
least the threshold. Its data (csv.LabelledData) scores the
predictions and writes the output files; serving/multi_label.py is its
raw-text export.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs, hf_labels

_CLASSIFIER = ClassifierHead.checkpoint_key


class MultiLabelTask(Task):
    """Text (pair) classification into any subset of labels.

    Features: input_ids, input_mask, segment_ids [batch, seq]; label_ids
    [batch, num_labels, 1] float32, 1.0 for each label an example has;
    is_real_example [batch, 1].
    """

    def __init__(self, label_list, max_seq_length=128, threshold=0.5, sentence_pairs=False,
                 label_separator="|"):
        """Describes the task.

        Args:
          label_list: The labels' names, in the model's order.
          max_seq_length: The records' sequence length.
          threshold: A label is predicted at this probability or more (in the
            export; scoring takes the data's).
          sentence_pairs: Whether the exported model's default signature
            takes pairs.
          label_separator: What joins the export's predicted labels' names.
        """
        self.label_list = list(label_list)
        self.num_labels = len(self.label_list)
        self.max_seq_length = max_seq_length
        self.threshold = threshold
        self.sentence_pairs = sentence_pairs
        self.label_separator = label_separator

    def feature_specs(self):
        """record_specs.multi_label_features."""
        return record_specs.multi_label_features(self.max_seq_length, self.num_labels)

    def hf_task_config(self):
        """BertForSequenceClassification, multi_label_classification, with the labels' names."""
        return {"architectures": ["BertForSequenceClassification"],
                "problem_type": "multi_label_classification",
                **hf_labels(self.label_list)}

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead} with one output per label."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, self.num_labels)}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, num_labels]}."""
        pooled = encoder(encoder_inputs(features), training=training)["pooled_output"]
        return {"logits": heads[_CLASSIFIER](pooled, training=training)}

    def losses(self, features, outputs):
        """Returns {"loss": the binary cross-entropy, mean over labels and real examples}."""
        targets = tf.cast(features["label_ids"][..., 0], tf.float32)  # [batch, num_labels]
        per_label = tf.nn.sigmoid_cross_entropy_with_logits(labels=targets,
                                                            logits=outputs["logits"])
        per_example = tf.reduce_mean(per_label, axis=-1)
        weights = tf.cast(features["is_real_example"][:, 0], tf.float32)
        return {"loss": tf.reduce_sum(per_example * weights)
                / tf.maximum(tf.reduce_sum(weights), 1.0)}

    def predictions(self, features, outputs):
        """Returns each label's probability [batch, num_labels], and is_real_example."""
        return {"predictions": tf.sigmoid(outputs["logits"]),
                "is_real_example": features["is_real_example"][:, 0]}
