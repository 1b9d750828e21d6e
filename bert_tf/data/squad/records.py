"""SQuAD windows -> records, and SquadData: a question-answering run's SQuAD files.

SquadData reads the train and predict files, cuts their questions into
windows (windows.py) and gives their records; from the predicted windows'
logits it picks each question's answer by the rule the export follows too
(answer_rule.py, through outputs.py), scores the answers with the official
metrics (scoring.py) and writes the original's predictions.json,
nbest_predictions.json and null_odds.json.
SquadReferences is what it keeps of a split to score or write its
predictions.

A window's record (window_record), as the original run_squad.py's
FeatureWriter wrote it, follows record_specs.question_answering_features:
unique_ids, input_ids, input_mask, segment_ids, in training start_positions
and end_positions, and is_real_example; protocol.write_records writes them,
padding a prediction set to full batches with records whose results are
dropped before the answers are picked.
"""

import dataclasses
import random

import numpy as np
from absl import logging

from bert_tf.data import protocol
from bert_tf.data.fingerprints import fingerprints
from bert_tf.data.squad.outputs import write_predictions
from bert_tf.data.squad.reading import SquadDataError, read_squad_examples
from bert_tf.data.squad.scoring import answerable_questions, evaluate, evaluate_v1, gold_answers
from bert_tf.data.squad.windows import convert_examples_to_features

# The original shuffled the training questions once, with this seed, before
# cutting them into windows (so the shuffle buffer need not be large).
TRAIN_SHUFFLE_SEED = 12345


def window_record(window, max_seq_length, is_training):
    """The record of one window.

    Args:
      window: A windows.InputFeatures.
      max_seq_length: Tokens per record.
      is_training: Whether to add start_positions and end_positions.

    Returns:
      A feature dict of record_specs.question_answering_features' layout.

    Raises:
      ValueError: for a window of another length, or a training window
        without answer positions.
    """
    if len(window.input_ids) != max_seq_length:
        raise ValueError(f"window {window.unique_id} has {len(window.input_ids)} tokens, "
                         f"not max_seq_length={max_seq_length}")
    record = {
        "unique_ids": window.unique_id,
        "input_ids": window.input_ids,
        "input_mask": window.input_mask,
        "segment_ids": window.segment_ids,
        "is_real_example": 1,
    }
    if is_training:
        if window.start_position is None or window.end_position is None:
            raise ValueError(f"window {window.unique_id} has no answer positions: convert "
                             "the examples with is_training=True")
        record["start_positions"] = window.start_position
        record["end_positions"] = window.end_position
    return record


@dataclasses.dataclass
class SquadReferences:
    """What SquadData.score() and write_outputs() need besides the logits.

    Attributes:
      examples: The questions, read_squad_examples()' SquadExamples.
      windows: Their windows, convert_examples_to_features()' InputFeatures,
        whose unique_ids the predictions carry.
      dataset: The SQuAD json (a path or the parsed dict) with the gold
        answers, for score(); None when there are none (a test set).
    """

    examples: list
    windows: list
    dataset: object = None


