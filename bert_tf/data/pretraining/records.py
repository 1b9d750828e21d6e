"""PretrainingData: a pretraining run's record files, as a protocol.TrainingData.

Fine-tuning data is made into records by the run; pretraining's records are
made beforehand, by create_pretraining_data.py (this one's or the
original's), so this data reads no examples: it checks the files of each
split against the run's lengths and the model's vocab before any model is
built, and gives each split's tf.data pipeline.
"""

import functools

from bert_tf.data.fingerprints import fingerprints
from bert_tf.data.protocol import TrainingData
from bert_tf.records import input_pipeline


class PretrainingRecordsError(ValueError):
    """Records that pretraining cannot read; the message names the flag and the file."""


@functools.cache
def masking_config(vocab_file, masked_lm_prob):
    """The DynamicMaskingConfig of a vocab, read once for the checks and every input pipeline.

    Args:
      vocab_file: The data's vocab.txt.
      masked_lm_prob: The share of the tokens to mask.

    Returns:
      A dynamic_masking.DynamicMaskingConfig.

    Raises:
      ValueError: for a vocab or share that masking cannot use.
    """
    # Imported here: tensorflow_text (about 116 MB resident) loads only for
    # dynamic masking, not with every script that defines the flags.
    from bert_tf.records.dynamic_masking import DynamicMaskingConfig

    return DynamicMaskingConfig.from_vocab_file(vocab_file, masked_lm_prob)


class PretrainingData(TrainingData):
    """The records of a pretraining run: input_file to train on, eval_input_file to score.

    Attributes:
      train_split: "train", read from input_file.
      eval_splits: ("eval",), read from eval_input_file, else input_file (the
        original's).
      max_seq_length: Tokens per record, as the files were written.
      settings: The configs.PretrainingData (files, max_predictions_per_seq).
      masking: The configs.DynamicMasking of training.
      vocab_size: The model's vocab_size: every id of the records must be
        below it; None: not checked.
    """

    eval_splits = ("eval",)

    def __init__(self, settings, masking, max_seq_length, vocab_size=None):
        """The data of a run's settings.

        Args:
          settings: A configs.PretrainingData.
          masking: A configs.DynamicMasking.
          max_seq_length: The run's --max_seq_length.
          vocab_size: The model's vocab_size, or None.
        """
        self.settings = settings
        self.masking = masking
        self.max_seq_length = max_seq_length
        self.vocab_size = vocab_size
        self._read = set()

    def flag(self, split):
        """The flag that names a split's files, for messages.

        Args:
          split: A split of this data.

        Returns:
          The flag's name, without dashes.
        """
        if split == self.train_split or not self.settings.eval_input_file:
            return "input_file"
        return "eval_input_file"

    def patterns(self, split):
        """A split's files: comma-separated patterns, globs allowed.

        Args:
          split: A split of this data.

        Returns:
          The patterns, as the flag gives them.
        """
        return getattr(self.settings, self.flag(split))

    def read(self, splits):
        """Checks every record file of the splits, before any model is built.

        A missing, truncated or corrupt file, lengths other than the data's,
        or ids past the model's vocab would otherwise fail only in the
        middle of training (or, for ids on a GPU, read zeros silently).

        Args:
          splits: The splits this run reads.

        Raises:
          PretrainingRecordsError: naming the flag, the file and what does
            not fit.
        """
        max_predictions = self.settings.max_predictions_per_seq
        for split in splits:
            if split in self._read:
                continue
            flag, patterns = self.flag(split), self.patterns(split)
            try:
                input_pipeline.check_pretraining_records(
                    patterns, self.max_seq_length, max_predictions)
            except ValueError as e:
                raise PretrainingRecordsError(f"--{flag}: {e}") from None
            if self.vocab_size is not None:
                largest, path = input_pipeline.largest_token_id(
                    patterns, self.max_seq_length, max_predictions)
                if largest >= self.vocab_size:
                    raise PretrainingRecordsError(
                        f"--{flag}: {path} holds token id {largest}, but the model's "
                        f"vocab_size is {self.vocab_size}: give records made with the "
                        "model's vocab, or a --bert_config_file whose vocab_size holds "
                        "theirs")
            self._read.add(split)

    def describe(self, split):
        """The split's files, for the log.

        Args:
          split: A split of this data.

        Returns:
          A string: how many files, from which flag.
        """
        files = input_pipeline.expand_patterns(self.patterns(split))
        return f"{len(files)} file(s) of --{self.flag(split)}"

    def training_settings(self):
        """What the training records are: the files' fingerprints and how they are read.

        Returns:
          A JSON-serializable dict.
        """
        settings = {"input_files": fingerprints(input_pipeline.expand_patterns(
                        self.settings.input_file)),
                    "max_seq_length": self.max_seq_length,
                    "max_predictions_per_seq": self.settings.max_predictions_per_seq,
                    "dynamic_masking": self.masking.dynamic_masking}
        if self.masking.dynamic_masking:
            settings["masked_lm_prob"] = self.masking.masked_lm_prob
        return settings

    def dataset_fn(self, split, batch_size):
        """A split's input pipeline, for distribute_datasets_from_function.

        Training repeats and shuffles, and with dynamic_masking masks anew;
        evaluation reads the stored masks once.

        Args:
          split: A split of this data.
          batch_size: The global batch (a micro-batch when accumulating).

        Returns:
          A function (tf.distribute.InputContext) -> tf.data.Dataset.
        """
        is_training = split == self.train_split
        patterns = self.patterns(split)
        masking = None
        if self.masking.dynamic_masking and is_training:
            masking = masking_config(self.masking.vocab_file, self.masking.masked_lm_prob)

        def fn(input_context):
            return input_pipeline.pretraining_dataset(
                patterns, input_context.get_per_replica_batch_size(batch_size),
                self.max_seq_length, self.settings.max_predictions_per_seq, is_training,
                input_context=input_context, dynamic_masking=masking)
        return fn
