"""Dynamic masking: new masked-LM masks for every batch, drawn in tf.data.

Static masking, as in the original BERT, fixes each record's masks when
create_pretraining_data writes it, so every epoch shows the model the same
masked positions (dupe_factor copies with different masks only soften
this). Dynamic masking, as RoBERTa does it, draws the masks in the input
pipeline instead, so each pass over a record masks it anew.

It reads the same TFRecords, written by bert_tf's or by the original's
create_pretraining_data, so any existing pretraining file works with it:
each batch is first unmasked, putting the stored masked_lm_ids back at their
masked_lm_positions (the ids there are the original tokens whatever
replaced them), and then masked again. The result has the features, shapes
and dtypes of the static pipeline, so the model code does not change.

The new masks follow the statistics of bert_tf's create_pretraining_data:
round(masked_lm_prob x the tokens, [CLS] and [SEP] included), at least one
and at most max_predictions_per_seq, chosen uniformly among the tokens other
than [CLS], [SEP] and padding; 80% of them become [MASK], 10% a random real
word piece (never [PAD], [UNK], [unusedN] or another bracketed token) and
10% stay. Whole-word masking is not offered.

The selection and replacement are tensorflow_text's masked-LM ops
(`mask_language_model` with an `ItemSelector` and a `MaskValuesChooser`),
subclassed where their defaults differ from BERT's: see
`OriginalCountItemSelector` and `WordPieceMaskValuesChooser`.
"""

import dataclasses

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.text import tokenization


@dataclasses.dataclass(frozen=True)
class DynamicMaskingConfig:
    """What dynamic masking needs to know of the vocab, and how much to mask.

    Attributes:
      mask_id: the id of [MASK].
      unmaskable_ids: ids never chosen for prediction: [CLS] and [SEP].
      replacement_ids: the ids that a random replacement draws from.
      masked_lm_prob: the share of each sequence's tokens, [CLS] and [SEP]
        included, to predict.
    """

    mask_id: int
    unmaskable_ids: tuple[int, ...]
    replacement_ids: tuple[int, ...]
    masked_lm_prob: float = 0.15

    def __post_init__(self):
        """Checks the values.

        Raises:
          ValueError: if masked_lm_prob is not in (0, 1] or there is no
            replacement id.
        """
        if not 0 < self.masked_lm_prob <= 1:
            raise ValueError(f"masked_lm_prob must be in (0, 1], not {self.masked_lm_prob}")
        if not self.replacement_ids:
            raise ValueError("replacement_ids is empty")

    @classmethod
    def from_vocab_file(cls, vocab_file, masked_lm_prob=0.15):
        """Reads the special ids and the replacement word pieces from a vocab.

        The replacement ids are those of `tokenization.VocabTables`, which
        bert_tf's create_pretraining_data draws random replacements from too:
        every token except the bracketed special ones, so that dynamic and
        static masking agree.

        Args:
          vocab_file: the vocab.txt the data was tokenized with.
          masked_lm_prob: the share of the tokens to predict.

        Returns:
          A DynamicMaskingConfig.

        Raises:
          ValueError: if the vocab cannot be read, or lacks [CLS], [SEP] or
            [MASK].
        """
        vocab = tokenization.VocabTables.from_file(vocab_file)
        return cls(mask_id=vocab.mask_id, unmaskable_ids=(vocab.cls_id, vocab.sep_id),
                   replacement_ids=tuple(vocab.replacement_ids.tolist()),
                   masked_lm_prob=masked_lm_prob)


