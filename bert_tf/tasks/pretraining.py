"""Masked LM + next sentence prediction, as the original run_pretraining.py."""

import numpy as np
import tensorflow as tf

from bert_tf.model.heads import MaskedLMHead, NextSentenceHead
from bert_tf.records import record_specs
from bert_tf.tasks.base import Task, encoder_inputs

keras = tf.keras

_MLM, _NSP = MaskedLMHead.checkpoint_key, NextSentenceHead.checkpoint_key


class PretrainingTask(Task):
    """Masked LM + next sentence prediction.

    Features: input_ids, input_mask, segment_ids [batch, seq];
    masked_lm_positions, masked_lm_ids, masked_lm_weights [batch, predictions];
    next_sentence_labels [batch, 1] (0: actual next, 1: random).
    """

    def __init__(self, max_seq_length=128, max_predictions_per_seq=20):
        """Args: the record sizes (the original's flag defaults)."""
        self.max_seq_length = max_seq_length
        self.max_predictions_per_seq = max_predictions_per_seq

    def feature_specs(self):
        """create_pretraining_data.py's records."""
        return record_specs.pretraining_features(self.max_seq_length,
                                                      self.max_predictions_per_seq)

    def create_heads(self, encoder):
        """Builds the tied MLM head and the NSP head.

        Args:
          encoder: The BertModel whose embedding table the MLM head shares.

        Returns:
          {"mlm": MaskedLMHead, "nsp": NextSentenceHead}.
        """
        return {_MLM: MaskedLMHead(encoder.config, encoder.get_embedding_table()),
                _NSP: NextSentenceHead(encoder.config)}

    def forward(self, encoder, heads, features, training):
        """Returns {"mlm_logits": [b, p, vocab], "nsp_logits": [b, 2]}, float32."""
        outputs = encoder(encoder_inputs(features), training=training)
        return {
            "mlm_logits": heads[_MLM](outputs["sequence_output"],
                                      features["masked_lm_positions"]),
            "nsp_logits": heads[_NSP](outputs["pooled_output"]),
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

    def predictions(self, features, outputs):
        """The predicted ids and labels, beside the true ones (the records hold both).

        Returns:
          masked_lm_predictions, masked_lm_ids, masked_lm_weights [batch,
          predictions]; next_sentence_predictions, next_sentence_labels [batch].
        """
        return {
            "masked_lm_predictions": tf.argmax(outputs["mlm_logits"], axis=-1,
                                               output_type=tf.int32),
            "masked_lm_ids": features["masked_lm_ids"],
            "masked_lm_weights": features["masked_lm_weights"],
            "next_sentence_predictions": tf.argmax(outputs["nsp_logits"], axis=-1,
                                                   output_type=tf.int32),
            "next_sentence_labels": features["next_sentence_labels"][:, 0],
        }

    def score(self, predictions, references=None):
        """Masked-LM and next-sentence accuracy over every prediction.

        Args:
          predictions: predictions()'s arrays over all examples.
          references: Unused: the records carry their own labels.

        Returns:
          {"masked_lm_accuracy", "next_sentence_accuracy"}, as create_metrics()
          computes them batch by batch.
        """
        weights = np.asarray(predictions["masked_lm_weights"], np.float64)
        hits = predictions["masked_lm_predictions"] == predictions["masked_lm_ids"]
        return {
            "masked_lm_accuracy": float(np.sum(hits * weights) / max(np.sum(weights), 1e-12)),
            "next_sentence_accuracy": float(np.mean(
                predictions["next_sentence_predictions"]
                == predictions["next_sentence_labels"])),
        }
