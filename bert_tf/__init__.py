"""bert_tf: Google's BERT, reimplemented on TensorFlow 2 and Keras."""

__version__ = "0.1.0"
