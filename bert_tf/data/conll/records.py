"""Tagged sentences -> token tagging records: word pieces, windows, labels.

A sentence is a list of words with one tag each (bert_tf.data.conll reads them).
Each word is split into word pieces; as in the BERT paper's NER experiment,
the first piece of a word carries the word's label and is where its tag is
predicted, and the later pieces are ignored by the loss and by prediction.

A sentence of more pieces than a window holds (max_seq_length - 2, for
[CLS] and [SEP]) is cut into overlapping windows, and each word is scored in
exactly one of them: the window where its first piece has the most context
on both sides, as the original run_squad.py chooses for each token. So every
word gets exactly one prediction, none is dropped or given twice. Each window
holds its sentence only: no text of neighbouring sentences is added.

The records follow record_specs.tagging_features; protocol.write_records
writes them. ConllSettings is what a run's task (tasks.TaggingTask) and its
data share. ConllData is run_ner.py's data for finetune.run: it scores a
split's predictions with conlleval's entity F1, and writes the split's file
back with a predicted tag column, each word's tag gathered from the window
that scores it (word_predictions).
"""

import dataclasses
import os

import numpy as np

from bert_tf import io_utils
from bert_tf.data import protocol
from bert_tf.data.conll.outputs import write_conll
from bert_tf.data.conll.reading import ConllDataError, label_list, read_conll
from bert_tf.data.conll.scoring import entity_scores
from bert_tf.data.fingerprints import fingerprints

# Where a training run keeps its tags, in id order, for later runs of the
# same output_dir (prediction without training reads them back).
LABEL_FILE = "label_list.txt"


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
      A list of feature dicts (record_specs.tagging_features), one per window.
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


