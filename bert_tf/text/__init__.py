"""Text to word pieces: the original's tokenizers in Python, and the same in the graph.

tokenization.py (FullTokenizer and its parts, the original's API),
char_classes.py (basic tokenization's character classes, for both), and
text_ops.py (the same tokenization and packing as TensorFlow ops).
"""
