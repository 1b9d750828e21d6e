"""Task heads on top of BertModel: masked LM, next sentence, classifier.

Each head keeps the original's weight shapes, so checkpoints.py maps the
original cls/predictions/*, cls/seq_relationship/* and output_weights /
output_bias variables one to one. Heads return float32 logits under any
mixed-precision policy, because the losses need the full range. (Inside
call() Keras hands out variables in the compute dtype, hence the explicit
float32 casts of the biases.)
"""

import tensorflow as tf

from bert_tf.dropout import Dropout
from bert_tf.modeling import create_initializer, dense_layer, get_activation, layer_norm_layer

keras = tf.keras


class MaskedLMHead(keras.layers.Layer):
    """Predicts the original token at each masked position (cls/predictions).

    The output projection is tied to the word-embedding table: logits are
    transform(h) @ word_embeddings^T + output_bias. Tying halves the head's
    parameters and is what the original pretrained.
    """

    def __init__(self, config, embedding_table, **kwargs):
        """Creates the transform and the output bias.

        Args:
          config: The encoder's BertConfig.
          embedding_table: The encoder's word-embedding variable
            [vocab, hidden] (BertModel.get_embedding_table()).
          **kwargs: Passed to keras.layers.Layer.
        """
        kwargs.setdefault("name", "predictions")
        super().__init__(**kwargs)
        # The table belongs to the encoder. Hold it through a function so that
        # Keras and tf.train.Checkpoint do not track it a second time under
        # this head (which would move its checkpoint key here).
        self._embedding_table = lambda: embedding_table
        self.transform = dense_layer(
            config, config.hidden_size, "transform",
            activation=get_activation(config.hidden_act))
        self.transform.build((None, None, config.hidden_size))
        self.layer_norm = layer_norm_layer("LayerNorm")
        self.layer_norm.build((None, None, config.hidden_size))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(config.vocab_size,), initializer="zeros")
        self.built = True

    def call(self, sequence_output, masked_lm_positions):
        """Computes logits only at the masked positions.

        Gathering first means the [hidden x vocab] projection runs on
        max_predictions_per_seq positions instead of the whole sequence.

        Args:
          sequence_output: [batch, seq, hidden].
          masked_lm_positions: int32 [batch, max_predictions_per_seq].

        Returns:
          float32 logits [batch, max_predictions_per_seq, vocab].
        """
        # [batch, predictions, hidden]
        hidden = tf.gather(sequence_output, masked_lm_positions, batch_dims=1)
        hidden = tf.cast(self.layer_norm(self.transform(hidden)), self.compute_dtype)
        table = tf.cast(self._embedding_table(), self.compute_dtype)
        logits = tf.einsum("bph,vh->bpv", hidden, table)
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)


class NextSentenceHead(keras.layers.Layer):
    """Is sentence B the real next sentence? (cls/seq_relationship).

    Label 0 means B is the actual next sentence, 1 that it is random, as in
    the original's TFRecords.
    """

    def __init__(self, config, **kwargs):
        """Creates output_weights [2, hidden] and output_bias [2].

        Args:
          config: The encoder's BertConfig.
          **kwargs: Passed to keras.layers.Layer.
        """
        kwargs.setdefault("name", "seq_relationship")
        super().__init__(**kwargs)
        self.output_weights = self.add_weight(
            name="output_weights", shape=(2, config.hidden_size),
            initializer=create_initializer(config))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(2,), initializer="zeros")
        self.built = True

    def call(self, pooled_output):
        """Args: pooled_output [batch, hidden]. Returns: float32 logits [batch, 2]."""
        logits = tf.matmul(pooled_output, self.output_weights, transpose_b=True)
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)


class ClassifierHead(keras.layers.Layer):
    """Dropout, then one dense layer on the pooled [CLS] output.

    The weights keep the original run_classifier.py's names and shapes:
    output_weights [num_labels, hidden] and output_bias [num_labels]. A
    regression task (STS-B) uses num_labels=1.
    """

    def __init__(self, config, num_labels, **kwargs):
        """Creates the output layer.

        Args:
          config: The encoder's BertConfig (for width, dropout and init).
          num_labels: Number of classes, or 1 for regression.
          **kwargs: Passed to keras.layers.Layer.
        """
        kwargs.setdefault("name", "classifier")
        super().__init__(**kwargs)
        self.num_labels = num_labels
        self.dropout = Dropout(config.hidden_dropout_prob)
        self.output_weights = self.add_weight(
            name="output_weights", shape=(num_labels, config.hidden_size),
            initializer=create_initializer(config))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(num_labels,), initializer="zeros")
        self.built = True

    def call(self, pooled_output, training=None):
        """Args: pooled_output [batch, hidden]. Returns: float32 logits [batch, num_labels]."""
        hidden = self.dropout(pooled_output, training=training)
        logits = tf.matmul(hidden, self.output_weights, transpose_b=True)
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)
