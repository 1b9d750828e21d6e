"""The raw-text export of token tagging (TaggingTask, named entities).

serving_module() builds a TaggingServingModule from a trained encoder and
its per-token classifier head: it cuts a long sentence into the windows of
the run's conll.ConllSettings (sentence_windows, scoring_window, in the
graph) and joins the tagged words into entities (entities_from_word_tags).
predict_entities.py (TOOL) runs the export on a file.
"""

import tensorflow as tf

from bert_tf.model.heads import ClassifierHead
from bert_tf.serving import served_model

# The script that runs this export on a file; the export records it.
TOOL = "predict_entities.py"


def serving_module(task, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                   shapes="dynamic", jit_compile=False):
    """A TaggingServingModule whose "serving_default" takes raw sentences.

    Args:
      task: The tasks.TaggingTask trained: its tags, and its settings' window
        stride.
      encoder, heads, vocab_file, do_lower_case, max_seq_length, shapes,
        jit_compile: As classification.serving_module's.

    Returns:
      (module, {signature name: tf.function}) for export.save_model.
    """
    module = TaggingServingModule(encoder, heads[ClassifierHead.checkpoint_key],
                                  task.label_list, vocab_file, do_lower_case, max_seq_length,
                                  task.settings.window_stride, shapes, jit_compile)
    return module, {"serving_default": module.tag}


