"""ConllSettings: how a tagging run cuts its sentences into windows, which its task and its
data share."""

import dataclasses

from bert_tf.settings import setting


def default_window_stride(max_seq_length):
    """Pieces between a long sentence's windows when none is given: half a window.

    Args:
      max_seq_length: Tokens per record, [CLS] and [SEP] included.

    Returns:
      An int, at least 1.
    """
    return max((max_seq_length - 2) // 2, 1)


@dataclasses.dataclass(frozen=True)
class ConllSettings:
    """What a tagging run's task (tasks.TaggingTask) and its data share: how sentences are cut.

    The model is trained on these windows, its predictions are gathered
    back through them, and its raw-text export cuts a long sentence alike.
    run_ner.py builds one from its flags and gives the same object to both;
    window_stride is its flag of that name (config_flags generates it).

    Attributes:
      max_seq_length: Tokens per record, [CLS] and [SEP] included: the
        model's (ModelSettings'), which run_ner.py gives.
      window_stride: Word pieces between the starts of a long sentence's
        windows; None (given): default_window_stride(max_seq_length), half a
        window.
    """

    max_seq_length: int = 128
    window_stride: int | None = setting(
        None, "Word pieces between the starts of the windows of a sentence longer than "
        "max_seq_length - 2 pieces; default: half of that, so that windows overlap by half.")

    def __post_init__(self):
        """Fills in the default stride and refuses one that does not fit a window.

        Raises:
          ValueError: naming --window_stride.
        """
        stride = self.window_stride or default_window_stride(self.max_seq_length)
        if not 0 < stride <= self.max_seq_length - 2:
            raise ValueError(f"--window_stride={stride} must be in 1.."
                             f"{self.max_seq_length - 2} (max_seq_length - 2)")
        # Frozen: the resolved stride is set once, here.
        object.__setattr__(self, "window_stride", stride)
