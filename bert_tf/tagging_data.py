"""Tagged sentences -> token tagging TFRecords: word pieces, windows, labels.

A sentence is a list of words with one tag each (bert_tf.conll reads them).
Each word is split into word pieces; as in the BERT paper's NER experiment,
the first piece of a word carries the word's label and is where its tag is
predicted, and the later pieces are ignored by the loss and by prediction.

A sentence of more pieces than a window holds (max_seq_length - 2, for
[CLS] and [SEP]) is cut into overlapping windows, and each word is scored in
exactly one of them: the window where its first piece has the most context
on both sides, as the original run_squad.py chooses for each token. So every
word gets exactly one prediction, none is dropped or given twice. Each window
holds its sentence only: no text of neighbouring sentences is added.

The records follow features.tagging_features. Eval and predict sets are
padded with dummy records (is_real_example = 0) to a multiple of the batch
size, as classifier_data does, since a TPU needs every batch full.
"""

import dataclasses

from absl import logging

from bert_tf import features as feature_contracts
from bert_tf import io_utils, tfrecord


class TaggingDataError(ValueError):
    """A sentence that cannot be turned into features."""


@dataclasses.dataclass(frozen=True)
class Window:
    """One window of a sentence's word pieces.

    Attributes:
      start: The index of its first piece in the sentence's pieces.
      end: One past its last piece.
      scored: {piece index: word index} of the first pieces this window
        scores.
    """

    start: int
    end: int
    scored: dict


def word_pieces(tokenizer, words, max_pieces_per_word):
    """Splits each word into word pieces.

    Args:
      tokenizer: A tokenization.FullTokenizer.
      words: The sentence's words.
      max_pieces_per_word: A word of more pieces keeps only its first ones,
        so that it fits a window; its first piece still carries its label.

    Returns:
      (pieces, first_piece): the sentence's pieces, and the index in pieces
      of each word's first piece.
    """
    pieces, first_piece = [], []
    for word in words:
        # A word that tokenization deletes entirely (only control characters,
        # say) still needs a piece to carry its prediction.
        word_pieces_ = tokenizer.tokenize(word)[:max_pieces_per_word] or ["[UNK]"]
        first_piece.append(len(pieces))
        pieces.extend(word_pieces_)
    return pieces, first_piece


def windows(num_pieces, first_piece, window_size, stride):
    """Cuts a sentence's pieces into windows; assigns each word to one of them.

    Args:
      num_pieces: The sentence's pieces.
      first_piece: The index of each word's first piece.
      window_size: Pieces per window.
      stride: Pieces between the starts of consecutive windows (< window_size,
        so that they overlap).

    Returns:
      A list of Window, together covering every piece, each word scored in
      exactly one.
    """
    starts = [0]
    while starts[-1] + window_size < num_pieces:
        starts.append(starts[-1] + stride)
    spans = [(start, min(start + window_size, num_pieces)) for start in starts]
    scored = [{} for _ in spans]
    for word, piece in enumerate(first_piece):
        # The context of a piece in a window is the fewer of the pieces on its
        # left and on its right; the earliest window wins a tie.
        best = max((i for i, (start, end) in enumerate(spans) if start <= piece < end),
                   key=lambda i: (min(piece - spans[i][0], spans[i][1] - 1 - piece), -i))
        scored[best][piece] = word
    return [Window(start, end, s) for (start, end), s in zip(spans, scored, strict=True)]


