"""Task heads on top of BertModel: masked LM, next sentence, classifier, span.

Each head keeps the original's weight shapes and declares its own names in
the three checkpoint formats (Head.weight_names), so checkpoints.py loads,
saves and converts it without a table of its own. A new head is one new
class and no other edit: loading and saving in a run need only the task's
create_heads(), and convert_checkpoint.py looks for every Head subclass
(head_types()) in a checkpoint. Heads return
float32 logits under any mixed-precision policy, because the losses need
the full range. (Inside call() Keras hands out variables in the compute
dtype, hence the explicit float32 casts of the biases.)
"""

import tensorflow as tf

from bert_tf.checkpoints.checkpoint_names import WeightName, dense_names, layer_norm_names
from bert_tf.model.dropout import Dropout
from bert_tf.model.modeling import create_initializer, dense_layer, get_activation, layer_norm_layer

keras = tf.keras


class Head(keras.layers.Layer):
    """A task head: a Keras layer that knows its checkpoint names.

    Subclasses set `checkpoint_key` and implement weight_names() and
    from_shapes(); checkpoints.py needs nothing else to load, save, convert
    and detect them.

    Attributes:
      checkpoint_key: The head's key in bert_tf's own checkpoints (the
        keyword under which training_loop.Trainer hands it to tf.train.Checkpoint)
        and in task.create_heads()'s dict.
      hf_copies: {Hugging Face name: name of a weight of this head} of tensors
        that Hugging Face saves twice (tied weights); written on save, and
        skipped on load.
      hf_architecture: The transformers class of an encoder with this head
        alone, for a converted config.json's "architectures".
    """

    checkpoint_key = None
    hf_copies = {}
    hf_architecture = None

    @classmethod
    def weight_names(cls):
        """Every weight of the head, with its name in each format.

        Returns:
          A list of checkpoint_names.WeightName whose module is checkpoint_key.
        """
        raise NotImplementedError

    @classmethod
    def from_shapes(cls, encoder, shapes):
        """Builds the head whose weights have the given shapes (for conversion).

        Args:
          encoder: The BertModel the head sits on.
          shapes: {WeightName.attr: shape} of every weight of this head, as a
            checkpoint holds them.

        Returns:
          A new head of this class.
        """
        raise NotImplementedError


class MaskedLMHead(Head):
    """Predicts the original token at each masked position (cls/predictions).

    The output projection is tied to the word-embedding table: logits are
    transform(h) @ word_embeddings^T + output_bias. Tying halves the head's
    parameters and is what the original pretrained.
    """

    checkpoint_key = "mlm"
    # Hugging Face's decoder is tied to the word embeddings, but its bias is
    # saved a second time under the decoder's name.
    hf_copies = {"cls.predictions.decoder.bias": "output_bias"}
    hf_architecture = "BertForMaskedLM"

    @classmethod
    def weight_names(cls):
        """The original's cls/predictions/* and Hugging Face's cls.predictions.*."""
        key = cls.checkpoint_key
        return [
            *dense_names(key, "transform", "cls/predictions/transform/dense",
                         "cls.predictions.transform.dense"),
            *layer_norm_names(key, "layer_norm", "cls/predictions/transform/LayerNorm",
                              "cls.predictions.transform.LayerNorm"),
            WeightName(key, "output_bias", "cls/predictions/output_bias",
                       "cls.predictions.bias"),
        ]

    @classmethod
    def from_shapes(cls, encoder, shapes):
        """A head tied to encoder's embedding table (its shapes follow the config)."""
        return cls(encoder.config, encoder.get_embedding_table())

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
        # [batch * predictions, hidden] @ [hidden, vocab]: a 2-D matmul, whose
        # gradients are 2-D matmuls too (faster than einsums' on a CPU).
        logits = tf.matmul(tf.reshape(hidden, [-1, tf.shape(hidden)[-1]]), table,
                           transpose_b=True)
        # [batch, predictions, vocab]
        logits = tf.reshape(logits, tf.concat([tf.shape(hidden)[:-1], [-1]], axis=0))
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)


class NextSentenceHead(Head):
    """Is sentence B the real next sentence? (cls/seq_relationship).

    Label 0 means B is the actual next sentence, 1 that it is random, as in
    the original's TFRecords.
    """

    checkpoint_key = "nsp"
    hf_architecture = "BertForNextSentencePrediction"

    @classmethod
    def weight_names(cls):
        """The original's cls/seq_relationship/* and Hugging Face's cls.seq_relationship.*.

        Our output_weights are [2, hidden] like the original's, which is also
        Hugging Face's [out, in] layout: no transpose.
        """
        key = cls.checkpoint_key
        return [
            WeightName(key, "output_weights", "cls/seq_relationship/output_weights",
                       "cls.seq_relationship.weight"),
            WeightName(key, "output_bias", "cls/seq_relationship/output_bias",
                       "cls.seq_relationship.bias"),
        ]

    @classmethod
    def from_shapes(cls, encoder, shapes):
        """A head for encoder's width (its shapes follow the config)."""
        return cls(encoder.config)

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