class OriginalCountItemSelector(tf_text.RandomItemSelector):
    """A RandomItemSelector that selects as many items as BERT does, from a seed.

    RandomItemSelector selects ceil(selection_rate x the selectable items);
    BERT selects round(selection_rate x all the items), unselectable ones
    included, and at least one. For rows [CLS] A [SEP] B [SEP] at rate 0.15
    the two differ by one at 21 of the lengths up to 512 (30, 70, 103, ...
    tokens). RandomItemSelector also shuffles each row with TensorFlow's
    global, stateful random generator, in a loop over the rows: no seed of
    its own fixes the result, and a parallel tf.data map would hand out the
    random numbers in a varying order. This selector instead ranks the items
    of all rows at once by keys from a stateless generator, so that a seed
    determines the selection.
    """

    def __init__(self, max_selections_per_batch, selection_rate, unselectable_ids, seed):
        """Creates the selector.

        Args:
          max_selections_per_batch: the most items to select in one row (the
            name is RandomItemSelector's).
          selection_rate: the share of each row's items to select.
          unselectable_ids: a list of the ids never to select.
          seed: a shape [2] integer tensor, the stateless random seed.
        """
        super().__init__(max_selections_per_batch, selection_rate, unselectable_ids)
        self._seed = seed

    def get_selection_mask(self, input_ids, axis=1):
        """Selects items of each row at random.

        Args:
          input_ids: a [batch, (items)] RaggedTensor of ids.
          axis: must be 1: items are single ids.

        Returns:
          A bool RaggedTensor shaped like input_ids, True at the selected items.

        Raises:
          ValueError: if axis is not 1.
        """
        if axis != 1:
            raise ValueError(f"only axis=1 is supported, not {axis}")
        selectable = self.get_selectable(input_ids, axis)
        lengths = input_ids.row_lengths()
        # float64 and round-half-to-even, as numpy computes the count in
        # create_pretraining_data.
        num_to_select = tf.clip_by_value(
            tf.round(tf.cast(lengths, tf.float64) * self.selection_rate),
            1, self.max_selections_per_batch)
        keys = tf.random.stateless_uniform(tf.shape(selectable.flat_values), self._seed)
        # Unselectable items rank after every selectable one, padding last.
        keys = selectable.with_flat_values(tf.where(selectable.flat_values, keys, 2.0))
        ranks = tf.argsort(tf.argsort(keys.to_tensor(default_value=3.0)))
        chosen = tf.RaggedTensor.from_tensor(
            tf.cast(ranks, tf.float64) < num_to_select[:, None], lengths=lengths)
        # On the flat values: `&` on RaggedTensors takes seconds to trace.
        return selectable.with_flat_values(selectable.flat_values & chosen.flat_values)


class WordPieceMaskValuesChooser(tf_text.MaskValuesChooser):
    """A MaskValuesChooser that draws random tokens from a list, from a seed.

    MaskValuesChooser replaces an item with a random id in [0, vocab_size),
    [PAD], [UNK] and the [unusedN] placeholders included, and draws from
    TensorFlow's global, stateful random generator. This one draws from the
    given replacement ids with a stateless generator.
    """

    def __init__(self, mask_token, replacement_ids, seed, mask_token_rate=0.8,
                 random_token_rate=0.1):
        """Creates the chooser.

        Args:
          mask_token: the id of [MASK].
          replacement_ids: the ids that a random replacement draws from.
          seed: a shape [2] integer tensor, the stateless random seed.
          mask_token_rate: the share of items that become mask_token.
          random_token_rate: the share of items that become a random id; the
            others keep theirs.
        """
        super().__init__(len(replacement_ids), mask_token, mask_token_rate, random_token_rate)
        self._replacement_ids = replacement_ids
        self._mask_token_rate = mask_token_rate
        self._seed = seed

    def get_mask_values(self, masked_lm_ids):
        """Chooses [MASK], a random id or the id itself for each selected item.

        Args:
          masked_lm_ids: a [batch, (selected)] RaggedTensor of the selected ids.

        Returns:
          A RaggedTensor shaped and typed like masked_lm_ids: the new values.
        """
        ids = masked_lm_ids.flat_values
        decision_seed, replacement_seed = tf.unstack(
            tf.random.experimental.stateless_split(self._seed, 2))
        decision = tf.random.stateless_uniform(tf.shape(ids), decision_seed)
        replacements = tf.gather(
            tf.constant(self._replacement_ids, ids.dtype),
            tf.random.stateless_uniform(tf.shape(ids), replacement_seed, minval=0,
                                        maxval=self.vocab_size, dtype=tf.int32))
        keep_from = self._mask_token_rate + self.random_token_rate
        values = tf.where(decision < self._mask_token_rate, tf.cast(self.mask_token, ids.dtype),
                          tf.where(decision < keep_from, replacements, ids))
        return masked_lm_ids.with_flat_values(values)


