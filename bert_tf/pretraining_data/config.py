"""What every module of the data builder shares: its settings, counts and error.

`PretrainingDataConfig` holds a run's settings (`TextInputConfig` the part
that says where the text comes from and how it is laid out, which
learn_vocab.py shares), `PretrainingDataSummary` its counts and
`PretrainingDataError` the errors it reports to the user; the keys
of the random streams live here too, so that the modules that draw from
random_seed cannot share a stream by mistake.
"""

import dataclasses

from bert_tf.settings import required_setting, setting

# Keys that separate the random streams derived from random_seed: pairs and
# masks (workers.py), the shuffle of each window's records (builder.py) and
# the interleaving of the windows in the output files (output.py).
PAIRS_STREAM = 1
SHUFFLE_STREAM = 2
MERGE_STREAM = 3


# The layouts of input text files (TextInputConfig.input_format).
SENTENCES = "sentences"
PARAGRAPHS = "paragraphs"
LINES = "lines"
FILES = "files"
INPUT_FORMATS = (SENTENCES, PARAGRAPHS, LINES, FILES)


class PretrainingDataError(ValueError):
    """Bad input, vocab or output location, with a message for the user."""


@dataclasses.dataclass(frozen=True)
class TextInputConfig:
    """Where the text comes from and how its documents are laid out.

    A part of the data builder's and of the vocab learner's configs: both
    read the text alike (sources.py). Each setting is their scripts' flag of
    the same name; the files themselves are the scripts' --input_file.

    Attributes:
      input_format: the layout of the input files: "sentences" (the
        original's: one sentence a line, a blank line between documents),
        "paragraphs" (plain text, a blank line between documents, each line
        split into sentences), "lines" (a document a line, split into
        sentences) or "files" (a document a file, split into sentences).
      tfds_name: a TensorFlow Datasets name to read instead of files, such
        as "imdb_reviews/plain_text"; each example is a document of plain
        text, split into sentences. None reads --input_file.
      tfds_split: the split of tfds_name to read, in TFDS's split syntax
        ("train", "train[:10%]", "train+test").
      tfds_text_feature: the feature of tfds_name that holds a document's text.
      tfds_data_dir: the folder TensorFlow Datasets keeps its data sets in;
        None: TFDS's own default (~/tensorflow_datasets, or $TFDS_DATA_DIR).
      max_documents: read at most this many documents; None reads all.
    """

    input_format: str = setting(
        SENTENCES, "Layout of the --input_file files. sentences: one sentence a line, a blank "
        "line between documents (the original's format). paragraphs: plain text, a blank line "
        "between documents, each line split into sentences. lines: one document a line, split "
        "into sentences. files: one document a file, split into sentences. The splitting is a "
        "simple rule (after . ! or ? when a capital letter follows); give sentences for better.",
        choices=INPUT_FORMATS)
    tfds_name: str | None = setting(
        None, "Read the text from TensorFlow Datasets instead of --input_file, e.g. "
        "imdb_reviews/plain_text: each example's --tfds_text_feature is a document of plain "
        "text, split into sentences. The data set is downloaded and prepared if it is not in "
        "--tfds_data_dir yet.")
    tfds_split: str = setting(
        "train", "The split of --tfds_name to read, in TFDS's syntax: train, train[:10%], "
        "train+test.")
    tfds_text_feature: str = setting(
        "text", "The feature of --tfds_name that holds a document's text.")
    tfds_data_dir: str | None = setting(
        None, "Where TensorFlow Datasets keeps its data sets. Default: TFDS's own "
        "(~/tensorflow_datasets, or $TFDS_DATA_DIR).")
    max_documents: int | None = setting(
        None, "Read at most this many documents (of the files or of --tfds_name). Default: "
        "all of them.", lower_bound=1)

    def validate(self):
        """Checks that the settings are in range.

        Raises:
          ValueError: naming the first setting that is out of range.
        """
        if self.input_format not in INPUT_FORMATS:
            raise ValueError(f"input_format must be one of {', '.join(INPUT_FORMATS)}, "
                             f"got {self.input_format!r}")
        if self.max_documents is not None and self.max_documents < 1:
            raise ValueError(f"max_documents must be at least 1, got {self.max_documents}")


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """Settings of the data generation, with the original's defaults.

    Each setting is create_pretraining_data.py's flag of the same name, with
    its default and help (config_flags generates the flags).

    Attributes:
      vocab_file: the WordPiece vocab, one token per line.
      do_lower_case: whether to lower-case the text (uncased models).
      max_seq_length: tokens per record, [CLS] and [SEP]s included.
      max_predictions_per_seq: at most this many masked positions per record.
      random_seed: seed of every random choice.
      dupe_factor: passes over the input, each with different pairs and masks.
      masked_lm_prob: share of the tokens to mask.
      short_seq_prob: probability that a document's pairs target a random
        length shorter than max_seq_length.
      do_whole_word_mask: mask whole words rather than single word pieces.
      wwm_decision_per_piece: under whole-word masking, choose
        [MASK]/random/keep for each piece, as the original did, rather than
        once per word.
      window_mb: megabytes of text per window; see the package docstring.
      errors: how to treat bytes that are not UTF-8: "strict" (an error that
        names the file and line), "replace" (U+FFFD) or "ignore" (dropped,
        as the original did).
      text_input: where the text comes from and its layout.
    """

    vocab_file: str = required_setting("The WordPiece vocab the BERT model was trained with.")
    do_lower_case: bool = setting(
        True, "Lower-case the text and strip accents: True for uncased models, False for cased "
        "ones.")
    max_seq_length: int = setting(
        128, "Tokens per record, [CLS] and [SEP]s included; at least 5.")
    max_predictions_per_seq: int = setting(20, "Most masked positions a record holds.")
    random_seed: int = setting(
        12345, "Seed of every random choice; the same seed gives the same files.")
    dupe_factor: int = setting(
        10, "Passes over the input, each with different pairs and masks.")
    masked_lm_prob: float = setting(0.15, "Share of the tokens to mask.")
    short_seq_prob: float = setting(
        0.1, "Probability that a document's pairs target a random length shorter than "
        "max_seq_length, to resemble short fine-tuning inputs.")
    do_whole_word_mask: bool = setting(
        False, "Mask whole words (a piece and the ## pieces after it) rather than single word "
        "pieces.")
    wwm_decision_per_piece: bool = setting(
        False, "With --do_whole_word_mask, choose [MASK]/random/keep for each piece as the "
        "original did, instead of once for the whole word.")
    window_mb: float = setting(
        4.0, "Megabytes of text processed at a time. Memory grows with it, not with the "
        "corpus; random-next spans come from other documents of the same window. Records are "
        "shuffled across the whole input whatever its value, but changing it changes the "
        "output.")
    errors: str = setting(
        "strict", "What to do with bytes that are not UTF-8: strict stops with the file and "
        "line, replace reads U+FFFD, ignore drops them (as the original did).",
        choices=("strict", "replace", "ignore"))
    text_input: TextInputConfig = TextInputConfig()

    def validate(self):
        """Checks that the settings can work together.

        Raises:
          ValueError: naming the first setting that is out of range.
        """
        if self.max_seq_length < 5:
            raise ValueError(
                f"max_seq_length={self.max_seq_length} cannot hold a pair: "
                "[CLS] A [SEP] B [SEP] needs at least 5 tokens")
        if self.max_predictions_per_seq < 1:
            raise ValueError("max_predictions_per_seq must be at least 1, got "
                             f"{self.max_predictions_per_seq}")
        if self.dupe_factor < 1:
            raise ValueError(f"dupe_factor must be at least 1, got {self.dupe_factor}")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            raise ValueError(f"short_seq_prob must be in [0, 1], got {self.short_seq_prob}")
        # 0 is refused rather than honoured in part: every record holds at
        # least one masked position (the original's max(1, ...)), so no
        # setting writes records without masks.
        if not 0.0 < self.masked_lm_prob <= 1.0:
            raise ValueError(
                f"masked_lm_prob must be in (0, 1], got {self.masked_lm_prob}: every record "
                "masks at least one token (the original's max(1, ...)), so 0 would still mask "
                "one a record; give the share of the tokens to mask, e.g. 0.15")
        if self.window_mb <= 0:
            raise ValueError(f"window_mb must be positive, got {self.window_mb}")
        if self.errors not in ("strict", "replace", "ignore"):
            raise ValueError(
                f"errors must be strict, replace or ignore, got {self.errors!r}")
        self.text_input.validate()


