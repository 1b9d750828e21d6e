"""BERT's optimizer: AdamW or LAMB, the warmup/decay schedule, and gradient accumulation.

The original repository trains every model (pretraining and fine-tuning) with
one recipe, which this module reproduces as Keras 3 objects:

  * AdamWeightDecay: Adam plus decoupled weight decay 0.01 (update =
    m_hat / (sqrt(v_hat) + eps) + decay * w; w -= lr * update), with beta_1
    0.9, beta_2 0.999, epsilon 1e-6. Adam's bias correction is on by default;
    the original omitted it (m and v used as they are), which
    bias_correction=False restores. LayerNorm scales and offsets and all
    biases get no weight decay (see uses_weight_decay()).
  * Lamb: the same update, rescaled per variable by the trust ratio
    ||w|| / ||update|| (You et al., 2019), for very large batches.
  * Gradient clipping to a global norm of 1.0, once per applied update.
  * LinearWarmupLinearDecay: the learning rate rises linearly from 0 over
    num_warmup_steps, then decays linearly to 0 at num_train_steps: from its
    peak at the end of warmup by default (Hugging Face's schedule), or
    measured from step 0 as in the original (decay_after_warmup=False).

create_optimizer() builds the whole recipe from the original's flags.

Distribution. The optimizers are keras.optimizers.Optimizer subclasses (so
tf.train.Checkpoint(optimizer=...) saves their iteration counter and m / v
slots), but they define apply() themselves. Keras's own apply() clips each
replica's gradients before they are summed across replicas, so the result
would depend on the number of replicas. Here apply():

  1. sums the gradients over replicas (ReplicaContext.all_reduce);
  2. clips the sum by its global norm;
  3. updates every variable (as Keras does, through merge_call and
     extended.update, so mirrored variables stay identical);
  4. increments optimizer.iterations, which drives the schedule.

Call apply() in a replica context: inside strategy.run(), or anywhere when
no strategy is in use. Because of step 1, each replica's loss must already
be divided by the global batch size (for example, the per-replica sum of
example losses / global batch size), so that the summed gradient is the
gradient of the global mean loss.

Gradient accumulation. GradientAccumulator sums the gradients of n
micro-batches in variables and hands their mean to the optimizer once every n
micro-batches, so that a global batch too large for memory can be processed
in n pieces. Only applied updates advance optimizer.iterations and hence the
learning-rate schedule, and clipping sees the accumulated gradient, once per
update, as in the original. One micro-batch per call of the training step:

    with strategy.scope():
        model = ...
        optimizer = create_optimizer(...)
        optimizer.build(model.trainable_variables)
        accumulator = GradientAccumulator(model.trainable_variables, steps=n)

    def replica_step(batch):  # this replica's share of one micro-batch
        with tf.GradientTape() as tape:
            per_example = per_example_loss(model, batch)
            # Divided by the micro-batch size over all replicas
            # (global_batch_size / n): the replicas' sum is its mean.
            loss = tf.reduce_sum(per_example) / global_micro_batch_size
        grads = tape.gradient(loss, model.trainable_variables)
        accumulator.add(grads)
        applied = accumulator.apply_if_ready(optimizer)  # every n-th call
        return loss, applied

    @tf.function  # jit_compile=True too, on one device
    def train_step(batch):
        return strategy.run(replica_step, args=(batch,))

With n == 1, calling optimizer.apply(grads, model.trainable_variables) in
place of the two accumulator calls saves the accumulator's copy of the
gradients.

apply_if_ready() decides with tf.cond, so the step compiles in a tf.function
and under XLA, with static shapes. A strategy that synchronises replicas
through merge_call (MirroredStrategy, except for XLA-compiled replica
functions on GPUs) cannot run a tf.cond in a replica context whose branch
contains the optimizer's all-reduce; apply_if_ready() then takes the decision
in the cross-replica context and re-enters the replicas to apply, as
keras.optimizers.LossScaleOptimizer does.

Mixed precision. Wrap the optimizer in keras.optimizers.LossScaleOptimizer,
scale the loss with optimizer.scale_loss(loss) before taking gradients, and
pass the wrapper to apply_if_ready() (or call its apply()). The accumulator
then holds scaled gradients; the wrapper unscales their mean, skips the update
when it is not finite, and otherwise calls the inner optimizer's apply().

Checkpoints. tf.train.Checkpoint(optimizer=optimizer, model=model) saves and
restores optimizer.iterations and every slot variable. A restore may come
before or after optimizer.build(): slot values restored before wait for
build() to create the slots. Under a strategy, build the optimizer in its
scope before the first training step, because slots cannot be created inside
a distributed tf.function (apply() and apply_if_ready() say so). The accumulator
needs no checkpoint: it is empty after every applied update.
"""

