"""Tasks: what differs between pretraining and fine-tuning.

A task is four things: its heads, its forward pass through them, its loss, and
what evaluation reads off it: streaming metrics (create_metrics and
update_metrics, for Trainer.evaluate) or per-example predictions (predictions,
for Trainer.predict). training.py runs any task the same way and never asks
which one it has. The feature names a task reads are input_pipeline.py's
contract.

Every loss here is a mean over the examples of one replica's batch; the
training loop divides by the number of replicas before gradients are summed,
which averages them across replicas as the original's CrossShardOptimizer did.
"""

import tensorflow as tf

from bert_tf import checkpoints
from bert_tf.heads import ClassifierHead, MaskedLMHead, NextSentenceHead

keras = tf.keras


def _encoder_inputs(features):
    """The three encoder inputs of a batch of features."""
    return {k: features[k] for k in ("input_ids", "input_mask", "segment_ids")}


class PretrainingTask:
    """Masked LM + next sentence prediction, as the original run_pretraining.py.

    Features: input_ids, input_mask, segment_ids [batch, seq];
    masked_lm_positions, masked_lm_ids, masked_lm_weights [batch, predictions];
    next_sentence_labels [batch, 1] (0: actual next, 1: random).
    """

    def create_heads(self, encoder):
        """Builds the tied MLM head and the NSP head.

        Args:
          encoder: The BertModel whose embedding table the MLM head shares.

        Returns:
          {checkpoints.MLM: MaskedLMHead, checkpoints.NSP: NextSentenceHead},
          keyed as checkpoints.load_weights names its head arguments' modules.
        """
        config = encoder.config
        return {checkpoints.MLM: MaskedLMHead(config, encoder.get_embedding_table()),
                checkpoints.NSP: NextSentenceHead(config)}

    def forward(self, encoder, heads, features, training):
        """Returns {"mlm_logits": [b, p, vocab], "nsp_logits": [b, 2]}, float32."""
        outputs = encoder(_encoder_inputs(features), training=training)
        return {
            "mlm_logits": heads[checkpoints.MLM](
                outputs["sequence_output"], features["masked_lm_positions"]),
            "nsp_logits": heads[checkpoints.NSP](outputs["pooled_output"]),
        }

    def losses(self, features, outputs):
        """The original's losses.

        The MLM loss is the masked_lm_weights-weighted mean over predicted
        positions; padding positions (weight 0) count for nothing. The 1e-5
        in the denominator keeps a batch without predictions finite.

        Args:
          features: The batch.
          outputs: forward()'s result.

        Returns:
          {"loss": mlm + nsp, "masked_lm_loss": ..., "next_sentence_loss": ...}.
        """
        weights = tf.cast(features["masked_lm_weights"], tf.float32)
        # [batch, predictions]
        per_position = keras.losses.sparse_categorical_crossentropy(
            features["masked_lm_ids"], outputs["mlm_logits"], from_logits=True)
        mlm_loss = tf.reduce_sum(per_position * weights) / (tf.reduce_sum(weights) + 1e-5)
        nsp_loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
            features["next_sentence_labels"][:, 0], outputs["nsp_logits"], from_logits=True))
        return {"loss": mlm_loss + nsp_loss, "masked_lm_loss": mlm_loss,
                "next_sentence_loss": nsp_loss}

    def create_metrics(self):
        """The original's eval metrics, as Keras metrics (create in strategy scope)."""
        return {
            "loss": keras.metrics.Mean(),
            "masked_lm_accuracy": keras.metrics.SparseCategoricalAccuracy(),
            "masked_lm_loss": keras.metrics.Mean(),
            "next_sentence_accuracy": keras.metrics.SparseCategoricalAccuracy(),
            "next_sentence_loss": keras.metrics.Mean(),
        }

    def update_metrics(self, metrics, features, outputs):
        """Accumulates one batch into create_metrics()'s metrics."""
        metrics["loss"].update_state(self.losses(features, outputs)["loss"])
        weights = tf.cast(features["masked_lm_weights"], tf.float32)
        metrics["masked_lm_accuracy"].update_state(
            features["masked_lm_ids"], outputs["mlm_logits"], sample_weight=weights)
        metrics["masked_lm_loss"].update_state(
            keras.losses.sparse_categorical_crossentropy(
                features["masked_lm_ids"], outputs["mlm_logits"], from_logits=True),
            sample_weight=weights)
        labels = features["next_sentence_labels"][:, 0]
        metrics["next_sentence_accuracy"].update_state(labels, outputs["nsp_logits"])
        metrics["next_sentence_loss"].update_state(keras.losses.sparse_categorical_crossentropy(
            labels, outputs["nsp_logits"], from_logits=True))


class ClassificationTask:
    """Sentence (pair) classification or regression on the pooled [CLS] output.

    Features: input_ids, input_mask, segment_ids [batch, seq]; label_ids
    [batch, 1] (int32, or float32 for regression); is_real_example [batch, 1]
    (0 for the padding examples that make the last eval batch full).
    """

    def __init__(self, num_labels, is_regression=False):
        """Args: num_labels: classes (1 for regression); is_regression: MSE loss."""
        self.num_labels = 1 if is_regression else num_labels
        self.is_regression = is_regression

    def create_heads(self, encoder):
        """Returns {checkpoints.CLASSIFIER: ClassifierHead}."""
        return {checkpoints.CLASSIFIER: ClassifierHead(encoder.config, self.num_labels)}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, num_labels]}."""
        pooled = encoder(_encoder_inputs(features), training=training)["pooled_output"]
        return {"logits": heads[checkpoints.CLASSIFIER](pooled, training=training)}

    def _per_example_loss(self, features, outputs):
        """Cross-entropy, or squared error for regression; [batch]."""
        labels = features["label_ids"][:, 0]
        if self.is_regression:
            return tf.square(outputs["logits"][:, 0] - tf.cast(labels, tf.float32))
        return keras.losses.sparse_categorical_crossentropy(
            labels, outputs["logits"], from_logits=True)

    def losses(self, features, outputs):
        """Returns {"loss": mean over real examples}."""
        weights = tf.cast(features["is_real_example"][:, 0], tf.float32)
        per_example = self._per_example_loss(features, outputs)
        return {"loss": tf.reduce_sum(per_example * weights)
                / tf.maximum(tf.reduce_sum(weights), 1.0)}

    def predictions(self, outputs):
        """Per-example predictions to collect: probabilities, or the regression value."""
        if self.is_regression:
            return outputs["logits"][:, 0]
        return tf.nn.softmax(outputs["logits"], axis=-1)
