"""The processor of every GLUE task (and XNLI), and get_processor to find one by name.

Each processor declares its task's layout for `bert_tf.data.glue.base.DataProcessor`
to read: the TSV files of the standard GLUE download (`download_glue_data.py`),
with the original repository's column choices and guid formats; its labels, the
metrics GLUE scores it with, its submission files and its TFDS names.
"""

import math
import os

from bert_tf.data.glue.base import DataProcessor, SplitFile
from bert_tf.data.metrics import (
    accuracy,
    f1_score,
    matthews_corrcoef,
    pearson_corrcoef,
    spearman_corrcoef,
)

_NLI_LABELS = ("contradiction", "entailment", "neutral")
_BINARY_LABELS = ("0", "1")
_ACCURACY = (("accuracy", accuracy),)
_F1_ACCURACY = (("f1", f1_score), ("accuracy", accuracy))


class ColaProcessor(DataProcessor):
    """CoLA: single-sentence acceptability; train and dev files have no header."""

    name = "cola"
    labels = _BINARY_LABELS
    submission_files = {"test": "CoLA.tsv"}
    metrics = (("mcc", matthews_corrcoef),)
    tfds_configs = ("cola",)
    tfds_text_keys = ("sentence", None)
    tfds_label_names = {"unacceptable": "0", "acceptable": "1"}
    # Train and dev: source, label, original annotation, sentence.
    split_files = {
        "train": SplitFile("train.tsv", label=1, text_a=3, width=4),
        "dev": SplitFile("dev.tsv", label=1, text_a=3, width=4),
        "test": SplitFile("test.tsv", index=0, text_a=1, width=2),
    }