import math
import re

import numpy as np
import tensorflow as tf

keras = tf.keras


def uses_weight_decay(variable):
    """Whether `variable` gets weight decay (and, under LAMB, a trust ratio).

    The original exempts every variable whose name contains "LayerNorm",
    "layer_norm" or "bias". LayerNorm's scale and offset only set the scale
    and shift of normalized activations: pulling them toward 0 would fight
    the normalization instead of regularizing, and biases carry too few
    parameters to overfit with. In bert_tf, LayerNorm weights are Keras
    LayerNormalization's "gamma" and "beta", and biases are named "bias" or
    "output_bias"; the original's patterns are kept for variables that
    carry TF1-style names.

    Args:
      variable: A keras.Variable or tf.Variable.

    Returns:
      False for LayerNorm scales/offsets and biases, True otherwise.
    """
    # A keras.Variable has a path such as "LayerNorm/gamma"; a tf.Variable
    # has a name such as "bert/embeddings/LayerNorm/gamma:0".
    path = re.sub(r":\d+$", "", getattr(variable, "path", variable.name))
    leaf = path.split("/")[-1]
    if leaf in ("gamma", "beta") or leaf.endswith("bias"):
        return False
    return "LayerNorm" not in path and "layer_norm" not in path


def _one_minus_power(beta, step):
    """1 - beta^step, accurate in float32 for beta near 1.

    In float32, 0.999 is 0.99900001, so 1 - tf.pow(0.999, 1) would be 1.3e-5
    too small relative to 1e-3, and so would Adam's first bias-corrected
    updates. As -expm1(step * log(beta)), with log(beta) taken in Python's
    float64, the error is float32 rounding only, without float64 (which TPUs
    lack) in the graph.

    Args:
      beta: A Python float in (0, 1).
      step: A float scalar tensor, >= 1.

    Returns:
      A scalar tensor of step's dtype.
    """
    return -tf.math.expm1(step * math.log(beta))


class LinearWarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """BERT's learning rate: linear warmup, then linear decay to 0.

    For step < num_warmup_steps the rate is learning_rate * step /
    num_warmup_steps. Then it decays from the peak at the end of warmup,
    learning_rate * (num_train_steps - step) / (num_train_steps -
    num_warmup_steps), and is 0 from num_train_steps on: Hugging Face's
    linear schedule. A run whose warmup lasts to its end only warms up.

    decay_after_warmup=False gives the original's schedule, whose decay is
    measured from step 0: learning_rate * (1 - step / num_train_steps) after
    warmup. The rate then drops right after warmup to learning_rate * (1 -
    num_warmup_steps / num_train_steps), 0.9 of the peak with 10% warmup,
    and stays that factor below Hugging Face's until the end. That is a known
    flaw of the original (its warmup and decay overlap); in short fine-tuning
    runs it cost about 1 F1 on SQuAD with MiniLM: docs/benchmarks.md, "SQuAD
    fine-tuning quality".

    Args:
      learning_rate: The peak learning rate (the original's init_lr).
      num_train_steps: The number of applied updates after which the rate is 0.
      num_warmup_steps: The length of the warmup; 0 for none.
      decay_after_warmup: Start the decay at the end of warmup (the default)
        rather than at step 0 (the original's).
    """

    def __init__(self, learning_rate, num_train_steps, num_warmup_steps=0,
                 decay_after_warmup=True):
        if num_train_steps <= 0:
            raise ValueError(f"num_train_steps must be positive, got {num_train_steps}")
        if num_warmup_steps < 0:
            raise ValueError(f"num_warmup_steps must be >= 0, got {num_warmup_steps}")
        self.learning_rate = float(learning_rate)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.decay_after_warmup = bool(decay_after_warmup)

    def __call__(self, step):
        """The learning rate for the update numbered `step`.

        Args:
          step: The number of updates applied so far (optimizer.iterations),
            an int or a scalar tensor.

        Returns:
          A float32 scalar tensor.
        """
        step = tf.cast(step, tf.float32)
        # The decay's own start and length: from step 0 (the original's) or
        # from the end of warmup (Hugging Face's).
        start = float(self.num_warmup_steps) if self.decay_after_warmup else 0.0
        # A warmup that lasts the whole run leaves no decay (done stays 0).
        length = max(self.num_train_steps - start, 1.0)
        done = tf.clip_by_value(
            (tf.minimum(step, float(self.num_train_steps)) - start) / length, 0.0, 1.0)
        decayed = self.learning_rate * (1.0 - done)
        if not self.num_warmup_steps:
            return decayed
        warmup = self.learning_rate * step / self.num_warmup_steps
        return tf.where(step < self.num_warmup_steps, warmup, decayed)

    def get_config(self):
        """The constructor's arguments, for Keras serialization.

        Returns:
          A dict with learning_rate, num_train_steps, num_warmup_steps and
          decay_after_warmup.
        """
        return {
            "learning_rate": self.learning_rate,
            "num_train_steps": self.num_train_steps,
            "num_warmup_steps": self.num_warmup_steps,
            "decay_after_warmup": self.decay_after_warmup,
        }


