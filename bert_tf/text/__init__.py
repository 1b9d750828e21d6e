"""Text to word pieces.

The original's tokenizers in Python, the same in the TensorFlow graph, and
learning a vocabulary from raw text.
"""