class TaggingServingModule(tf.Module):
    """Finds the entities in raw sentences, with their character offsets.

    Words are split from the raw text in the graph as basic tokenization
    splits them (on whitespace, with each punctuation mark a word of its
    own), each word is cut into word pieces by the same in-graph tokenizer
    as training's, and a word's tag is the prediction at its first piece.
    A sentence of any length is read whole: one of more pieces than a window
    (max_seq_length - 2) is cut into windows window_stride pieces apart, and
    each word is tagged in the window where its first piece has the most
    context, as run_ner.py's records do (conll.windows).

    Signature "serving_default": text [batch] string ->
      entity_type [batch, max_entities] string ("" past num_entities),
      entity_text [batch, max_entities] string,
      entity_start, entity_end [batch, max_entities] int64: character offsets
        in the input (end exclusive), in Unicode code points,
      entity_score [batch, max_entities] float32: the mean probability of
        the entity's word tags,
      num_entities [batch] int64.
    """

    def __init__(self, encoder, head, label_list, vocab_file, do_lower_case, max_seq_length,
                 window_stride, shapes="dynamic", jit_compile=False):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          head: Its heads.ClassifierHead with one output per tag.
          label_list: The tags, in id order.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          window_stride: Word pieces between the starts of a long sentence's
            windows, at most max_seq_length - 2.
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
        """
        super().__init__(name="bert_tagger")
        # Imported here, not at the top: text_ops loads tensorflow_text, about
        # 116 MB of resident memory that only an export needs, not training.
        from bert_tf.text import text_ops

        self.encoder = encoder
        self.head = head
        self.model = served_model.ServedModel(self._probabilities, shapes, jit_compile)
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(max_seq_length, self.tokenizer.vocab["[CLS]"],
                                          self.tokenizer.vocab["[SEP]"])
        # Pieces per window, between [CLS] and [SEP].
        self.window_size = max_seq_length - 2
        self.window_stride = window_stride
        types, begins = [], []
        for label in label_list:
            prefix, _, entity_type = label.partition("-")
            types.append(entity_type if prefix in ("B", "I") else "")
            begins.append(prefix == "B")
        # Per tag id: its entity type ("" for O) and whether it opens an entity.
        self.tag_types = tf.constant(types)
        self.tag_begins = tf.constant(begins)

    def _probabilities(self, features):
        """Packed inputs -> {"probabilities": [batch, seq, num_tags]}."""
        sequence = self.encoder(features, training=False)["sequence_output"]
        return {"probabilities": tf.nn.softmax(self.head(sequence, training=False), axis=-1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def tag(self, text):
        """Tags raw sentences; see the class docstring."""
        # [batch, (words)] words and their byte offsets in the text.
        words, byte_starts, byte_ends = self.tokenizer.split_words_with_offsets(text)
        # [words, (pieces)] of every word of the batch. A word that tokenization
        # deletes entirely keeps one [UNK] piece, as in training; a word of
        # more pieces than a window keeps a window's worth.
        pieces = self.tokenizer.tokenize(words.flat_values)
        pieces = tf.RaggedTensor.from_tensor(
            pieces.to_tensor(self.tokenizer.vocab["[UNK]"]),
            lengths=tf.clip_by_value(pieces.row_lengths(), 1, self.window_size))
        # [batch, (pieces)]: each sentence's pieces, back to back.
        sentence_pieces = tf.RaggedTensor.from_row_lengths(
            pieces.flat_values,
            tf.math.unsorted_segment_sum(pieces.row_lengths(), words.value_rowids(),
                                         num_segments=words.nrows()))
        window_sentence, window_start, window_end = sentence_windows(
            sentence_pieces.row_lengths(), self.window_size, self.window_stride)
        # [windows, (pieces)]: each window's pieces.
        offset = tf.gather(sentence_pieces.row_starts(), window_sentence)
        window_pieces = tf.RaggedTensor.from_row_lengths(
            tf.gather(sentence_pieces.flat_values,
                      tf.ragged.range(offset + window_start, offset + window_end).flat_values),
            window_end - window_start)
        # [windows, seq, num_tags]
        probabilities = self.model(self.packer(window_pieces))["probabilities"]

        # Each word's first piece, counted in its sentence.
        ends_in_batch = tf.cumsum(pieces.row_lengths())
        first_in_batch = ends_in_batch - pieces.row_lengths()
        sentence_start = tf.gather(sentence_pieces.row_starts(), words.value_rowids())
        piece = first_in_batch - sentence_start
        # The sentence's windows start at the first window of its row.
        first_window = tf.gather(
            tf.math.unsorted_segment_min(tf.range(tf.size(window_sentence, out_type=tf.int64)),
                                         window_sentence, num_segments=words.nrows()),
            words.value_rowids())
        window = first_window + scoring_window(
            piece, tf.gather(sentence_pieces.row_lengths(), words.value_rowids()),
            self.window_size, self.window_stride)
        # +1: [CLS] comes first.
        position = piece - tf.gather(window_start, window) + 1
        word_probabilities = tf.gather_nd(probabilities, tf.stack([window, position], axis=1))
        tag_ids = tf.argmax(word_probabilities, axis=-1, output_type=tf.int32)
        scores = tf.reduce_max(word_probabilities, axis=-1)
        return entities_from_word_tags(text, words, byte_starts.flat_values,
                                       byte_ends.flat_values, tf.gather(self.tag_types, tag_ids),
                                       tf.gather(self.tag_begins, tag_ids), scores)


def _num_windows(num_pieces, window_size, stride):
    """How many windows conll.windows cuts each sentence into: the first, then one
    per stride until a window reaches the sentence's end."""
    return 1 + (tf.maximum(num_pieces - window_size, 0) + stride - 1) // stride


def sentence_windows(num_pieces, window_size, stride):
    """The windows of each sentence, as conll.windows cuts them, for a batch at once.

    Windows start stride pieces apart until one reaches the sentence's end;
    an empty sentence gets one empty window.

    Args:
      num_pieces: int64 [batch], each sentence's pieces.
      window_size: Pieces per window.
      stride: Pieces between consecutive windows' starts.

    Returns:
      (sentence, start, end): int64 [windows] each: the sentence (row of the
      batch) a window belongs to and its pieces [start, end); a sentence's
      windows are consecutive.
    """
    num_windows = _num_windows(num_pieces, window_size, stride)
    sentence = tf.repeat(tf.range(tf.size(num_pieces, out_type=tf.int64)), num_windows)
    start = tf.ragged.range(num_windows).flat_values * stride
    end = tf.minimum(start + window_size, tf.gather(num_pieces, sentence))
    return sentence, start, end