class AdamWeightDecay(keras.optimizers.Optimizer):
    """Adam with decoupled weight decay, as the original trains BERT.

    For each variable w with gradient g (after summing over replicas and
    clipping), at update t = iterations + 1:

      m = beta_1 * m + (1 - beta_1) * g
      v = beta_2 * v + (1 - beta_2) * g^2
      update = m / (sqrt(v) + epsilon)            # bias_correction=False
      update = m' / (sqrt(v') + epsilon),          # bias_correction=True,
          m' = m / (1 - beta_1^t), v' = v / (1 - beta_2^t)
      update += weight_decay_rate * w             # unless excluded
      w -= learning_rate * update

    The decay is added to the update rather than to the loss: an L2 term in
    the loss would pass through m and v and be rescaled per coordinate, so
    weights with large gradients would be decayed less.

    Bias correction is on by default; the original omitted it. m and v
    start at 0, so early on they underestimate the gradient's moments, and
    without the correction m / sqrt(v) is larger than Adam's by
    (1 - beta_1^t) / sqrt(1 - beta_2^t): 3.2x at the first update, up to
    6.6x near update 12, 1.26x at update 1000, and negligible after a few
    thousand updates. Pretraining's long runs and warmup hide most of this,
    but fine-tuning lasts a few hundred to a few thousand updates. On CoLA
    (801 updates, three seeds each) the corrected update's mean MCC was
    higher (the figures: docs/benchmarks.md, "Fine-tuning quality: GLUE dev
    sets"): consistent with the harm Mosbach et al.
    ("On the Stability of Fine-tuning BERT", 2021) found on small GLUE
    tasks, though three seeds do not establish it. bias_correction=False
    restores the original's update.

    Args:
      learning_rate: A float or a LearningRateSchedule of optimizer.iterations.
      weight_decay_rate: Decoupled weight decay; 0 disables it.
      beta_1: Decay rate of the first moment m.
      beta_2: Decay rate of the second moment v.
      epsilon: Added to sqrt(v) for numerical stability.
      clip_norm: Clip the summed gradients to this global norm; None or 0
        disables clipping.
      bias_correction: Whether to divide m and v by (1 - beta^t); False is
        the original's update.
      name: The optimizer's name, which prefixes its variables' names.
    """

    def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, clip_norm=1.0, bias_correction=True,
                 name="adam_weight_decay"):
        super().__init__(learning_rate=learning_rate, name=name)
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.clip_norm = clip_norm
        self.bias_correction = bias_correction

    def build(self, variables):
        """Creates the m and v slots of each variable.

        Args:
          variables: The list of variables this optimizer will update.
        """
        if self.built:
            return
        super().build(variables)
        self._m, self._v = self.add_optimizer_variables(variables, ["m", "v"])
        # Decided once from the model's variables: inside a distributed
        # update the variable is a per-device copy with a different name.
        self._decayed = tuple(uses_weight_decay(v) for v in variables)

    def apply(self, grads, trainable_variables=None):
        """Sums gradients over replicas, clips them and applies one update.

        Call it in a replica context (see the module docstring); each
        replica passes its own gradients, already scaled so that their sum
        over replicas is the gradient of the global mean loss.

        Args:
          grads: One gradient per variable (a tensor, tf.IndexedSlices, or
            None to leave the variable untouched, as the original does).
          trainable_variables: The variables to update; may be omitted once
            the optimizer is built, to update all the variables it was built
            with.

        Raises:
          ValueError: if there are no variables or no gradients, or if a
            distributed tf.function would have to build the optimizer.
          RuntimeError: if called in a cross-replica context.
        """
        if trainable_variables is None:
            if not self.built:
                raise ValueError("pass trainable_variables to the first apply(), "
                                 "or build() the optimizer first")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if not self.built and tf.distribute.has_strategy() and not tf.executing_eagerly():
            # tf.distribute cannot initialize slots created inside a
            # tf.function; without this check the step fails obscurely.
            raise ValueError("build the optimizer (optimizer.build(variables), in the "
                             "strategy's scope) before the first training step")
        self.build(trainable_variables)
        replica = tf.distribute.get_replica_context()
        if replica is None:
            raise RuntimeError("apply() must be called in a replica context, "
                               "for example inside strategy.run()")
        # Dense gradients: the update touches every row anyway (m, v and the
        # decay change all of them), and XLA wants static shapes.
        pairs = [(tf.convert_to_tensor(g), v)
                 for g, v in zip(grads, trainable_variables, strict=True) if g is not None]
        if not pairs:
            raise ValueError("no gradients were provided for any variable")
        summed = replica.all_reduce(tf.distribute.ReduceOp.SUM, [g for g, _ in pairs])
        if self.clip_norm:
            summed, _ = tf.clip_by_global_norm(summed, self.clip_norm)
        # What Keras's optimizers do: merge_call, or a direct call where the
        # strategy runs without merge_call (XLA on GPUs).
        tf.__internal__.distribute.interim.maybe_merge_call(
            self._update_all, tf.distribute.get_strategy(),
            summed, [v for _, v in pairs], self.learning_rate)

    def _update_all(self, strategy, grads, variables, learning_rate):
        """Updates every variable on every device, then counts the update."""
        for grad, variable in zip(grads, variables, strict=True):
            if isinstance(variable, keras.Variable):
                variable = variable.value
            # Per-replica values travel in args, which hands each device its own.
            strategy.extended.update(
                variable, lambda var, g, lr: self.update_step(g, var, lr),
                args=(grad, learning_rate), group=False)
        self.iterations.assign_add(1)

    def update_step(self, gradient, variable, learning_rate):
        """Applies the update of the class docstring to one variable, in place.

        One fused kernel, TensorFlow's own Adam step (ResourceApplyAdam, the
        kernel of tf.compat.v1.train.AdamOptimizer), updates m, v and the
        variable in their own buffers. Written as a dozen element-wise
        operations, the update held several temporaries the size of the
        variable at once, for every variable the step updates in parallel:
        fine-tuning all-MiniLM-L6-v2 on a CPU, the process peaked 300-400 MB
        higher (docs/benchmarks.md, "The optimizer's update, in place").

        The kernel takes 1 - beta in float32, so m and v are exactly the
        moving averages of beta rounded to float32 (1 - float32(0.999) is
        9.99987e-4); the bias correction uses that same beta, so that a
        constant gradient g gives m' = g and v' = g^2 exactly. With
        bias_correction=False the update is the original's up to that
        rounding: v's first value is 1.3e-5 of itself smaller.

        Args:
          gradient: The variable's summed, clipped gradient.
          variable: The variable (on one device, under a strategy).
          learning_rate: This update's learning rate.
        """
        index = self._get_variable_index(variable)
        dtype = variable.dtype
        learning_rate = tf.cast(learning_rate, dtype)
        if self.weight_decay_rate and self._decayed[index]:
            # w - lr * (adam + decay * w) is (w - lr * decay * w) - lr * adam:
            # the decay comes first, as Adam's direction does not depend on w.
            variable.assign_sub(learning_rate * self.weight_decay_rate * variable)
        epsilon = tf.constant(self.epsilon, dtype)
        if self.bias_correction:
            # m' / (sqrt(v') + eps) with m' = m / c1, v' = v / c2 is
            # m * (sqrt(c2) / c1) / (sqrt(v) + eps * sqrt(c2)): the kernel's
            # learning rate and epsilon carry the correction, and its own
            # beta powers are 0.
            step = tf.cast(self.iterations + 1, dtype)
            beta_1, beta_2 = (float(np.array(beta, dtype.as_numpy_dtype))
                              for beta in (self.beta_1, self.beta_2))
            sqrt_c2 = tf.sqrt(_one_minus_power(beta_2, step))
            learning_rate *= sqrt_c2 / _one_minus_power(beta_1, step)
            epsilon *= sqrt_c2
        no_power = tf.zeros([], dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._m[index].value.handle,
            v=self._v[index].value.handle, beta1_power=no_power, beta2_power=no_power,
            lr=learning_rate, beta1=tf.constant(self.beta_1, dtype),
            beta2=tf.constant(self.beta_2, dtype), epsilon=epsilon,
            grad=tf.cast(gradient, dtype))

    def get_config(self):
        """The constructor's arguments, for Keras serialization.

        Returns:
          A dict that from_config() turns back into an equal optimizer (pass
          custom_objects for a LinearWarmupLinearDecay learning rate).
        """
        return {
            "name": self.name,
            "learning_rate": super().get_config()["learning_rate"],
            "weight_decay_rate": self.weight_decay_rate,
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "clip_norm": self.clip_norm,
            "bias_correction": self.bias_correction,
        }