class Sst2Processor(DataProcessor):
    """SST-2: single-sentence sentiment; train and dev rows have no id column."""

    name = "sst-2"
    labels = _BINARY_LABELS
    submission_files = {"test": "SST-2.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("sst2",)
    tfds_text_keys = ("sentence", None)
    tfds_label_names = {"negative": "0", "positive": "1"}
    split_files = {
        "train": SplitFile("train.tsv", text_a=0, label=1, width=2),
        "dev": SplitFile("dev.tsv", text_a=0, label=1, width=2),
        "test": SplitFile("test.tsv", index=0, text_a=1, width=2),
    }


class MrpcProcessor(DataProcessor):
    """MRPC: paraphrase pairs; the label ("Quality") comes first."""

    name = "mrpc"
    labels = _BINARY_LABELS
    submission_files = {"test": "MRPC.tsv"}
    metrics = _F1_ACCURACY
    tfds_configs = ("mrpc",)
    tfds_label_names = {"not_equivalent": "0", "equivalent": "1"}
    split_files = {
        "train": SplitFile("train.tsv", label=0, text_a=3, text_b=4, width=5),
        "dev": SplitFile("dev.tsv", label=0, text_a=3, text_b=4, width=5),
        "test": SplitFile("test.tsv", index=0, text_a=3, text_b=4, width=5),
    }


class QqpProcessor(DataProcessor):
    """QQP: duplicate question pairs; rows with missing fields are skipped."""

    name = "qqp"
    labels = _BINARY_LABELS
    submission_files = {"test": "QQP.tsv"}
    metrics = _F1_ACCURACY
    # The released train set has rows with missing fields (a question cut at
    # a line break); nothing in them says where the cut fields belong.
    skip_malformed_rows = True
    tfds_configs = ("qqp",)
    tfds_text_keys = ("question1", "question2")
    tfds_label_names = {"not_duplicate": "0", "duplicate": "1"}
    # Train and dev: id, qid1, qid2, question1, question2, is_duplicate.
    split_files = {
        "train": SplitFile("train.tsv", index=0, text_a=3, text_b=4, label=5, width=6),
        "dev": SplitFile("dev.tsv", index=0, text_a=3, text_b=4, label=5, width=6),
        "test": SplitFile("test.tsv", index=0, text_a=1, text_b=2, width=3),
    }


def _indexed_pair_files():
    """The files of tasks laid out as: index, text_a, text_b[, label]."""
    return {
        "train": SplitFile("train.tsv", index=0, text_a=1, text_b=2, label=3, width=4),
        "dev": SplitFile("dev.tsv", index=0, text_a=1, text_b=2, label=3, width=4),
        "test": SplitFile("test.tsv", index=0, text_a=1, text_b=2, width=3),
    }


class QnliProcessor(DataProcessor):
    """QNLI: does the sentence answer the question."""

    name = "qnli"
    labels = ("entailment", "not_entailment")
    submission_files = {"test": "QNLI.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("qnli",)
    tfds_text_keys = ("question", "sentence")
    split_files = _indexed_pair_files()


class RteProcessor(DataProcessor):
    """RTE: two-way textual entailment."""

    name = "rte"
    labels = ("entailment", "not_entailment")
    submission_files = {"test": "RTE.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("rte",)
    split_files = _indexed_pair_files()


class WnliProcessor(DataProcessor):
    """WNLI: Winograd schemas as entailment, labelled 0/1 (1 = entailment)."""

    name = "wnli"
    labels = _BINARY_LABELS
    submission_files = {"test": "WNLI.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("wnli",)
    tfds_label_names = {"not_entailment": "0", "entailment": "1"}
    split_files = _indexed_pair_files()


class StsbProcessor(DataProcessor):
    """STS-B: sentence-pair similarity, a float score in [0, 5] (regression)."""

    name = "sts-b"
    is_regression = True
    submission_files = {"test": "STS-B.tsv"}
    metrics = (("pearson", pearson_corrcoef), ("spearman", spearman_corrcoef))
    tfds_configs = ("stsb",)
    # index, genre, filename, year, old_index, source1, source2, sentence1,
    # sentence2[, score].
    split_files = {
        "train": SplitFile("train.tsv", index=0, text_a=7, text_b=8, label=9, width=10),
        "dev": SplitFile("dev.tsv", index=0, text_a=7, text_b=8, label=9, width=10),
        "test": SplitFile("test.tsv", index=0, text_a=7, text_b=8, width=9),
    }

    def parse_label(self, value):
        """Parses a score, which GLUE keeps in [0, 5]."""
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        # The comparison is False for NaN, so unparsable values land here too.
        if not 0.0 <= score <= 5.0:
            raise ValueError(f"unknown label {value!r}; {self.name} labels are scores in [0, 5]")
        return score


class MnliProcessor(DataProcessor):
    """MultiNLI (GLUE version), with matched and mismatched dev and test sets.

    Guids are "<split>-<index>" with the split's full name ("test_matched-0"),
    so that the two test sets, whose indices both start at 0, never share one.
    """

    name = "mnli"
    labels = _NLI_LABELS
    eval_splits = ("dev_matched", "dev_mismatched")
    predict_splits = ("test_matched", "test_mismatched")
    submission_files = {"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"}
    metrics = _ACCURACY
    tfds_configs = ("mnli", "mnli_matched", "mnli_mismatched")
    tfds_text_keys = ("premise", "hypothesis")
    # index, promptID, pairID, genre, 4 parses, sentence1, sentence2, then in
    # train: label1, gold_label; in dev: label1..label5, gold_label. Widths come
    # from each file's header, since subsets of MNLI keep fewer label columns.
    split_files = {
        "train": SplitFile("train.tsv", index=0, text_a=8, text_b=9, label=-1),
        "dev_matched": SplitFile("dev_matched.tsv", index=0, text_a=8, text_b=9, label=-1),
        "dev_mismatched": SplitFile("dev_mismatched.tsv", index=0, text_a=8, text_b=9, label=-1),
        "test_matched": SplitFile("test_matched.tsv", index=0, text_a=8, text_b=9),
        "test_mismatched": SplitFile("test_mismatched.tsv", index=0, text_a=8, text_b=9),
    }


class AxProcessor(DataProcessor):
    """AX, the GLUE diagnostic set: predict only, scored as MNLI.

    It has no train or dev split: GLUE scores predictions of an MNLI model on
    it, so its labels are MNLI's, in MNLI's order.
    """

    name = "ax"
    labels = _NLI_LABELS
    eval_splits = ()
    submission_files = {"test": "AX.tsv"}
    metrics = (("mcc", matthews_corrcoef),)
    tfds_configs = ("ax",)
    tfds_text_keys = ("premise", "hypothesis")
    split_files = {"test": SplitFile("diagnostic.tsv", index=0, text_a=1, text_b=2, width=3)}


class XnliProcessor(DataProcessor):
    """XNLI, laid out as the original reads it: one language at a time.

    Train is XNLI-MT 1.0's machine-translated MultiNLI,
    `multinli/multinli.train.<language>.tsv`; dev is XNLI 1.0's
    `xnli.dev.tsv`, whose rows of all languages are filtered on its language
    column. As in the original, there is no test split to predict.

    Args:
      language: The XNLI language code; by default "zh", the original's.
    """

    name = "xnli"
    labels = _NLI_LABELS
    predict_splits = ()
    metrics = _ACCURACY
    # Dev: language, gold_label, 4 parses, sentence1, sentence2, promptID, ...
    split_files = {
        "train": SplitFile("multinli/multinli.train.{language}.tsv", text_a=0, text_b=1,
                           label=2, width=3),
        "dev": SplitFile("xnli.dev.tsv", language=0, label=1, text_a=6, text_b=7),
    }

    def __init__(self, language="zh"):
        self.language = language

    def split_path(self, data_dir, file):
        """The split's file, in this processor's language."""
        return os.path.join(data_dir, file.name.format(language=self.language))

    def parse_label(self, value):
        """Checks a label, read as MultiNLI's spelling of it."""
        # The machine-translated train files call one class "contradictory".
        return super().parse_label("contradiction" if value == "contradictory" else value)


PROCESSORS = {
    processor.name: processor
    for processor in (ColaProcessor, Sst2Processor, MrpcProcessor, QqpProcessor,
                      StsbProcessor, MnliProcessor, QnliProcessor, RteProcessor,
                      WnliProcessor, XnliProcessor, AxProcessor)
}


def _normalize(name):
    """Folds case, "-" and "_", so that "SST-2", "sst2" and "STS_B" all match."""
    return name.lower().replace("-", "").replace("_", "")


def get_processor(task_name, language=None):
    """Makes the processor of a task.

    Args:
      task_name: A key of PROCESSORS, in any case and with or without "-"
        ("MRPC", "sst2", "STS-B"), or a TFDS name "glue/<config>[:version]"
        ("glue/mnli_matched").
      language: The XNLI language; only for xnli.

    Returns:
      A new DataProcessor.

    Raises:
      ValueError: The task is unknown (the message lists the known ones), or
        a language is given for another task than xnli.
    """
    if task_name.lower().startswith("glue/"):
        config = task_name.split("/", 1)[1].split(":")[0].lower()
        matches = [p for p in PROCESSORS.values() if config in p.tfds_configs]
        if not matches:
            known = sorted(c for p in PROCESSORS.values() for c in p.tfds_configs)
            raise ValueError(f"Unknown TFDS GLUE config {task_name!r}; known: "
                             f"{', '.join('glue/' + c for c in known)}")
        processor_class = matches[0]
    else:
        matches = [p for name, p in PROCESSORS.items()
                   if _normalize(name) == _normalize(task_name)]
        if not matches:
            raise ValueError(f"Unknown task {task_name!r}; known tasks: "
                             f"{', '.join(PROCESSORS)}")
        processor_class = matches[0]
    if language is None:
        return processor_class()
    if processor_class is not XnliProcessor:
        raise ValueError(f"language is an xnli option, not one of {processor_class.name}")
    return processor_class(language)