def scoring_window(piece, num_pieces, window_size, stride):
    """Which of its sentence's windows scores each piece: conll.windows' rule.

    The context of a piece in a window is the fewer of the window's pieces on
    its left and on its right; the window of most context wins, the earliest
    on a tie. At most ceil(window_size / stride) windows hold a piece: the
    ones whose start is at most the piece and within a window of it.

    Args:
      piece: int64 [words], the piece's index in its sentence.
      num_pieces: int64 [words], its sentence's pieces.
      window_size: Pieces per window.
      stride: Pieces between consecutive windows' starts.

    Returns:
      int64 [words]: the window's index among its sentence's windows.
    """
    num_windows = _num_windows(num_pieces, window_size, stride)
    candidates = -(-window_size // stride)
    # [words, candidates]: the windows that may hold the piece, earliest first.
    last = tf.minimum(piece // stride, num_windows - 1)
    window = last[:, tf.newaxis] - tf.range(candidates - 1, -1, -1, dtype=tf.int64)
    start = window * stride
    end = tf.minimum(start + window_size, num_pieces[:, tf.newaxis])
    place = piece[:, tf.newaxis]
    holds = (window >= 0) & (start <= place) & (place < end)
    context = tf.where(holds, tf.minimum(place - start, end - 1 - place), -1)
    # argmax takes the first of equal values: the earliest window.
    best = tf.argmax(context, axis=1, output_type=tf.int64)
    return tf.gather(window, best, batch_dims=1)


def entities_from_word_tags(text, words, byte_starts, byte_ends, types, begins, scores):
    """Joins tagged words into entities, as conlleval reads the tags.

    A word opens an entity when it has a type and a B- tag, or its type
    differs from the previous word's (an I- after O or after another type
    opens one too); a word of the same type that follows, with an I- tag,
    continues it.

    Args:
      text: [batch] the sentences.
      words: [batch, (words)] their words (for the row ids).
      byte_starts, byte_ends: [words] each word's byte offsets in its text.
      types: [words] each word's entity type, "" for O.
      begins: [words] whether its tag is a B- tag.
      scores: [words] the probability of its tag.

    Returns:
      The output dict of TaggingServingModule.tag.
    """
    rows = words.value_rowids()
    first_of_row = tf.concat([[True], rows[1:] != rows[:-1]], axis=0)
    previous = tf.where(first_of_row, "", tf.concat([[""], types[:-1]], axis=0))
    tagged = types != ""
    opens = tagged & (begins | (types != previous))
    # [words] the entity each tagged word belongs to: entities are numbered
    # in order, and a continuing word carries on the last one opened.
    entity = tf.cumsum(tf.cast(opens, tf.int64)) - 1
    members = tf.where(tagged)[:, 0]
    member_entity = tf.gather(entity, members)
    starts = tf.math.segment_min(tf.gather(byte_starts, members), member_entity)
    ends = tf.math.segment_max(tf.gather(byte_ends, members), member_entity)
    entity_scores = tf.math.segment_mean(tf.gather(scores, members), member_entity)
    openers = tf.where(opens)[:, 0]
    entity_rows = tf.gather(rows, openers)
    entity_texts = tf.gather(text, entity_rows)
    # Byte offsets to code point offsets: the length of the text before them.
    zeros = tf.zeros_like(starts)
    char_starts = tf.strings.length(tf.strings.substr(entity_texts, zeros, starts),
                                    unit="UTF8_CHAR")
    char_ends = tf.strings.length(tf.strings.substr(entity_texts, zeros, ends),
                                  unit="UTF8_CHAR")

    def per_sentence(values, default):
        """[entities] -> [batch, max_entities], padded with default."""
        ragged = tf.RaggedTensor.from_value_rowids(values, entity_rows,
                                                   nrows=tf.shape(text, out_type=tf.int64)[0])
        return ragged.to_tensor(default)

    return {
        "entity_type": per_sentence(tf.gather(types, openers), ""),
        "entity_text": per_sentence(tf.strings.substr(entity_texts, starts, ends - starts), ""),
        "entity_start": per_sentence(tf.cast(char_starts, tf.int64), -1),
        "entity_end": per_sentence(tf.cast(char_ends, tf.int64), -1),
        "entity_score": per_sentence(entity_scores, 0.0),
        "num_entities": tf.math.unsorted_segment_sum(
            tf.ones_like(entity_rows), entity_rows, num_segments=tf.shape(text)[0]),
    }
