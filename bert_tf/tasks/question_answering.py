"""Extractive question answering (SQuAD 1.1 and 2.0): an answer span in the context.

The head (heads.SpanHead) scores every token of a [CLS] question [SEP]
context [SEP] window as the start and as the end of the answer, as the
original run_squad.py did. Contexts longer than a window are cut into
overlapping windows by the data (squad.SquadData), which then picks each
question's best span over all its windows from the start and end logits
that this task predicts per window, scores the answers with the official
script's metrics and writes the original's output files. The task and its
data share one squad.SquadSettings; serving/question_answering.py is its
raw-text export.

SQuAD 2.0 models answer "no answer" with the span [CLS]..[CLS] (position 0):
a question is unanswerable when that null score beats the best span's by
more than null_score_diff_threshold.
"""

import tensorflow as tf

from bert_tf.model.heads import SpanHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs

_SPAN = SpanHead.checkpoint_key

# What trimmed positions get in the predicted logits: they are padding, never
# an answer, and a logit this low keeps them out of every n-best list.
_PADDING_LOGIT = -10000.0


class QuestionAnsweringTask(Task):
    """Finds each question's answer span in its context (SQuAD).

    Features (record_specs.question_answering_features): input_ids, input_mask, segment_ids
    [batch, seq]; unique_ids [batch, 1]; start_positions and end_positions
    [batch, 1] in training records only; is_real_example [batch, 1].
    """

    def __init__(self, settings):
        """Describes the task.

        Args:
          settings: The run's squad.SquadSettings, its data's too (checked
            when built): the windows' length, and for the raw-text export
            how a context is windowed and an answer chosen.
        """
        self.settings = settings

    @property
    def max_seq_length(self):
        """The windows' length, [CLS] and [SEP]s included."""
        return self.settings.max_seq_length

    def hf_task_config(self):
        """BertForQuestionAnswering."""
        return {"architectures": ["BertForQuestionAnswering"]}

    def feature_specs(self):
        """run_squad.py's training records (the original's, plus is_real_example)."""
        return record_specs.question_answering_features(self.max_seq_length, is_training=True)

    def prediction_feature_specs(self):
        """run_squad.py's prediction records: without the answer's positions,
        which are scored on text instead (squad.SquadData.score)."""
        return record_specs.question_answering_features(self.max_seq_length, is_training=False)

    def create_heads(self, encoder):
        """Returns {"squad": SpanHead}."""
        return {_SPAN: SpanHead(encoder.config)}

    def forward(self, encoder, heads, features, training):
        """Returns {"start_logits", "end_logits"}: float32 [batch, seq] each."""
        # [batch, seq, hidden]
        sequence = encoder(encoder_inputs(features), training=training)["sequence_output"]
        start_logits, end_logits = heads[_SPAN](sequence)
        return {"start_logits": start_logits, "end_logits": end_logits}

    def _position_losses(self, features, outputs):
        """Cross-entropy of the start and of the end position, [batch] each.

        As the original: a softmax over every position of the window, padding
        included, against the position as a one-hot vector.
        """
        def cross_entropy(logits, positions):
            one_hot = tf.one_hot(positions, depth=tf.shape(logits)[1], dtype=tf.float32)
            return -tf.reduce_sum(one_hot * tf.nn.log_softmax(logits, axis=-1), axis=-1)

        return (cross_entropy(outputs["start_logits"], features["start_positions"][:, 0]),
                cross_entropy(outputs["end_logits"], features["end_positions"][:, 0]))

    @staticmethod
    def _real(features):
        """[batch] float32 weights: 1 for real records, 0 for padding ones."""
        if "is_real_example" in features:
            return tf.cast(features["is_real_example"][:, 0], tf.float32)
        return tf.ones_like(features["unique_ids"][:, 0], tf.float32)

    def losses(self, features, outputs):
        """Returns {"loss", "start_loss", "end_loss"}: means over real records.

        loss is the original's (start_loss + end_loss) / 2.
        """
        weights = self._real(features)
        total = tf.maximum(tf.reduce_sum(weights), 1.0)
        start, end = self._position_losses(features, outputs)
        start_loss = tf.reduce_sum(start * weights) / total
        end_loss = tf.reduce_sum(end * weights) / total
        return {"loss": (start_loss + end_loss) / 2.0, "start_loss": start_loss,
                "end_loss": end_loss}

    def _full_length(self, logits):
        """Pads [batch, seq] logits back to max_seq_length (for batches cut shorter)."""
        padding = [[0, 0], [0, self.max_seq_length - tf.shape(logits)[1]]]
        return tf.pad(logits, padding, constant_values=_PADDING_LOGIT)

    def predictions(self, features, outputs):
        """Per window: unique_ids [batch], start_logits and end_logits
        [batch, max_seq_length], is_real_example [batch]."""
        real = features.get("is_real_example", tf.ones_like(features["unique_ids"]))
        return {
            "unique_ids": features["unique_ids"][:, 0],
            "start_logits": self._full_length(outputs["start_logits"]),
            "end_logits": self._full_length(outputs["end_logits"]),
            "is_real_example": real[:, 0],
        }