class SquadData(protocol.FinetuneData):
    """The SQuAD files of one question-answering run, for run_squad.py's finetune.run.

    The splits are "train" (train_file) and "eval" (predict_file), which
    --do_eval scores and --do_predict writes the answers of: the original's
    output files are written for either, and the model runs on it once.
    """

    eval_splits = ("eval",)
    predict_splits = ("eval",)
    flagged_settings = ("version_2_with_negative",)
    # The official evaluation scores predictions.json: it is written whenever
    # the dev file is scored.
    eval_writes_outputs = True

    def __init__(self, settings, tokenizer, train_file=None, predict_file=None,
                 epoch_unit="windows"):
        """Describes the data; nothing is read before read().

        Args:
          settings: The run's settings.SquadSettings, its task's too: how
            contexts are cut into windows and answers chosen.
          tokenizer: The model's tokenization.FullTokenizer; its casing is
            the one answers are mapped back onto the context with.
          train_file: The SQuAD json to train on.
          predict_file: The SQuAD json to predict and score.
          epoch_unit: What an epoch counts: "windows" (Hugging Face's) or
            "questions" (the original's).
        """
        self.settings = settings
        self.tokenizer = tokenizer
        self.files = {"train": train_file, "eval": predict_file}
        self.epoch_unit = epoch_unit
        self.examples = {}
        self.windows = {}
        self.sizes = {}

    def read(self, splits):
        """Reads the splits not read yet and cuts their questions into windows.

        What was skipped or cut is logged as warnings.

        Raises:
          squad.SquadDataError: for a bad file, naming it and the question.
          ValueError: a predict file without a question (a training file
            without one makes no training step, which finetune.train_steps
            reports).
        """
        for split in splits:
            if split in self.sizes:
                continue
            is_training = split == "train"
            path = self.files[split]
            examples, stats = read_squad_examples(path, is_training,
                                                  self.settings.version_2_with_negative)
            if stats.get("skipped_answer_mismatch"):
                logging.warning("%s: skipped %d questions whose answer text is not found where "
                                "its answer_start points (the original skipped them too)", path,
                                stats["skipped_answer_mismatch"])
            if stats.get("skipped_unanswerable"):
                logging.warning("%s: skipped %d questions without an answer: only a "
                                "--version_2_with_negative model can answer them", path,
                                stats["skipped_unanswerable"])
            if is_training:
                random.Random(TRAIN_SHUFFLE_SEED).shuffle(examples)
            windows = self._windows(examples, is_training)
            if not (windows or is_training):
                raise ValueError(f"{path}: no question to predict")
            self.examples[split], self.windows[split] = examples, windows
            self.sizes[split] = (len(examples), len(windows))

    def _windows(self, examples, is_training):
        """The questions' windows; cut questions are logged."""
        windows, stats = convert_examples_to_features(
            examples, self.tokenizer, self.settings.max_seq_length, self.settings.doc_stride,
            self.settings.max_query_length, is_training,
            doc_stride_means=self.settings.doc_stride_means)
        if stats.get("truncated_questions"):
            logging.warning("%d questions are longer than --max_query_length=%d pieces and "
                            "were cut", stats["truncated_questions"],
                            self.settings.max_query_length)
        if stats.get("answer_out_of_window"):
            # Expected with long contexts: as in the original, such a window
            # learns "no answer here" ([CLS]).
            logging.info("%d of %d training windows miss their question's answer and point "
                         "at [CLS]", stats["answer_out_of_window"], len(windows))
        return windows

    def num_train_examples(self):
        """Questions, as the original counted an epoch, or windows (epoch_unit)."""
        questions, windows = self.sizes["train"]
        return windows if self.epoch_unit == "windows" else questions

    def describe(self, split):
        """"4371 questions in 5047 windows"."""
        questions, windows = self.sizes[split]
        return f"{questions} questions in {windows} windows"

    def records(self, split):
        """The windows' records (window_record()'s): with answer positions for training.

        The training questions and windows are let go here: training needs
        only their records, and SQuAD's take memory that training can use.
        """
        windows = self.windows[split]
        is_training = split == self.train_split
        if is_training:
            del self.windows[split], self.examples[split]
        return [window_record(window, self.max_seq_length, is_training) for window in windows]

    @property
    def max_seq_length(self):
        """Tokens per window (the settings')."""
        return self.settings.max_seq_length

    def task_settings(self):
        """Whether the model may answer that there is no answer (SQuAD 2.0)."""
        return {"version_2_with_negative": self.settings.version_2_with_negative}

    def training_settings(self):
        """The training file and how its contexts are cut into windows."""
        return {"train_data": fingerprints([self.files["train"]]),
                "max_seq_length": self.settings.max_seq_length,
                "doc_stride": self.settings.doc_stride,
                "doc_stride_means": self.settings.doc_stride_means,
                "max_query_length": self.settings.max_query_length}

    def eval_settings(self):
        """The predict file that evaluation during training scores, by its fingerprint."""
        return {"dev_data": fingerprints([self.files[self.eval_splits[0]]])}

    def check_scorable(self, split):
        """Checks that the predict file has the gold answers --do_eval scores against.

        Raises:
          squad.SquadDataError: naming the file, e.g. a test file without answers.
        """
        path = self.files[split]
        try:
            gold_answers(path)
        except SquadDataError as e:
            raise SquadDataError(f"--do_eval: {path} cannot be scored: {e}; drop --do_eval "
                                 "to only predict") from None

    def references(self, split):
        """A SquadReferences with the questions, their windows and the gold file."""
        return SquadReferences(self.examples[split], self.windows[split], self.files[split])

    def _answers(self, predictions, references, output_dir=None, verbose_logging=False):
        """Each question's answer from its windows' logits (answer_rule.py's rule).

        Args:
          predictions: finetune.predict's dict of QuestionAnsweringTask's
            predictions over the real windows.
          references: A SquadReferences (its dataset is not needed).
          output_dir: Where to write the original's files; None: nowhere.
          verbose_logging: Log the answers not mapped back onto the context.

        Returns:
          write_predictions' (predictions, nbest, null_odds).
        """
        # Rows of the arrays, not lists: postprocessing converts one window's
        # logits at a time, which keeps memory flat on the whole dev set.
        results = {int(unique_id): (start, end)
                   for unique_id, start, end in zip(
                       np.asarray(predictions["unique_ids"]).reshape(-1),
                       predictions["start_logits"], predictions["end_logits"], strict=True)}
        settings = self.settings
        return write_predictions(
            references.examples, references.windows, results, settings.n_best_size,
            settings.max_answer_length, self.tokenizer.basic_tokenizer.do_lower_case,
            version_2_with_negative=settings.version_2_with_negative,
            null_score_diff_threshold=settings.null_score_diff_threshold,
            verbose_logging=verbose_logging, output_dir=output_dir)

    def score(self, predictions, references):
        """The official SQuAD metrics of the predicted answers.

        Args:
          predictions: finetune.predict's dict over the real windows.
          references: A SquadReferences with the dataset's gold answers.

        Returns:
          SQuAD 1.1: {"exact_match", "f1"} (evaluate-v1.1.py's), over the
          answerable questions (a 1.1 model reads no others; see
          read_squad_examples). SQuAD 2.0: the v2.0 script's dict (exact,
          f1, total, HasAns_*, NoAns_*, best_*), with null_odds.json's
          scores as the no-answer probabilities.

        Raises:
          ValueError: when references has no dataset.
        """
        if references.dataset is None:
            raise ValueError("scoring needs the SQuAD json with the gold answers")
        # No verbose logging here: write_outputs() logs the same answers.
        answers, _, null_odds = self._answers(predictions, references)
        if self.settings.version_2_with_negative:
            return evaluate(references.dataset, answers, na_probs=null_odds)
        return evaluate_v1(answerable_questions(references.dataset), answers)

    @property
    def main_metric(self):
        """f1, the official scripts' headline number (SQuAD 1.1 and 2.0)."""
        return "f1"

    def write_outputs(self, predictions, references, output_dir):
        """predictions.json, nbest_predictions.json and, for SQuAD 2.0, null_odds.json.

        Args:
          predictions: finetune.predict's dict over the real windows.
          references: A SquadReferences (its dataset is not needed).
          output_dir: The folder to write them in.
        """
        self._answers(predictions, references, output_dir, self.settings.verbose_logging)
