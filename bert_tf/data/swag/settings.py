"""SwagSettings: what a multiple-choice run's task and its data share."""

import dataclasses

from bert_tf.settings import setting


@dataclasses.dataclass(frozen=True)
class SwagSettings:
    """What a multiple-choice run's task (tasks.MultipleChoiceTask) and its data share.

    run_swag.py builds one from its flags and gives the same object to both;
    num_choices is its flag of that name (config_flags generates it).

    Attributes:
      max_seq_length: Tokens per sequence, [CLS] and [SEP]s included: the
        model's (ModelSettings'), which run_swag.py gives.
      num_choices: Endings per question (4 for SWAG).
    """

    max_seq_length: int = 128
    num_choices: int = setting(4, "Endings per question (SWAG has 4).", lower_bound=2)

    def __post_init__(self):
        """Refuses fewer than two endings.

        Raises:
          ValueError: naming the flag.
        """
        if self.num_choices < 2:
            raise ValueError(f"--num_choices={self.num_choices} must be at least 2")