# A random-next share from which a run is warned about (half is the design).
RANDOM_NEXT_WARNING_SHARE = 0.9


@dataclasses.dataclass
class PretrainingDataSummary:
    """Counts of a run, and the statistics that follow from them.

    Attributes:
      documents: documents with at least one word piece.
      documents_too_short: documents that could not form any pair: those
        without a word piece, and one-sentence documents alone in a window.
      input_tokens: word pieces in the documents.
      instances: records written.
      tokens: tokens in the records, [CLS] and [SEP] included.
      masked_tokens: masked positions.
      masked_to_mask: masked positions that became [MASK].
      masked_to_random: masked positions that became a random word piece.
      masked_kept: masked positions that kept their token.
      random_next: records whose B is a random span.
      truncated: records whose pair had to be truncated.
      skipped_random_next: random-next pairs dropped because their window held
        no other document.
      elapsed_s: seconds the run took.
    """

    documents: int = 0
    documents_too_short: int = 0
    input_tokens: int = 0
    instances: int = 0
    tokens: int = 0
    masked_tokens: int = 0
    masked_to_mask: int = 0
    masked_to_random: int = 0
    masked_kept: int = 0
    random_next: int = 0
    truncated: int = 0
    skipped_random_next: int = 0
    elapsed_s: float = 0.0

    def add(self, other):
        """Adds another summary's counts to this one.

        Args:
          other: a PretrainingDataSummary.
        """
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    @property
    def mask_rate(self):
        """Masked positions per token."""
        return self.masked_tokens / max(1, self.tokens)

    @property
    def random_next_share(self):
        """Share of the records whose B is a random span."""
        return self.random_next / max(1, self.instances)

    @property
    def truncated_share(self):
        """Share of the records whose pair was truncated."""
        return self.truncated / max(1, self.instances)

    @property
    def instances_per_second(self):
        """Records written per second of the run."""
        return self.instances / max(1e-9, self.elapsed_s)

    def warnings(self, max_seq_length):
        """What in the counts makes the records less useful than they look, one line each.

        Args:
          max_seq_length: The run's max_seq_length.

        Returns:
          A list of str, empty when nothing is odd.
        """
        warnings = []
        # About half the pairs are random by design; far more means that a
        # chunk of max_seq_length - 3 pieces seldom holds two sentences, so
        # that B is almost never the real next one.
        if self.instances and self.random_next_share >= RANDOM_NEXT_WARNING_SHARE:
            warnings.append(
                f"--max_seq_length={max_seq_length}: {self.random_next_share:.0%} of the "
                "next-sentence pairs are random (about 50% expected): a chunk of "
                f"{max_seq_length - 3} word pieces seldom holds two sentences, so the "
                "next-sentence labels teach little; give a larger --max_seq_length")
        return warnings

    def describe(self):
        """Returns the summary as a few human-readable lines."""
        masked = max(1, self.masked_tokens)
        return "\n".join([
            f"instances written: {self.instances} in {self.elapsed_s:.1f} s "
            f"({self.instances_per_second:.0f} instances/s)",
            f"documents: {self.documents} ({self.documents_too_short} too short "
            f"to form a pair); word pieces read: {self.input_tokens}",
            f"tokens written: {self.tokens}; mean mask rate: {self.mask_rate:.4f}",
            f"masked as [MASK] / random / kept: {self.masked_to_mask / masked:.3f} / "
            f"{self.masked_to_random / masked:.3f} / {self.masked_kept / masked:.3f}",
            f"random-next share: {self.random_next_share:.4f}; "
            f"truncated share: {self.truncated_share:.4f}; random-next pairs "
            f"skipped for want of another document: {self.skipped_random_next}",
        ])
