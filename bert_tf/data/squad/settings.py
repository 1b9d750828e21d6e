"""SquadSettings: the settings of a question-answering run that its task and its data share.

How a context is cut into windows is what the model is trained on, what
its predictions are mapped back through, and what its raw-text export
reads a context with; how an answer is chosen is what scoring, the output
files and the export all do. run_squad.py builds one SquadSettings from its
flags and gives the same object to tasks.QuestionAnsweringTask and to
SquadData, so that they cannot disagree; it is checked once, when built.
"""

import dataclasses

from bert_tf.data.squad.windows import DOC_STRIDE_MEANINGS, check_doc_stride, check_window_lengths
from bert_tf.settings import setting


@dataclasses.dataclass(frozen=True)
class SquadSettings:
    """How a question-answering run windows its contexts and chooses its answers.

    Each setting is run_squad.py's flag of the same name, with its default
    and help (config_flags generates the flags).

    Attributes:
      max_seq_length: The windows' length, [CLS] and [SEP]s included.
      doc_stride: How a long context's windows are placed, in context pieces.
      max_query_length: Question pieces kept.
      doc_stride_means: "step": windows start doc_stride pieces apart (the
        original's); "overlap": consecutive windows share doc_stride pieces
        (Hugging Face's).
      version_2_with_negative: SQuAD 2.0: questions may have no answer.
      n_best_size: Candidates per question in nbest_predictions.json.
      max_answer_length: The longest answer, in word pieces.
      null_score_diff_threshold: SQuAD 2.0: predict "no answer" when the
        null score exceeds the best span's by more than this.
      verbose_logging: Log why a predicted answer could not be mapped back
        onto the context.
    """

    # The model's (ModelSettings'), not a flag of its own: run_squad.py gives
    # it; 384 is run_squad.py's default for --max_seq_length.
    max_seq_length: int = 384
    doc_stride: int = setting(
        128, "Word pieces between the starts of consecutive windows of a context too long "
        "for one.", lower_bound=1)
    max_query_length: int = setting(
        64, "Word pieces kept of each question; a longer one is cut (and counted in a "
        "warning).", lower_bound=1)
    doc_stride_means: str = setting(
        DOC_STRIDE_MEANINGS[0],
        "How --doc_stride places a long context's windows. step (the original's): windows "
        "start doc_stride pieces apart. overlap (Hugging Face's): consecutive windows share "
        "doc_stride pieces, so they start max_seq_length - question - 3 - doc_stride pieces "
        "apart.", choices=DOC_STRIDE_MEANINGS)
    version_2_with_negative: bool = setting(
        False, "SQuAD 2.0: some questions have no answer.")
    n_best_size: int = setting(
        20, "Candidate answers kept per question in nbest_predictions.json (the answer is the "
        "best of every valid span).", lower_bound=1)
    max_answer_length: int = setting(
        30, "The maximum length of an answer that can be generated, in word pieces (start "
        "and end are predicted apart).", lower_bound=1)
    null_score_diff_threshold: float = setting(
        0.0, "SQuAD 2.0: predict no answer when the null score minus the best span's is "
        "greater than this.")
    verbose_logging: bool = setting(
        False, "Log every answer whose text could not be mapped back onto the context. A "
        "number of these are expected on SQuAD.")

    def __post_init__(self):
        """Refuses lengths that leave no room for an answer, or windows that would not move.

        Raises:
          ValueError: naming the flags.
        """
        if self.max_answer_length < 1:
            raise ValueError(f"--max_answer_length={self.max_answer_length} must be at least 1")
        check_window_lengths(self.max_seq_length, self.max_query_length)
        check_doc_stride(self.max_seq_length, self.max_query_length, self.doc_stride,
                         self.doc_stride_means)
