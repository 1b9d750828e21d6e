"""The Task protocol: everything that differs between one fine-tuning family and another.

A task is what training_loop.Trainer, checkpoints.py and export.py are given so
that they need to know nothing task-specific. It declares:

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
  score()           the task's official metrics, from every example's
                    predictions and the references of its data module,
                    without side effects (finetune.evaluate);
  main_metric       the key of score()'s dict that says which model is best
                    (higher is better), for evaluation during training;
  write_outputs()   the output files of a prediction (optional: none by
                    default; finetune.write_outputs);
  create_metrics()  streaming Keras metrics, and update_metrics() to feed
                    them a batch, for Trainer.evaluate (optional: only
                    pretraining streams; fine-tuning scores through
                    predictions() and score());
  serving_module()  a tf.Module with raw-text signatures, for export.py
                    (optional: pretraining has none), and serving_tool,
                    the script that runs it on a file.

Fine-tuning records that pad the last eval or predict batch to full size (a
TPU needs every batch full) carry is_real_example; a task that reads such
records returns it with its predictions, and finetune.predict drops the
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
      serving_tool: The script that runs this task's raw-text export on a file
        (e.g. "predict_text.py"), which the export records so that a tool given
        another task's export can name the right one; None without one.
    """

    serving_tool = None

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
        """What to collect per example for score() and for output files.

        Args:
          features: The batch.
          outputs: forward()'s result.

        Returns:
          {name: tensor [batch, ...]}; with "is_real_example" [batch] when the
          records pad their last batch.
        """

    @abc.abstractmethod
    def score(self, predictions, references):
        """The task's official metrics; it writes nothing (see write_outputs).

        Args:
          predictions: {name: np.ndarray} over every real example, in input
            order (finetune.predict's result).
          references: What the task's data module gives to score against
            (labels, examples, ...); see the subclass.

        Returns:
          {metric name: float}.
        """

    @property
    def main_metric(self):
        """The key of score()'s dict by which one model is better than another.

        Higher is better. Evaluation during training keeps the model that
        scores highest on it (best_checkpoint.py).

        Raises:
          NotImplementedError: for a task that has none.
        """
        raise NotImplementedError(f"{type(self).__name__} has no main metric")

    def write_outputs(self, predictions, references, output_dir):
        """Writes the output files of a prediction; by default none.

        Args:
          predictions: As for score().
          references: As for score(), for the set that was predicted (its
            labels may be absent: a test set).
          output_dir: The folder to write them in.
        """
        del predictions, references, output_dir  # No output files by default.

    def create_metrics(self):
        """Streaming eval metrics, for Trainer.evaluate (create them in the strategy's scope).

        Fine-tuning tasks have none: they are scored on every prediction by
        score() (finetune.evaluate), which streaming cannot do for entity F1
        or SQuAD's answers.

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

    def serving_module(self, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                       shapes="dynamic", jit_compile=False):
        """A tf.Module that serves the trained model on raw text.

        Args:
          encoder: The trained BertModel.
          heads: Its heads.
          vocab_file: The vocab it was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).

        Returns:
          (module, {signature name: tf.function}) for export.save_model. The
          module runs its encoder through a served_model.ServedModel, its `model`.

        Raises:
          NotImplementedError: for a task without a raw-text export.
        """
        raise NotImplementedError(f"{type(self).__name__} has no raw-text export")


def hf_labels(label_list):
    """config.json's id2label and label2id of labels in id order.

    Args:
      label_list: The label strings, in id order.

    Returns:
      {"id2label": {"0": ...}, "label2id": {...}}, as transformers writes them.
    """
    return {"id2label": {str(i): label for i, label in enumerate(label_list)},
            "label2id": {label: i for i, label in enumerate(label_list)}}

