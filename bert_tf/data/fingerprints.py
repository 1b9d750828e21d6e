"""What a run's data files were: a cheap fingerprint of each file's content.

A run records the fingerprints of the files it trained on (and of its vocab)
in run_settings.json (training/run_dir.py), so that a later run in the same
folder that would go on training on other data is refused. The datasets
compute them for FinetuneData.training_settings(), without the training
code.
"""

import hashlib
import os

import tensorflow as tf

# Bytes hashed at each end of a file by file_fingerprint: a cheap look, even
# at a file of many gigabytes, that still tells two datasets apart.
FINGERPRINT_EDGE_BYTES = 1 << 16


def file_fingerprint(path):
    """A cheap fingerprint of a file's content: its size and a hash of its ends.

    Reading only the ends keeps it fast on a corpus of many gigabytes; with
    the size, it tells a replaced, cut or appended file from the one a run
    recorded.

    Args:
      path: A local or gs:// file.

    Returns:
      A string such as "1234 bytes, ends 3f2a9c1b0d4e5f60".
    """
    size = tf.io.gfile.stat(path).length
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(path, "rb") as f:
        digest.update(f.read(FINGERPRINT_EDGE_BYTES))
        if size > FINGERPRINT_EDGE_BYTES:
            f.seek(max(FINGERPRINT_EDGE_BYTES, size - FINGERPRINT_EDGE_BYTES))
            digest.update(f.read())
    return f"{size} bytes, ends {digest.hexdigest()[:16]}"


def fingerprints(paths):
    """file_fingerprint() of each file, by its absolute path.

    Args:
      paths: Local or gs:// files.

    Returns:
      {path: fingerprint}, local paths made absolute.
    """
    return {(path if "://" in path else os.path.abspath(path)): file_fingerprint(path)
            for path in paths}