def unmask(features):
    """Puts the stored masked_lm_ids back into input_ids.

    A masked position holds [MASK], a random token or the original one;
    masked_lm_ids holds the original at every position whose weight is
    positive, so scattering them back restores the text as it was before
    masking.

    Args:
      features: a dict with input_ids [batch, seq_length] and
        masked_lm_positions, masked_lm_ids, masked_lm_weights
        [batch, max_predictions_per_seq].

    Returns:
      The unmasked input_ids, shaped and typed as features["input_ids"].
    """
    is_real = features["masked_lm_weights"] > 0
    indices = tf.stack([
        tf.where(is_real)[:, 0],
        tf.cast(tf.boolean_mask(features["masked_lm_positions"], is_real), tf.int64),
    ], axis=1)
    return tf.tensor_scatter_nd_update(
        features["input_ids"], indices, tf.boolean_mask(features["masked_lm_ids"], is_real))


def dynamic_masking(features, config, max_predictions_per_seq, seed):
    """Replaces a batch's stored masks with new ones.

    Args:
      features: a batch as `input_pipeline.pretraining_dataset` reads it: a
        dict of [batch, length] tensors, ids int32.
      config: a DynamicMaskingConfig.
      max_predictions_per_seq: the width of the masked_lm_* features.
      seed: a shape [2] integer tensor; the same seed and batch give the same
        masks.

    Returns:
      The features with new input_ids, masked_lm_positions (ascending,
      zero-padded), masked_lm_ids and masked_lm_weights (1.0 for a real
      prediction, 0.0 for padding), with the same shapes and dtypes; the
      other features are unchanged.
    """
    tokens = unmask(features)
    batch_size, seq_length = tokens.shape
    selection_seed, values_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    masked_ids, positions, labels = tf_text.mask_language_model(
        tf.RaggedTensor.from_tensor(tokens, lengths=tf.reduce_sum(features["input_mask"], 1)),
        OriginalCountItemSelector(max_predictions_per_seq, config.masked_lm_prob,
                                  list(config.unmaskable_ids), selection_seed),
        WordPieceMaskValuesChooser(config.mask_id, config.replacement_ids, values_seed))
    # mask_language_model lists each row's positions in ascending order.
    shape = [batch_size, max_predictions_per_seq]
    return dict(
        features,
        input_ids=masked_ids.to_tensor(shape=[batch_size, seq_length]),
        masked_lm_positions=tf.cast(positions.to_tensor(shape=shape), tf.int32),
        masked_lm_ids=labels.to_tensor(shape=shape),
        masked_lm_weights=tf.ones_like(labels, tf.float32).to_tensor(shape=shape))


def mask_batches(batches, config, max_predictions_per_seq, seed=None, pipeline_id=0):
    """Applies dynamic_masking to every batch of a dataset.

    Each batch gets its own seed from tf.data.Dataset.random(seed): a seed
    makes the masks reproducible, a repeated dataset still gets new masks on
    every pass, and batches can be masked in parallel.

    Args:
      batches: a tf.data.Dataset of pretraining batches with a static batch
        size.
      config: a DynamicMaskingConfig.
      max_predictions_per_seq: the width of the masked_lm_* features.
      seed: an optional int; None draws new masks on every run.
      pipeline_id: this input pipeline's index, so that pipelines that share
        a seed still mask differently.

    Returns:
      The dataset of masked batches, in the same order.
    """
    seeds = tf.data.Dataset.random(seed).map(
        lambda value: tf.stack([value, tf.constant(pipeline_id, tf.int64)]))
    return tf.data.Dataset.zip(batches, seeds).map(
        lambda features, batch_seed: dynamic_masking(
            features, config, max_predictions_per_seq, batch_seed),
        num_parallel_calls=tf.data.AUTOTUNE)
