"""Developer tools: fixture makers, parity checks and swaps against peers.

A package, as bench/ is: every tool runs from the repository root as
`python -m tools.<name>` and imports `bert_tf` and `bench` helpers by their
package names, with no edit of sys.path. Neither `bert_tf` nor `bench` imports
from here.
"""
