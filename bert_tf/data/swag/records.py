"""SWAG examples -> multiple-choice records, and SwagData for finetune.run.

Each question becomes one record of record_specs.multiple_choice_features: one
[CLS] context [SEP] start + ending [SEP] sequence per ending, each packed and
truncated as run_classifier.py packs a pair (tokenization.pack_ids).
SwagData takes the run's SwagSettings (settings.py), scores the predictions
(accuracy and loss: scoring.py) and writes predictions.csv (outputs.py).
"""

import dataclasses
import os

import numpy as np

from bert_tf.data import protocol
from bert_tf.data.fingerprints import fingerprints
from bert_tf.data.swag.outputs import PREDICTIONS_FILE, write_predictions
from bert_tf.data.swag.reading import read_examples, second_segments
from bert_tf.data.swag.scoring import choice_scores
from bert_tf.text import tokenization

# SWAG's file names; the splits are finetune.run's.
SPLIT_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


@dataclasses.dataclass
class SwagReferences:
    """What SwagData.score() and write_outputs() take besides the predictions.

    Attributes:
      labels: The right endings' numbers, for score(); None for a test set.
      examples: The SwagExamples, in prediction order, for write_outputs().
    """

    labels: list | None
    examples: list


def convert_example(example, tokenizer, max_seq_length):
    """Tokenizes and packs one question's sequences.

    Args:
      example: A SwagExample.
      tokenizer: A tokenization.FullTokenizer.
      max_seq_length: Tokens per sequence.

    Returns:
      A record: input_ids, input_mask, segment_ids ([choices][seq] lists),
      label_ids (0 without a label) and is_real_example (1).
    """
    context = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.context))
    sequences = [
        tokenization.pack_ids(context, tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)),
                              max_seq_length=max_seq_length, cls_id=tokenizer.vocab["[CLS]"],
                              sep_id=tokenizer.vocab["[SEP]"])
        for text in second_segments(example)]
    record = {name: [sequence[name] for sequence in sequences]
              for name in ("input_ids", "input_mask", "segment_ids")}
    record["label_ids"] = example.label or 0
    record["is_real_example"] = 1
    return record


class SwagData(protocol.FinetuneData):
    """SWAG's splits (train.csv, val.csv, test.csv in one folder), for run_swag.py."""

    def __init__(self, settings, tokenizer, data_dir=None):
        """Describes the data; nothing is read before read().

        Args:
          settings: The run's SwagSettings, its task's too.
          tokenizer: The model's tokenization.FullTokenizer.
          data_dir: The folder of SWAG's CSV files.
        """
        self.settings = settings
        self.tokenizer = tokenizer
        self.data_dir = data_dir
        self.examples = {}

    @property
    def max_seq_length(self):
        """Tokens per sequence (the settings')."""
        return self.settings.max_seq_length

    @property
    def num_choices(self):
        """Endings per question (the settings')."""
        return self.settings.num_choices

    def path(self, split):
        """The CSV file of a split."""
        return os.path.join(self.data_dir, SPLIT_FILES[split])

    def read(self, splits):
        """Reads and checks the splits not read yet (see swag.read_examples for the errors)."""
        for split in splits:
            if split not in self.examples:
                self.examples[split] = read_examples(self.path(split), self.num_choices,
                                                     labelled=split != "test")

    def num_train_examples(self):
        """The training questions."""
        return len(self.examples[self.train_split])

    def describe(self, split):
        """"20006 questions"."""
        return f"{len(self.examples[split])} questions"

    def records(self, split):
        """The questions' records (convert_example's)."""
        return [convert_example(example, self.tokenizer, self.max_seq_length)
                for example in self.examples[split]]

    def references(self, split):
        """A SwagReferences; without labels for the test split."""
        examples = self.examples[split]
        labels = None if split == "test" else [example.label for example in examples]
        return SwagReferences(labels, examples)

    def task_settings(self):
        """The dataset and its number of endings."""
        return {"task_name": "swag", "num_choices": self.num_choices}

    def training_settings(self):
        """The training file and the records' length."""
        return {"train_data": fingerprints([self.path(self.train_split)]),
                "max_seq_length": self.max_seq_length}

    def eval_settings(self):
        """The dev file that evaluation during training scores, by its fingerprint."""
        return {"dev_data": fingerprints([self.path(self.eval_splits[0])])}

    def score(self, predictions, references):
        """Accuracy of the most probable choice, and the loss.

        Args:
          predictions: MultipleChoiceTask's {"predictions": [examples,
            choices]} over the real examples, in order.
          references: A SwagReferences with their right choices.

        Returns:
          {"eval_accuracy": float, "eval_loss": float}.
        """
        return choice_scores(predictions["predictions"], references.labels)

    @property
    def main_metric(self):
        """eval_accuracy: the share of questions whose right ending is chosen."""
        return "eval_accuracy"

    def write_outputs(self, predictions, references, output_dir):
        """predictions.csv: each question's chosen ending and every ending's probability.

        Args:
          predictions: MultipleChoiceTask's {"predictions": [examples,
            choices]}, in input order.
          references: A SwagReferences with the examples.
          output_dir: The folder to write it in.
        """
        write_predictions(os.path.join(output_dir, PREDICTIONS_FILE), references.examples,
                          np.asarray(predictions["predictions"]))
