"""Token tagging (named entities) on the sequence output, scored by entity F1.

The head is the classifier head (heads.ClassifierHead) applied to every
token instead of to the pooled [CLS] output: one dense layer from the hidden
size to the tags, with dropout before it. Its weights are therefore named as
the classifier's in every format (output_weights / output_bias, and Hugging
Face's classifier.weight / classifier.bias, which BertForTokenClassification
uses too), so a Hugging Face token-classification checkpoint loads as is.

Its data (conll.ConllData) cuts long sentences into windows, gathers each
word's tag back from them, scores the tags by entity F1 and writes the
predicted file; the task and its data share one conll.ConllSettings.
serving/tagging.py is its raw-text export.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs, hf_labels

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


class TaggingTask(Task):
    """Tags each word (its first word piece) with one of label_list.

    Features (record_specs.tagging_features): input_ids, input_mask, segment_ids,
    label_ids, label_weights, word_ids [batch, seq]; sentence_index and
    is_real_example [batch, 1].
    """

    def __init__(self, label_list, settings):
        """Describes the task.

        Args:
          label_list: The tags ("O", "B-PER", ...), in id order.
          settings: The run's conll.ConllSettings, its data's too: the
            records' length (max_seq_length) and how a long sentence is cut
            into windows (window_stride), which the export cuts alike.
        """
        self.label_list = list(label_list)
        self.settings = settings

    @property
    def max_seq_length(self):
        """The records' sequence length."""
        return self.settings.max_seq_length

    def hf_task_config(self):
        """BertForTokenClassification, with the tags as its labels."""
        return {"architectures": ["BertForTokenClassification"], **hf_labels(self.label_list)}

    def feature_specs(self):
        """run_ner.py's records (conll.convert_sentences')."""
        return record_specs.tagging_features(self.max_seq_length)

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead} with one output per tag."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, len(self.label_list))}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, seq, num_tags]}."""
        # [batch, seq, hidden]
        sequence = encoder(encoder_inputs(features), training=training)["sequence_output"]
        return {"logits": heads[_CLASSIFIER](sequence, training=training)}

    def _token_losses(self, features, outputs):
        """Cross-entropy at each position, [batch, seq]; zero where not scored."""
        losses = keras.losses.sparse_categorical_crossentropy(
            features["label_ids"], outputs["logits"], from_logits=True)
        return losses * features["label_weights"]

    def losses(self, features, outputs):
        """Returns {"loss": mean over the scored words of the batch}.

        Each word counts once, whatever its number of pieces or windows.
        """
        return {"loss": tf.reduce_sum(self._token_losses(features, outputs))
                / tf.maximum(tf.reduce_sum(features["label_weights"]), 1.0)}

    def _full_length(self, tensor):
        """Pads [batch, seq, ...] back to max_seq_length, so that batches trimmed to
        different lengths (--dynamic_padding) concatenate."""
        padding = [[0, 0], [0, self.max_seq_length - tf.shape(tensor)[1]]]
        return tf.pad(tensor, padding + [[0, 0]] * (len(tensor.shape) - 2))

    def predictions(self, features, outputs):
        """Per window: the predicted tag id and its probability at each position,
        the positions' word ids and weights, the token losses, the sentence."""
        probabilities = tf.nn.softmax(outputs["logits"], axis=-1)
        return {
            "predictions": self._full_length(tf.argmax(probabilities, axis=-1)),
            "scores": self._full_length(tf.reduce_max(probabilities, axis=-1)),
            "label_weights": self._full_length(features["label_weights"]),
            "word_ids": self._full_length(features["word_ids"]),
            "token_losses": self._full_length(self._token_losses(features, outputs)),
            "sentence_index": features["sentence_index"][:, 0],
            "is_real_example": features["is_real_example"][:, 0],
        }
