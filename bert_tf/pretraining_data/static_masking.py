"""Static masking: the masks that create_pretraining_data writes into each record.

`mask_tokens` masks a block's packed rows at once, with numpy: it chooses
round(masked_lm_prob x the tokens), at least one and at most
max_predictions_per_seq, among A's and B's word pieces (or whole words under
whole-word masking), and turns 80% of them into [MASK], 10% into a random
real word piece and leaves 10% as they are. `bert_tf.records.dynamic_masking` draws
masks with the same statistics in the input pipeline instead.
"""

import numpy as np


def _choose_words(word_start, word_length, num_to_predict, rng):
    """Chooses words to mask, in random order, up to num_to_predict pieces.

    As in the original, words go in a random order, and a word that would
    take the count past num_to_predict is passed over for later, smaller
    ones.

    Args:
      word_start: bool [N, L], True at the first piece of each candidate word.
      word_length: int [N, L], each word's piece count at its first piece.
      num_to_predict: int [N], the pieces to mask per row.
      rng: a numpy Generator.

    Returns:
      bool [N, L], True at the first piece of each chosen word.
    """
    keys = np.where(word_start, rng.random(word_start.shape, dtype=np.float32), 2.0)
    order = np.argsort(keys, axis=1)
    lengths = np.take_along_axis(word_length, order, axis=1)
    num_words = word_start.sum(axis=1)
    if lengths.max(initial=0) <= 1:
        # All words are single pieces: the first num_to_predict words fit.
        taken = np.arange(lengths.shape[1]) < np.minimum(num_to_predict, num_words)[:, None]
    else:
        taken = np.zeros(lengths.shape, dtype=bool)
        count = np.zeros(len(lengths), dtype=np.int64)
        for rank in range(lengths.shape[1]):
            fits = (lengths[:, rank] > 0) & (count + lengths[:, rank] <= num_to_predict)
            taken[:, rank] = fits
            count += np.where(fits, lengths[:, rank], 0)
            if np.all((count >= num_to_predict) | (rank + 1 >= num_words)):
                break
    chosen = np.zeros(lengths.shape, dtype=bool)
    np.put_along_axis(chosen, order, taken, axis=1)
    return chosen


def _word_starts(input_ids, is_candidate, config, vocab):
    """Finds the words that masking chooses among.

    Args:
      input_ids: int32 [N, L] ids.
      is_candidate: bool [N, L], True at A's and B's tokens.
      config: a PretrainingDataConfig.
      vocab: a tokenization.VocabTables.

    Returns:
      (word_start, start_column): bool [N, L], True at the first piece of each
      word; int [N, L], for each candidate, the column of its word's first
      piece.
    """
    word_start = is_candidate
    if config.do_whole_word_mask:
        # A "##" piece joins the word before it, unless a segment starts with it.
        previous_is_candidate = np.zeros_like(is_candidate)
        previous_is_candidate[:, 1:] = is_candidate[:, :-1]
        joins = vocab.is_continuation[input_ids] & previous_is_candidate
        word_start = is_candidate & ~joins
    column = np.arange(input_ids.shape[1])
    start_column = np.maximum.accumulate(np.where(word_start, column, 0), axis=1)
    return word_start, start_column


def mask_tokens(input_ids, is_candidate, length, config, vocab, rng):
    """Masks a block's rows as the masked-LM task asks.

    Args:
      input_ids: int32 [N, L] ids, left unchanged.
      is_candidate: bool [N, L], True at A's and B's tokens.
      length: int [N], tokens per row, [CLS] and [SEP]s included.
      config: a PretrainingDataConfig.
      vocab: a tokenization.VocabTables.
      rng: a numpy Generator.

    Returns:
      (masked_ids, positions, labels, num_masked, decision_counts):
      int32 [N, L] ids after masking; int [N, P] masked positions, ascending
      and zero-padded; int [N, P] their original ids; int [N] masked
      positions per row; and how many became [MASK], a random piece, or kept
      their token.
    """
    rows, width = input_ids.shape
    word_start, start_column = _word_starts(input_ids, is_candidate, config, vocab)
    row_index = np.arange(rows)[:, None]
    word_length = np.bincount(
        (row_index * width + start_column)[is_candidate], minlength=rows * width
    ).reshape(rows, width)
    num_to_predict = np.minimum(
        config.max_predictions_per_seq,
        np.maximum(1, np.round(length * config.masked_lm_prob).astype(np.int64)))
    chosen_start = _choose_words(word_start, word_length, num_to_predict, rng)
    chosen = chosen_start[row_index, start_column] & is_candidate

    # One uniform draw decides [MASK] (< 0.8), keep (< 0.9) or random.
    decision = rng.random((rows, width), dtype=np.float32)
    if config.do_whole_word_mask and not config.wwm_decision_per_piece:
        decision = decision[row_index, start_column]
    to_mask = chosen & (decision < 0.8)
    to_random = chosen & (decision >= 0.9)
    random_ids = vocab.replacement_ids[rng.integers(0, len(vocab.replacement_ids), (rows, width))]
    masked_ids = np.where(to_mask, vocab.mask_id, np.where(to_random, random_ids, input_ids))

    num_masked = chosen.sum(axis=1)
    hit_rows, hit_columns = np.nonzero(chosen)
    slot = np.arange(len(hit_rows)) - np.repeat(np.cumsum(num_masked) - num_masked, num_masked)
    positions = np.zeros((rows, config.max_predictions_per_seq), dtype=np.int64)
    labels = np.zeros_like(positions)
    positions[hit_rows, slot] = hit_columns
    labels[hit_rows, slot] = input_ids[hit_rows, hit_columns]
    total = int(num_masked.sum())
    as_mask, as_random = int(to_mask.sum()), int(to_random.sum())
    decisions = (as_mask, as_random, total - as_mask - as_random)
    return masked_ids.astype(np.int32), positions, labels, num_masked, decisions
