"""SwagSettings: what a multiple-choice run's task and its data share."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class SwagSettings:
    """What a multiple-choice run's task (tasks.MultipleChoiceTask) and its data share.

    run_swag.py builds one from its flags and gives the same object to both.

    Attributes:
      max_seq_length: Tokens per sequence, [CLS] and [SEP]s included.
      num_choices: Endings per question (4 for SWAG).
    """

    max_seq_length: int = 128
    num_choices: int = 4

    def __post_init__(self):
        """Refuses fewer than two endings.

        Raises:
          ValueError: naming the flag.
        """
        if self.num_choices < 2:
            raise ValueError(f"--num_choices={self.num_choices} must be at least 2")
