"""Warnings to the user, in the form every script prints its messages.

warn() prints '<script>: warning: <message>' on stderr, the form of the
error line cli.run prints, so that the library (reading a file, checking
a setting) tells the user of something odd without importing the command
line's package. It imports no TensorFlow.
"""

import os
import sys


def warn(message):
    """Prints '<script>: warning: <message>' on stderr, as cli.run prints errors.

    Args:
      message: One line: what is odd, where, and its consequence.
    """
    print(f"{os.path.basename(sys.argv[0])}: warning: {message}", file=sys.stderr)