class Lamb(AdamWeightDecay):
    """LAMB: AdamWeightDecay with a layer-wise trust ratio, for large batches.

    Each variable's update (Adam direction plus weight decay, as in
    AdamWeightDecay) is multiplied by ||w|| / ||update|| before the learning
    rate, so every layer moves by the same fraction of its norm whatever the
    scale of its gradients (You et al., "Large Batch Optimization for Deep
    Learning: Training BERT in 76 minutes", 2019). The ratio is 1 when
    either norm is 0, as for freshly zeroed weights. Variables exempt from
    weight decay (LayerNorm, biases) are also exempt from the ratio: their
    norms say little about a sensible step size, and biases start at 0.

    Args:
      learning_rate, weight_decay_rate, beta_1, beta_2, epsilon, clip_norm,
        bias_correction: As for AdamWeightDecay.
      name: The optimizer's name.
    """

    def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, clip_norm=1.0, bias_correction=True, name="lamb"):
        super().__init__(learning_rate, weight_decay_rate=weight_decay_rate, beta_1=beta_1,
                         beta_2=beta_2, epsilon=epsilon, clip_norm=clip_norm,
                         bias_correction=bias_correction, name=name)

    def update_step(self, gradient, variable, learning_rate):
        """Applies the update of the class docstring to one variable.

        The trust ratio needs the whole update vector, which a fused kernel
        never forms: the update is written out, as in the formula.

        Args:
          gradient: The variable's summed, clipped gradient.
          variable: The variable (on one device, under a strategy).
          learning_rate: This update's learning rate.
        """
        index = self._get_variable_index(variable)
        m, v = self._m[index], self._v[index]
        dtype = variable.dtype
        gradient = tf.cast(gradient, dtype)
        next_m = self.beta_1 * m + (1.0 - self.beta_1) * gradient
        next_v = self.beta_2 * v + (1.0 - self.beta_2) * tf.square(gradient)
        self.assign(m, next_m)
        self.assign(v, next_v)
        if self.bias_correction:
            step = tf.cast(self.iterations + 1, dtype)
            next_m = next_m / _one_minus_power(self.beta_1, step)
            next_v = next_v / _one_minus_power(self.beta_2, step)
        update = next_m / (tf.sqrt(next_v) + self.epsilon)
        if self._decayed[index]:
            if self.weight_decay_rate:
                update += self.weight_decay_rate * variable
            weight_norm = tf.norm(variable)
            update_norm = tf.norm(update)
            update *= tf.where((weight_norm > 0) & (update_norm > 0),
                               weight_norm / update_norm, 1.0)
        self.assign_sub(variable, tf.cast(learning_rate, dtype) * update)