class ClassifierHead(Head):
    """Dropout, then one dense layer on the pooled [CLS] output (or on each token's).

    The weights keep the original run_classifier.py's names and shapes:
    output_weights [num_labels, hidden] and output_bias [num_labels]. A
    regression task (STS-B) uses num_labels=1. Hugging Face's
    BertForSequenceClassification names them classifier.weight and
    classifier.bias, in the same [out, in] layout.
    """

    checkpoint_key = "classifier"
    # The same weights serve token tagging (BertForTokenClassification): the
    # run's folder says which (Task.hf_task_config).
    hf_architecture = "BertForSequenceClassification"

    @classmethod
    def weight_names(cls):
        """The original's output_weights, output_bias; Hugging Face's classifier.*."""
        key = cls.checkpoint_key
        return [WeightName(key, "output_weights", "output_weights", "classifier.weight"),
                WeightName(key, "output_bias", "output_bias", "classifier.bias")]

    @classmethod
    def from_shapes(cls, encoder, shapes):
        """A head with as many labels as the stored output_bias has values."""
        return cls(encoder.config, num_labels=shapes["output_bias"][0])

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

    def call(self, hidden, training=None):
        """Classifies each hidden vector.

        Args:
          hidden: [batch, hidden], the pooled output; or [batch, seq, hidden],
            the sequence output of a token tagging task.
          training: Whether dropout is active.

        Returns:
          float32 logits [batch, num_labels] (or [batch, seq, num_labels]).
        """
        hidden = self.dropout(hidden, training=training)
        logits = tf.matmul(hidden, self.output_weights, transpose_b=True)
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)


class SpanHead(Head):
    """Scores each token as the start and as the end of an answer (cls/squad).

    One dense layer from the hidden size to two outputs at every position,
    as the original run_squad.py: output_weights [2, hidden] (row 0 scores
    starts, row 1 ends) and output_bias [2], with no dropout before it (the
    original had none on the squad logits). Hugging Face's
    BertForQuestionAnswering names them qa_outputs.weight and
    qa_outputs.bias, in the same [out, in] layout: no transpose.
    """

    checkpoint_key = "squad"
    hf_architecture = "BertForQuestionAnswering"

    @classmethod
    def weight_names(cls):
        """The original's cls/squad/*, Hugging Face's qa_outputs.*."""
        key = cls.checkpoint_key
        return [WeightName(key, "output_weights", "cls/squad/output_weights",
                           "qa_outputs.weight"),
                WeightName(key, "output_bias", "cls/squad/output_bias", "qa_outputs.bias")]

    @classmethod
    def from_shapes(cls, encoder, shapes):
        """A head for encoder's width (its shapes follow the config)."""
        return cls(encoder.config)

    def __init__(self, config, **kwargs):
        """Creates output_weights [2, hidden] and output_bias [2].

        Args:
          config: The encoder's BertConfig (for width and init).
          **kwargs: Passed to keras.layers.Layer.
        """
        kwargs.setdefault("name", "squad")
        super().__init__(**kwargs)
        self.output_weights = self.add_weight(
            name="output_weights", shape=(2, config.hidden_size),
            initializer=create_initializer(config))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(2,), initializer="zeros")
        self.built = True

    def call(self, sequence_output):
        """Scores every position.

        Args:
          sequence_output: [batch, seq, hidden].

        Returns:
          (start_logits, end_logits): float32, each [batch, seq].
        """
        weights = tf.cast(self.output_weights, sequence_output.dtype)
        # [batch, seq, 2]
        logits = tf.cast(tf.einsum("bsh,oh->bso", sequence_output, weights), tf.float32)
        logits += tf.cast(self.output_bias, tf.float32)
        return logits[:, :, 0], logits[:, :, 1]


def head_types():
    """Every Head subclass defined so far: what convert_checkpoint.py looks for.

    Python keeps each class's subclasses, so a head needs no list to be
    added to; a head in a module of its own counts once that module is
    imported (convert_checkpoint.py imports bert_tf.tasks, and with it every
    task's heads).

    Returns:
      A tuple of classes, subclasses after their parents.
    """
    found, pending = [], list(Head.__subclasses__())
    while pending:
        head_type = pending.pop(0)
        found.append(head_type)
        pending += head_type.__subclasses__()
    return tuple(found)
