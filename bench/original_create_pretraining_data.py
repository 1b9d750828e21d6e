"""Runs Google's original create_pretraining_data.py under TensorFlow 2.

The benchmarks compare bert_tf against the original (pretraining_data_speed.py
runs this; tokenization_speed.py loads the original's tokenization.py through
it), and a test fixture holds records the original wrote. This runs the
original unchanged: it loads the original's code at run time from a checkout
(or a git directory) given by --original, and puts `tensorflow.compat.v1` in
the place of `tensorflow`, so that the original's TF1 calls work. The
original's code is never copied into this repository.

It also counts the pairs the original truncates, a statistic its output does
not show, by wrapping its truncate_seq_pair.

Usage:
  python -m bench.original_create_pretraining_data \\
      --original=PATH/TO/google-research/bert [--stats_file=stats.json] -- \\
      --input_file=... --output_file=... --vocab_file=... [the original's flags]
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

_FILES = ("create_pretraining_data.py", "tokenization.py")


def original_code_dir(original, revision="HEAD"):
    """Finds, or extracts, the original's create_pretraining_data.py and tokenization.py.

    Args:
      original: a checkout of google-research/bert, or its git directory
        (bare or not), from which the files are extracted.
      revision: the git revision to extract.

    Returns:
      A directory that holds both files.

    Raises:
      FileNotFoundError: if `original` has the files neither as files nor in git.
    """
    if all(os.path.isfile(os.path.join(original, name)) for name in _FILES):
        return original
    code_dir = tempfile.mkdtemp(prefix="original_bert_")
    for name in _FILES:
        result = subprocess.run(["git", "-C", original, "show", f"{revision}:{name}"],
                                capture_output=True, check=False)
        if result.returncode:
            raise FileNotFoundError(
                f"{original} holds no {name}, as a file or in git: {result.stderr.decode()}")
        with open(os.path.join(code_dir, name), "wb") as f:
            f.write(result.stdout)
    return code_dir


def load_original(code_dir):
    """Imports the original script as a module, with TF1's API as `tensorflow`.

    Args:
      code_dir: a directory holding the original's files.

    Returns:
      The original create_pretraining_data module; its flags are defined.
    """
    import tensorflow as tf

    sys.modules["tensorflow"] = tf.compat.v1
    # The original imports its sibling as the top-level module `tokenization`.
    sys.path.insert(0, code_dir)
    path = os.path.join(code_dir, "create_pretraining_data.py")
    spec = importlib.util.spec_from_file_location("original_create_pretraining_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def count_truncations(module):
    """Wraps the module's truncate_seq_pair to count pairs and truncated pairs.

    Args:
      module: the original create_pretraining_data module.

    Returns:
      A dict {"pairs": int, "truncated": int} that the wrapper updates.
    """
    counts = {"pairs": 0, "truncated": 0}
    truncate = module.truncate_seq_pair

    def counting_truncate(tokens_a, tokens_b, max_num_tokens, rng):
        counts["pairs"] += 1
        counts["truncated"] += len(tokens_a) + len(tokens_b) > max_num_tokens
        return truncate(tokens_a, tokens_b, max_num_tokens, rng)

    module.truncate_seq_pair = counting_truncate
    return counts


def main():
    """Parses this tool's flags, then runs the original with the rest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--original", required=True,
                        help="A google-research/bert checkout, or its git directory.")
    parser.add_argument("--revision", default="HEAD",
                        help="The revision to extract when --original is a git directory.")
    parser.add_argument("--stats_file",
                        help="Where to write a JSON object: elapsed_s, pairs, truncated.")
    args, original_argv = parser.parse_known_args()
    if original_argv[:1] == ["--"]:
        original_argv = original_argv[1:]

    module = load_original(original_code_dir(args.original, args.revision))
    counts = count_truncations(module)
    start = time.monotonic()
    try:
        module.tf.app.run(main=module.main, argv=[module.__file__, *original_argv])
    finally:
        if args.stats_file:
            with open(args.stats_file, "w", encoding="utf-8") as f:
                json.dump({"elapsed_s": time.monotonic() - start, **counts}, f)


if __name__ == "__main__":
    main()
