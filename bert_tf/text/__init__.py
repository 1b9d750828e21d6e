"""Text to word pieces: the original's tokenizers in Python, the same in the TensorFlow graph, and learning a vocabulary."""
