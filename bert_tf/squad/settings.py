"""SquadSettings: the settings of a question-answering run that its task and its data share.

How a context is cut into windows is what the model is trained on, what
its predictions are mapped back through, and what its raw-text export
reads a context with; how an answer is chosen is what scoring, the output
files and the export all do. run_squad.py builds one SquadSettings from its
flags and gives the same object to tasks.QuestionAnsweringTask and to
SquadData, so that they cannot disagree; it is checked once, when built.
"""

import dataclasses

from bert_tf.squad.windows import DOC_STRIDE_MEANINGS, check_doc_stride, check_window_lengths


@dataclasses.dataclass(frozen=True)
class SquadSettings:
    """How a question-answering run windows its contexts and chooses its answers.

    Each field is named as run_squad.py's flag that sets it, with its default.

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

    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    doc_stride_means: str = DOC_STRIDE_MEANINGS[0]
    version_2_with_negative: bool = False
    n_best_size: int = 20
    max_answer_length: int = 30
    null_score_diff_threshold: float = 0.0
    verbose_logging: bool = False

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
