"""--vocab_file, --do_lower_case and --errors: the flags that say how text is read
and becomes word pieces.

Every script that reads text defines them here, with one default each. Each
script words the help for what the vocab is for there (the model's, the data's).
This module imports absl alone, not TensorFlow (as script_flags does for the
configs' defaults), so that create_pretraining_data.py can define the same
flags and still start without loading TensorFlow.
"""

from absl import flags


def define_vocab_file_flag(help_text, flag_values=flags.FLAGS):
    """Defines --vocab_file, a vocab.txt path; None unless given.

    Args:
      help_text: What the vocab is, in this script.
      flag_values: The absl FlagValues to define it in.
    """
    flags.DEFINE_string("vocab_file", None, help_text, flag_values=flag_values)


def define_do_lower_case_flag(help_text, flag_values=flags.FLAGS):
    """Defines --do_lower_case; True (uncased models) unless given.

    Args:
      help_text: How this script uses the casing.
      flag_values: The absl FlagValues to define it in.
    """
    flags.DEFINE_bool("do_lower_case", True, help_text, flag_values=flag_values)


def define_errors_flag(default, flag_values=flags.FLAGS):
    """Defines --errors, what to do with bytes of a text file that are not UTF-8.

    Args:
      default: "strict", "replace" or "ignore" (the config's default).
      flag_values: The absl FlagValues to define it in.
    """
    flags.DEFINE_enum(
        "errors", default, ["strict", "replace", "ignore"],
        "What to do with bytes that are not UTF-8: strict stops with the file and line, "
        "replace reads U+FFFD, ignore drops them (as the original did).",
        flag_values=flag_values)
