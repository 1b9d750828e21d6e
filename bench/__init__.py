"""Benchmarks: speed, memory and quality, each against a peer (see bench/README.md).

A package, so that every script runs the same way from the repository root,
`python -m bench.<script>`, and imports its helpers as `from bench import machine`.
"""