def convert_sentence(sentence_index, words, label_ids, tokenizer, max_seq_length, stride):
    """Tokenizes one sentence into the records of its windows.

    Args:
      sentence_index: The sentence's index in its file.
      words: Its words.
      label_ids: The tag id of each word (zeros when unknown, for prediction).
      tokenizer: A tokenization.FullTokenizer.
      max_seq_length: Tokens per record, [CLS] and [SEP] included.
      stride: Pieces between the starts of a long sentence's windows.

    Returns:
      A list of feature dicts (features.tagging_features), one per window.
    """
    window_size = max_seq_length - 2
    pieces, first_piece = word_pieces(tokenizer, words, window_size)
    ids = tokenizer.convert_tokens_to_ids(pieces)
    cls_id, sep_id = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
    records = []
    for window in windows(len(pieces), first_piece, window_size, stride):
        length = window.end - window.start + 2
        padding = [0] * (max_seq_length - length)
        record = {
            "input_ids": [cls_id, *ids[window.start:window.end], sep_id, *padding],
            "input_mask": [1] * length + padding,
            "segment_ids": [0] * max_seq_length,
            "label_ids": [0] * max_seq_length,
            "label_weights": [0.0] * max_seq_length,
            "word_ids": [0] * max_seq_length,
            "sentence_index": sentence_index,
            "is_real_example": 1,
        }
        for piece, word in window.scored.items():
            # +1: [CLS] comes first.
            position = piece - window.start + 1
            record["label_ids"][position] = label_ids[word]
            record["label_weights"][position] = 1.0
            record["word_ids"][position] = word
        records.append(record)
    return records


def _padding_record(max_seq_length):
    """A dummy record that makes a batch full; it counts in nothing."""
    zeros = [0] * max_seq_length
    return {"input_ids": zeros, "input_mask": zeros, "segment_ids": zeros,
            "label_ids": zeros, "label_weights": [0.0] * max_seq_length, "word_ids": zeros,
            "sentence_index": 0, "is_real_example": 0}


def tag_ids(sentences, label_list, path):
    """The tag id of every word, checked against the label list.

    Args:
      sentences: conll.Sentence list; those without tags get zeros.
      label_list: The tags, in id order.
      path: The file the sentences come from, for the message.

    Returns:
      A list with one list of ids per sentence.

    Raises:
      TaggingDataError: for a tag the label list lacks, naming path:line.
    """
    label_map = {label: i for i, label in enumerate(label_list)}
    ids = []
    for sentence in sentences:
        if sentence.tags is None:
            ids.append([0] * len(sentence.words))
            continue
        for tag, line in zip(sentence.tags, sentence.lines, strict=True):
            if tag not in label_map:
                raise TaggingDataError(
                    f"{path}:{line}: tag {tag!r} is not one the model was trained with "
                    f"({', '.join(label_list)})")
        ids.append([label_map[tag] for tag in sentence.tags])
    return ids


def convert_sentences(sentences, label_ids, tokenizer, max_seq_length, stride):
    """Tokenizes sentences into the records of their windows.

    Args:
      sentences: conll.Sentence list.
      label_ids: tag_ids()'s result for them (zeros where tags are unknown).
      tokenizer: A tokenization.FullTokenizer.
      max_seq_length: Tokens per record.
      stride: Pieces between the starts of a long sentence's windows.

    Returns:
      The feature dicts of every window, in sentence order. Their number is
      the number of training examples: a long sentence counts as its windows.
    """
    records = []
    for index, (sentence, ids) in enumerate(zip(sentences, label_ids, strict=True)):
        records += convert_sentence(index, sentence.words, ids, tokenizer, max_seq_length,
                                    stride)
    return records


def write_tfrecord(path, records, max_seq_length, pad_to_multiple_of=None):
    """Writes convert_sentences()'s records to one TFRecord file, atomically.

    Args:
      path: Output file (local or gs://).
      records: convert_sentences()'s result.
      max_seq_length: Tokens per record.
      pad_to_multiple_of: Add padding records up to a multiple of this.

    Returns:
      The number of windows (real records).
    """
    num_windows = len(records)
    records = list(records)
    if pad_to_multiple_of:
        while len(records) % pad_to_multiple_of:
            records.append(_padding_record(max_seq_length))
    with io_utils.atomic_write(path, "wb") as f:
        tfrecord.write_examples(f, records, feature_contracts.tagging_features(max_seq_length))
    logging.info("Wrote %d windows (%d records with padding) to %s", num_windows,
                 len(records), path)
    return num_windows