# create_optimizer()'s optimizer_type values (the --optimizer flag's choices).
OPTIMIZERS = {"adamw": AdamWeightDecay, "lamb": Lamb}


def create_optimizer(init_lr, num_train_steps, num_warmup_steps, optimizer_type="adamw",
                     weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                     clip_norm=1.0, bias_correction=True, decay_after_warmup=True):
    """The original's optimizer: warmup/decay schedule, clipping, AdamW or LAMB.

    Args:
      init_lr: The peak learning rate.
      num_train_steps: Applied updates in the whole run (the rate reaches 0).
      num_warmup_steps: Updates of linear warmup from 0.
      optimizer_type: "adamw" (the original) or "lamb" (large batches).
      weight_decay_rate: Decoupled weight decay (not on LayerNorm or biases).
      beta_1, beta_2, epsilon: Adam's hyperparameters.
      clip_norm: Global-norm clipping of each applied gradient; None disables.
      bias_correction: Adam's bias correction; False is the original's
        update (see AdamWeightDecay for why it is on by default).
      decay_after_warmup: Decay the rate from the end of warmup (Hugging
        Face's schedule, the default) rather than from step 0 (the
        original's); see LinearWarmupLinearDecay.

    Returns:
      An AdamWeightDecay or Lamb, whose learning rate is a
      LinearWarmupLinearDecay (optimizer.learning_rate is the current rate;
      LinearWarmupLinearDecay(...)(step) gives the rate of any step).

    Raises:
      ValueError: for an unknown optimizer_type.
    """
    if optimizer_type not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer_type {optimizer_type!r}; "
                         f"known: {', '.join(OPTIMIZERS)}")
    schedule = LinearWarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps,
                                       decay_after_warmup)
    return OPTIMIZERS[optimizer_type](
        schedule, weight_decay_rate=weight_decay_rate, beta_1=beta_1, beta_2=beta_2,
        epsilon=epsilon, clip_norm=clip_norm, bias_correction=bias_correction)


