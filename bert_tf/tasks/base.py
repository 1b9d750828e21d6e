"""The Task protocol: the model side of one training family.

A task is what training_loop.Trainer, checkpoints.py and finetune.py are
given so that they need to know nothing task-specific: the records it
reads, the heads on the encoder, the loss and what it predicts. It declares:

  feature_specs()   the records it reads (a record_specs.py layout, TF-free);
  prediction_feature_specs()  those of the records it predicts on, where
                    they lack the training labels (optional: by default
                    the same);
  create_heads()    its heads on the encoder, each naming its own checkpoint
                    weights (heads.Head), keyed by their checkpoint_key;
  forward()         the encoder and the heads on a batch, float32 outputs;
  losses()          {"loss": the scalar training minimizes, ...};
  predictions()     per-example tensors to collect, in input order
                    (inference.Inference.predict);
  create_metrics()  streaming Keras metrics, and update_metrics() to feed
                    them a batch, for Trainer.evaluate (optional: only
                    pretraining streams);
  hf_task_config()  what a Hugging Face config.json says of its model
                    (optional);
  max_seq_length    the records' length.

What the predictions are scored against, and the files written from them,
belong to the data (protocol.FinetuneData: score(), main_metric,
write_outputs()); a task's raw-text export belongs to serving/
(task_serving.py finds a task's serving module). A task needs neither.

Fine-tuning records that pad the last eval or predict batch to full size (a
TPU needs every batch full) carry is_real_example; a task that reads such
records returns it with its predictions, and finetune.run drops the
padding rows.

Every loss is a mean over the examples of one replica's batch; the training
loop divides by the number of replicas before gradients are summed, which
averages them across replicas as the original's CrossShardOptimizer did.
"""

import abc


def encoder_inputs(features):
    """The three encoder inputs of a batch of features.

    Args:
      features: A batch dict with at least input_ids, input_mask, segment_ids.

    Returns:
      A dict of just those three, as BertModel takes them.
    """
    return {k: features[k] for k in ("input_ids", "input_mask", "segment_ids")}


class Task(abc.ABC):
    """The base class of every task; see the module docstring for the protocol.

    Attributes:
      max_seq_length: The records' sequence length, which finetune.run checks
        against the config's and the data's; None where the task does not say.
    """

    max_seq_length = None

    @abc.abstractmethod
    def feature_specs(self):
        """The records this task reads.

        Returns:
          A tuple of record_specs.FeatureSpec.
        """

    def prediction_feature_specs(self):
        """The records this task predicts on (dev and test sets).

        One task both trains and predicts, so the layout is chosen per set
        of records, not when the task is built. By default it is
        feature_specs(): records that carry their labels (zeros in a test
        set).

        Returns:
          A tuple of record_specs.FeatureSpec.
        """
        return self.feature_specs()

    @abc.abstractmethod
    def create_heads(self, encoder):
        """Builds the task's heads.

        Args:
          encoder: The BertModel they sit on.

        Returns:
          {head.checkpoint_key: heads.Head}.
        """

    @abc.abstractmethod
    def forward(self, encoder, heads, features, training):
        """Runs the encoder and the heads on one batch.

        Args:
          encoder: The BertModel.
          heads: create_heads()'s dict.
          features: A batch of the records.
          training: Whether dropout is on.

        Returns:
          A dict of float32 tensors.
        """

    @abc.abstractmethod
    def losses(self, features, outputs):
        """The losses of one batch.

        Args:
          features: The batch.
          outputs: forward()'s result.

        Returns:
          A dict with "loss" (what training minimizes) and any parts of it.
        """

    @abc.abstractmethod
    def predictions(self, features, outputs):
        """What to collect per example, which the data scores and writes output files from.

        Args:
          features: The batch.
          outputs: forward()'s result.

        Returns:
          {name: tensor [batch, ...]}; with "is_real_example" [batch] when the
          records pad their last batch.
        """

    def create_metrics(self):
        """Streaming eval metrics, for Trainer.evaluate (create them in the strategy's scope).

        Fine-tuning tasks have none: their data scores every prediction
        (FinetuneData.score, through finetune.evaluate), which streaming
        cannot do for entity F1 or SQuAD's answers.

        Returns:
          {name: keras.metrics.Metric}.

        Raises:
          NotImplementedError: for a task without streaming metrics.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no streaming metrics: score its predictions with "
            "finetune.evaluate")

    def update_metrics(self, metrics, features, outputs):
        """Accumulates one batch into create_metrics()'s metrics.

        Args:
          metrics: create_metrics()'s dict.
          features: The batch.
          outputs: forward()'s result.

        Raises:
          NotImplementedError: for a task without streaming metrics.
        """
        raise NotImplementedError(f"{type(self).__name__} has no streaming metrics")

    def hf_task_config(self):
        """What a Hugging Face config.json says of this task's model.

        finetune.create_trainer writes it to the run's folder
        (checkpoints.HF_SETTINGS_FILE), and `convert_checkpoint.py
        --output_format=hf` puts it in the converted config.json, so that
        transformers' Auto classes load the right head with the right labels.

        Returns:
          A dict of config.json keys, e.g. {"architectures":
          ["BertForSequenceClassification"], "id2label": {...}, "label2id":
          {...}}; empty by default (the converter then names an
          architecture from the heads alone).
        """
        return {}


def hf_labels(label_list):
    """config.json's id2label and label2id of labels in id order.

    Args:
      label_list: The label strings, in id order.

    Returns:
      {"id2label": {"0": ...}, "label2id": {...}}, as transformers writes them.
    """
    return {"id2label": {str(i): label for i, label in enumerate(label_list)},
            "label2id": {label: i for i, label in enumerate(label_list)}}