def tag_ids(sentences, label_list, path):
    """The tag id of every word, checked against the label list.

    Args:
      sentences: conll.Sentence list; those without tags get zeros.
      label_list: The tags, in id order.
      path: The file the sentences come from, for the message.

    Returns:
      A list with one list of ids per sentence.

    Raises:
      ConllDataError: for a tag the label list lacks, naming path:line.
    """
    label_map = {label: i for i, label in enumerate(label_list)}
    ids = []
    for sentence in sentences:
        if sentence.tags is None:
            ids.append([0] * len(sentence.words))
            continue
        for tag, line in zip(sentence.tags, sentence.lines, strict=True):
            if tag not in label_map:
                raise ConllDataError(
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


def word_predictions(predictions, sentence_lengths):
    """Gathers each word's predicted tag from the window that scores it.

    Args:
      predictions: finetune.predict's dict of TaggingTask.predictions():
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


@dataclasses.dataclass
class ConllReferences:
    """What ConllData.score() and write_outputs() need besides the predictions.

    Attributes:
      sentences: The conll.Sentence objects whose windows were predicted, in file
        order; score() needs their tags.
      path: The file they were read from, which write_outputs() copies with
        a predicted tag column; None when nothing is written.
    """

    sentences: list
    path: str | None = None


class ConllData(protocol.FinetuneData):
    """The CoNLL files of one tagging run, for run_ner.py's finetune.run.

    The splits are "train" (train.txt), "valid" (valid.txt, or dev.txt) and
    "predict" (--predict_file, by default test.txt), whose tag column, when
    it has one, is not read: a tag the model was not trained with is no error
    there.
    """

    eval_splits = ("valid",)
    predict_splits = ("predict",)
    flagged_settings = ("labels",)

    def __init__(self, settings, tokenizer, data_dir=None, predict_file=None, labels=None,
                 output_dir=None):
        """Describes the data; nothing is read before read().

        Args:
          settings: The run's ConllSettings, its task's too.
          tokenizer: The model's tokenization.FullTokenizer.
          data_dir: The folder of train.txt, valid.txt (or dev.txt) and test.txt.
          predict_file: The file the predict split reads; None: test.txt.
          labels: The tags in id order; None: train.txt's when training,
            else output_dir's LABEL_FILE.
          output_dir: The run's folder, where LABEL_FILE is found.
        """
        self.settings = settings
        self.tokenizer = tokenizer
        self.data_dir = data_dir or ""
        self.predict_file = predict_file
        self.output_dir = output_dir
        self._labels = list(labels) if labels else None
        self.sentences = {}
        self.windows = {}
        # Windows per split, kept when the training windows are let go.
        self.window_counts = {}

    @property
    def max_seq_length(self):
        """Tokens per record (the settings')."""
        return self.settings.max_seq_length

    @property
    def stride(self):
        """Pieces between the starts of a long sentence's windows (the settings')."""
        return self.settings.window_stride

    def path(self, split):
        """The file of a split; valid.txt may be called dev.txt."""
        if split == "predict" and self.predict_file:
            return self.predict_file
        path = os.path.join(self.data_dir, "test.txt" if split == "predict" else f"{split}.txt")
        if split == "valid" and not os.path.exists(path):
            dev = os.path.join(self.data_dir, "dev.txt")
            path = dev if os.path.exists(dev) else path
        return path

    def labels(self):
        """The tags, in id order: the given ones, else train.txt's, else LABEL_FILE's.

        Raises:
          ValueError: none of these is at hand.
        """
        if self._labels is None:
            path = os.path.join(self.output_dir or "", LABEL_FILE)
            if "train" in self.sentences:
                self._labels = label_list(self.sentences["train"])
            elif os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    self._labels = [line.strip() for line in f if line.strip()]
            else:
                raise ValueError(f"no {path} from a training run: give --labels or --do_train")
        return self._labels

    def read(self, splits):
        """Reads the splits not read yet, then cuts their sentences into windows.

        Every file is read before any is converted, so that the tags of a
        training set are known when the dev set's are checked.

        Raises:
          ConllDataError: naming path:line, for a bad line, or a tag in a
            labelled split that the label list lacks.
        """
        new = [split for split in splits if split not in self.sentences]
        for split in new:
            self.sentences[split] = read_conll(self.path(split), has_tags=split != "predict")
        for split in new:
            self.windows[split] = self._convert(split)
            self.window_counts[split] = len(self.windows[split])

    def _convert(self, split):
        """The windows of a split read(), as convert_sentences() cuts them."""
        sentences = self.sentences[split]
        # A predict file's tags, when it has them, are not the model's
        # business: its labels are zeros.
        ids = ([[0] * len(sentence.words) for sentence in sentences] if split == "predict"
               else tag_ids(sentences, self.labels(), self.path(split)))
        return convert_sentences(sentences, ids, self.tokenizer, self.max_seq_length,
                                 self.stride)

    def num_train_examples(self):
        """The training windows: a long sentence counts as its windows."""
        return self.window_counts["train"]

    def describe(self, split):
        """"14041 sentences (14047 windows)"."""
        return f"{len(self.sentences[split])} sentences ({self.window_counts[split]} windows)"

    def source(self, split):
        """The split's file: a predict file that is the dev file is predicted once."""
        return os.path.abspath(self.path(split))

    def records(self, split):
        """The windows' records (convert_sentences()').

        The training windows are let go here: once written, training needs
        only their file, and they take memory the training steps can use
        (94 MB for CoNLL-2003's). Asked for again, they are cut again.
        """
        if split != "train":
            return self.windows[split]
        windows = self.windows.pop(split, None)
        return self._convert(split) if windows is None else windows

    def references(self, split):
        """A ConllReferences with the sentences and their file."""
        return ConllReferences(self.sentences[split], self.path(split))

    def task_settings(self):
        """The tags, in id order."""
        return {"labels": self.labels()}

    def training_settings(self):
        """train.txt and how its sentences are cut into windows."""
        return {"train_data": fingerprints([self.path("train")]),
                "max_seq_length": self.max_seq_length, "stride": self.stride}

    def eval_settings(self):
        """The dev file that evaluation during training scores, by its fingerprint."""
        return {"dev_data": fingerprints([self.path(self.eval_splits[0])])}

    def write_run_files(self, output_dir):
        """Writes LABEL_FILE, which a later run without --do_train reads back."""
        with io_utils.atomic_write(os.path.join(output_dir, LABEL_FILE), "w") as f:
            f.write("".join(f"{label}\n" for label in self.labels()))

    def score(self, predictions, references):
        """Entity-level precision, recall and F1 (overall and per type), token
        accuracy and loss, as conlleval counts them (see conll.entity_scores).

        Args:
          predictions: finetune.predict's dict of TaggingTask.predictions()
            over the real windows.
          references: A ConllReferences of tagged sentences.

        Returns:
          {"eval_precision", "eval_recall", "eval_f1", "eval_<TYPE>_f1", ...,
           "eval_token_accuracy", "eval_loss"}.
        """
        true_tags = [list(sentence.tags) for sentence in references.sentences]
        metrics = {f"eval_{name}": value for name, value in entity_scores(
            true_tags, self.word_tags(predictions, references)).items()}
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
          predictions: finetune.predict's dict over the real windows.
          references: A ConllReferences with the path of the sentences.
          output_dir: The folder to write it in.
        """
        stem = os.path.splitext(os.path.basename(references.path))[0]
        write_conll(os.path.join(output_dir, f"{stem}_predictions.txt"),
                    references.sentences, self.word_tags(predictions, references),
                    references.path)

    def word_tags(self, predictions, references):
        """Each word's predicted tag, from the window that scores it.

        Args:
          predictions: finetune.predict's dict over the real windows.
          references: A ConllReferences of the sentences they cover.

        Returns:
          One list of tag strings per sentence.
        """
        tag_ids, _ = word_predictions(predictions,
                                      [len(sentence.words) for sentence in references.sentences])
        labels = self.labels()
        return [[labels[i] for i in ids] for ids in tag_ids]