class GradientAccumulator:
    """Sums micro-batch gradients and applies their mean every `steps` calls.

    The sums live in variables that are local to each replica
    (synchronization ON_READ), so adding costs no communication: replicas
    only exchange gradients inside the optimizer's apply(), once per
    update. Create the accumulator in the strategy's scope, next to the
    model. See the module docstring for the training-step pattern.

    Args:
      variables: The trainable variables, in the order of the gradients
        that add() will receive.
      steps: Micro-batches per applied update (>= 1). With 1 every call
        applies, at the cost of a copy of the gradients in memory.
    """

    def __init__(self, variables, steps):
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        self.steps = int(steps)
        self.variables = list(variables)
        self._sums = [
            tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False,
                        synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.SUM,
                        name="accumulated_" + v.name)
            for v in self.variables]
        # Every replica counts the same micro-batches; the cross-replica
        # decision in apply_if_ready() reads the first replica's count.
        self._count = tf.Variable(
            0, dtype=tf.int64, trainable=False,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            name="accumulated_count")

    @property
    def count(self):
        """Micro-batches added since the last reset, an int64 scalar tensor."""
        return self._count.read_value()

    def add(self, grads):
        """Adds one micro-batch's gradients. Call it in a replica context.

        Args:
          grads: One gradient per variable (tensor or tf.IndexedSlices); a
            None gradient counts as zero.
        """
        for total, grad in zip(self._sums, grads, strict=True):
            if grad is not None:
                total.assign_add(tf.convert_to_tensor(grad))
        self._count.assign_add(1)

    def mean(self):
        """The mean gradient of the micro-batches added since the last reset.

        Returns:
          A list of tensors, one per variable.
        """
        count = tf.cast(self._count, self._sums[0].dtype)
        return [total / count for total in self._sums]

    def reset(self):
        """Empties the accumulator."""
        for total in self._sums:
            total.assign(tf.zeros_like(total))
        self._count.assign(0)

    def apply_if_ready(self, optimizer):
        """Once `steps` micro-batches are in, applies their mean and resets.

        Call it in a replica context right after add(). Only the call that
        applies runs the optimizer (and its all-reduce); the others cost a
        comparison. The optimizer must already be built.

        Args:
          optimizer: An optimizer whose apply(grads, variables) behaves like
            AdamWeightDecay.apply(), e.g. one from create_optimizer(),
            possibly wrapped in keras.optimizers.LossScaleOptimizer.

        Returns:
          A bool scalar tensor: whether this call applied an update.

        Raises:
          ValueError: if the optimizer is not built yet.
        """
        if not optimizer.built:
            # Its slots would be created inside a tf.function (and a tf.cond
            # branch), which tf.distribute cannot initialize.
            raise ValueError("build the optimizer (optimizer.build(variables), in the "
                             "strategy's scope) before the first training step")
        ready = self._count >= self.steps

        def apply_and_reset():
            optimizer.apply(self.mean(), self.variables)
            self.reset()

        if tf.__internal__.distribute.strategy_supports_no_merge_call():
            tf.cond(ready, apply_and_reset, lambda: None)
        else:
            def decide_across_replicas(strategy):
                tf.cond(self._count.read_value() >= self.steps,
                        lambda: strategy.extended.call_for_each_replica(apply_and_reset),
                        lambda: None)

            tf.distribute.get_replica_context().merge_call(decide_across_replicas)
        return ready
