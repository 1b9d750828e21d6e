"""Evaluation and prediction with a task's model, under a tf.distribute strategy.

An Inference runs a task's forward pass without dropout over a finite
dataset: evaluate() streams the task's metrics (task.create_metrics and
update_metrics, as the original's Estimator evaluated), predict() collects the
task's predictions in input order. Each replica's share of a batch is
compiled as training compiles its steps (jit_compile), so that evaluation
and prediction run at training's speed and under the TPU's rules where they
apply. A Trainer owns one (Trainer.inference) for the model it trains;
nothing here changes the weights.

Predictions compute under a dtype policy of their own, float32 by default
whatever training used (precision.inference_policy): under another policy
than the model's, predict() runs a copy of the model built under it, created
once and given the current weights on each call.
"""

import numpy as np
import tensorflow as tf

from bert_tf.runtime import precision, tpu_rules


def distribute(strategy, dataset_fn, what):
    """The distributed dataset of dataset_fn, its input checked under the TPU's rules.

    Args:
      strategy: The strategy to distribute over.
      dataset_fn: A function (tf.distribute.InputContext) -> tf.data.Dataset.
      what: What the input is for ("training", "evaluation", ...), for the
        message of a rule it breaks.

    Returns:
      The tf.distribute.DistributedDataset.

    Raises:
      tpu_rules.TpuRuleError: under the TPU's rules, for a shape or type a
        TPU cannot take.
    """
    dataset = strategy.distribute_datasets_from_function(dataset_fn)
    if tpu_rules.enforced(strategy):
        tpu_rules.check_input(dataset.element_spec, what)
    return dataset


class Inference:
    """Evaluates and predicts with one task's encoder and heads.

    Attributes:
      policy: The dtype policy predict() computes under unless told
        otherwise.
    """

    def __init__(self, task, encoder, heads, strategy, jit_compile, policy):
        """Compiles nothing yet: each step is traced on its first batch.

        Args:
          task: The tasks.Task (forward pass, metrics, predictions).
          encoder: The BertModel, built in strategy's scope.
          heads: Its heads.
          strategy: The strategy the model runs under.
          jit_compile: Whether each replica's step is XLA-compiled.
          policy: predict()'s default dtype policy, e.g. "float32".
        """
        self.task = task
        self.encoder = encoder
        self.heads = heads
        self.strategy = strategy
        self.policy = policy
        self._jit_compile = jit_compile
        self._metrics = None
        # Batches may vary in length (run_classifier's --dynamic_padding):
        # reduce_retracing traces one function for all lengths, not one each.
        self._eval_replica = tf.function(self._eval_replica_fn, jit_compile=jit_compile,
                                         reduce_retracing=True)
        self._eval_step = tf.function(self._eval_step_fn, reduce_retracing=True)
        self._predict_steps = {}  # {policy: (encoder, heads, step function)}

    def _eval_replica_fn(self, features):
        """Updates one replica's metrics with its share of a batch."""
        outputs = self.task.forward(self.encoder, self.heads, features, training=False)
        self.task.update_metrics(self._metrics, features, outputs)

    def _eval_step_fn(self, features):
        """Updates the metrics with one distributed batch."""
        # The compiled function is called from a plain one: handed to run()
        # itself, MirroredStrategy over CPU devices calls every replica's copy
        # from the first device, where XLA cannot reach the other replicas'
        # variables.
        self.strategy.run(self._call_eval_replica, args=(features,))

    def _call_eval_replica(self, features):
        """One replica's compiled eval step (see _eval_step_fn)."""
        self._eval_replica(features)

    def evaluate(self, dataset_fn, max_steps=None):
        """Streams the task's create_metrics() over a set.

        Args:
          dataset_fn: A function (tf.distribute.InputContext) -> a finite
            tf.data.Dataset of per-replica batches.
          max_steps: Stop after this many batches (the original's
            max_eval_steps); None reads the whole set.

        Returns:
          {metric name: float}.
        """
        if self._metrics is None:
            with self.strategy.scope():
                self._metrics = self.task.create_metrics()
        for metric in self._metrics.values():
            metric.reset_state()
        dataset = distribute(self.strategy, dataset_fn, "evaluation")
        for i, features in enumerate(dataset):
            if max_steps is not None and i >= max_steps:
                break
            self._eval_step(features)
        return {name: float(metric.result()) for name, metric in self._metrics.items()}

    def _predict_step_for(self, policy):
        """The predict step of the model computing under policy, its weights current."""
        if policy not in self._predict_steps:
            with self.strategy.scope():
                encoder, heads = precision.with_policy(self.task, self.encoder, self.heads,
                                                       policy)

            def replica_fn(features):
                """One replica's predictions on its share of a batch."""
                outputs = self.task.forward(encoder, heads, features, training=False)
                return self.task.predictions(features, outputs)

            # Compiled like the eval step, and called from a plain function
            # for the same reason (_eval_step_fn).
            replica_step = tf.function(replica_fn, jit_compile=self._jit_compile,
                                       reduce_retracing=True)

            def call_replica_step(features):
                """One replica's compiled step, called from plain Python."""
                return replica_step(features)

            def step_fn(features):
                """The predictions of one distributed batch, per replica."""
                return self.strategy.run(call_replica_step, args=(features,))

            step = tf.function(step_fn, reduce_retracing=True)
            self._predict_steps[policy] = (encoder, heads, step)
        encoder, heads, step = self._predict_steps[policy]
        if encoder is not self.encoder:
            precision.copy_weights(self.encoder, self.heads, encoder, heads)
        return step

    def predict(self, dataset_fn, policy=None):
        """Runs the task's predictions over a finite dataset, in input order.

        Args:
          dataset_fn: As for evaluate().
          policy: The Keras dtype policy to compute under, e.g. "float32";
            None: self.policy.

        Returns:
          {name: np.ndarray} of task.predictions() over all examples, padding
          examples included (finetune.predict drops them).
        """
        step = self._predict_step_for(policy or self.policy)
        dataset = distribute(self.strategy, dataset_fn, "prediction")
        collected = {}
        for features in dataset:
            for name, value in step(features).items():
                collected.setdefault(name, []).extend(
                    t.numpy() for t in self.strategy.experimental_local_results(value))
        return {name: np.concatenate(parts) for name, parts in collected.items()}
