"""Token tagging (named entities) on the sequence output, scored by entity F1.

The head is the classifier head (heads.ClassifierHead) applied to every
token instead of to the pooled [CLS] output: one dense layer from the hidden
size to the tags, with dropout before it. Its weights are therefore named as
the classifier's in every format (output_weights / output_bias, and Hugging
Face's classifier.weight / classifier.bias, which BertForTokenClassification
uses too), so a Hugging Face token-classification checkpoint loads as is.
"""

import os

import numpy as np
import tensorflow as tf

from bert_tf import conll
from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.serving import served_model
from bert_tf.tasks.base import Task, encoder_inputs, hf_labels

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


def word_predictions(predictions, sentence_lengths):
    """Gathers each word's predicted tag from the window that scores it.

    Args:
      predictions: finetune.predict()'s dict of TaggingTask.predictions():
        predictions, scores, label_weights, word_ids [windows, seq] and
        sentence_index [windows].
      sentence_lengths: The number of words of each sentence.

    Returns:
      (tag_ids, scores): one int array and one float array per sentence,
      with one value per word.

    Raises:
      ValueError: if a word got no prediction or two (records that do not
        belong to these sentences).
    """
    tag_ids = [np.full(n, -1, np.int64) for n in sentence_lengths]
    scores = [np.zeros(n, np.float32) for n in sentence_lengths]
    rows, positions = np.nonzero(predictions["label_weights"] > 0)
    sentences = predictions["sentence_index"][rows]
    words = predictions["word_ids"][rows, positions]
    for sentence, word, row, position in zip(sentences, words, rows, positions, strict=True):
        if tag_ids[sentence][word] != -1:
            raise ValueError(f"sentence {sentence}, word {word}: predicted twice")
        tag_ids[sentence][word] = predictions["predictions"][row, position]
        scores[sentence][word] = predictions["scores"][row, position]
    for sentence, ids in enumerate(tag_ids):
        if (ids == -1).any():
            raise ValueError(f"sentence {sentence}, word {int(np.argmax(ids == -1))}: "
                             "no prediction")
    return tag_ids, scores


class TaggingTask(Task):
    """Tags each word (its first word piece) with one of label_list.

    Features (record_specs.tagging_features): input_ids, input_mask, segment_ids,
    label_ids, label_weights, word_ids [batch, seq]; sentence_index and
    is_real_example [batch, 1].
    """

    serving_tool = "predict_entities.py"

    def __init__(self, label_list, max_seq_length=128, window_stride=None):
        """Describes the task.

        Args:
          label_list: The tags ("O", "B-PER", ...), in id order.
          max_seq_length: The records' sequence length.
          window_stride: Word pieces between the starts of a long sentence's
            windows (run_ner.py's --window_stride), which the export cuts
            alike; None: half a window.
        """
        self.label_list = list(label_list)
        self.max_seq_length = max_seq_length
        self.window_stride = window_stride or conll.default_window_stride(max_seq_length)

    def hf_task_config(self):
        """BertForTokenClassification, with the tags as its labels."""
        return {"architectures": ["BertForTokenClassification"], **hf_labels(self.label_list)}

    def feature_specs(self):
        """run_ner.py's records (conll.convert_sentences')."""
        return record_specs.tagging_features(self.max_seq_length)

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead} with one output per tag."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, len(self.label_list))}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, seq, num_tags]}."""
        # [batch, seq, hidden]
        sequence = encoder(encoder_inputs(features), training=training)["sequence_output"]
        return {"logits": heads[_CLASSIFIER](sequence, training=training)}

    def _token_losses(self, features, outputs):
        """Cross-entropy at each position, [batch, seq]; zero where not scored."""
        losses = keras.losses.sparse_categorical_crossentropy(
            features["label_ids"], outputs["logits"], from_logits=True)
        return losses * features["label_weights"]

    def losses(self, features, outputs):
        """Returns {"loss": mean over the scored words of the batch}.

        Each word counts once, whatever its number of pieces or windows.
        """
        return {"loss": tf.reduce_sum(self._token_losses(features, outputs))
                / tf.maximum(tf.reduce_sum(features["label_weights"]), 1.0)}

    def _full_length(self, tensor):
        """Pads [batch, seq, ...] back to max_seq_length, so that batches trimmed to
        different lengths (--dynamic_padding) concatenate."""
        padding = [[0, 0], [0, self.max_seq_length - tf.shape(tensor)[1]]]
        return tf.pad(tensor, padding + [[0, 0]] * (len(tensor.shape) - 2))

    def predictions(self, features, outputs):
        """Per window: the predicted tag id and its probability at each position,
        the positions' word ids and weights, the token losses, the sentence."""
        probabilities = tf.nn.softmax(outputs["logits"], axis=-1)
        return {
            "predictions": self._full_length(tf.argmax(probabilities, axis=-1)),
            "scores": self._full_length(tf.reduce_max(probabilities, axis=-1)),
            "label_weights": self._full_length(features["label_weights"]),
            "word_ids": self._full_length(features["word_ids"]),
            "token_losses": self._full_length(self._token_losses(features, outputs)),
            "sentence_index": features["sentence_index"][:, 0],
            "is_real_example": features["is_real_example"][:, 0],
        }

    def score(self, predictions, references):
        """Entity-level precision, recall and F1 (overall and per type), token
        accuracy and loss, as conlleval counts them (see conll.entity_scores).

        Args:
          predictions: finetune.predict()'s dict over the real windows.
          references: A conll.ConllReferences of tagged sentences.

        Returns:
          {"eval_precision", "eval_recall", "eval_f1", "eval_<TYPE>_f1", ...,
           "eval_token_accuracy", "eval_loss"}.
        """
        true_tags = [list(sentence.tags) for sentence in references.sentences]
        metrics = {f"eval_{name}": value for name, value in conll.entity_scores(
            true_tags, self._word_tags(predictions, references)).items()}
        metrics["eval_loss"] = float(np.sum(predictions["token_losses"])
                                     / max(np.sum(predictions["label_weights"]), 1.0))
        return metrics

    @property
    def main_metric(self):
        """eval_f1, conlleval's overall entity F1."""
        return "eval_f1"

    def write_outputs(self, predictions, references, output_dir):
        """<name>_predictions.txt: references.path with a predicted tag column.

        Args:
          predictions: finetune.predict()'s dict over the real windows.
          references: A conll.ConllReferences with the path of the sentences.
          output_dir: The folder to write it in.
        """
        stem = os.path.splitext(os.path.basename(references.path))[0]
        conll.write_conll(os.path.join(output_dir, f"{stem}_predictions.txt"),
                          references.sentences, self._word_tags(predictions, references),
                          references.path)

    def _word_tags(self, predictions, references):
        """Each word's predicted tag, from the window that scores it.

        Args:
          predictions: finetune.predict()'s dict over the real windows.
          references: A conll.ConllReferences of the sentences they cover.

        Returns:
          One list of tag strings per sentence.
        """
        tag_ids, _ = word_predictions(predictions,
                                      [len(sentence.words) for sentence in references.sentences])
        return [[self.label_list[i] for i in ids] for ids in tag_ids]

    def serving_module(self, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                       shapes="dynamic", jit_compile=False):
        """A TaggingServingModule whose "serving_default" takes raw sentences."""
        module = TaggingServingModule(encoder, heads[_CLASSIFIER], self.label_list, vocab_file,
                                     do_lower_case, max_seq_length, self.window_stride, shapes,
                                      jit_compile)
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
