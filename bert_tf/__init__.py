"""bert_tf: Google's BERT, reimplemented on TensorFlow 2 and Keras."""

from bert_tf import tpu_runtime

__version__ = "0.1.0"

# Before any bert_tf module imports TensorFlow: on a TPU VM, PJRT must be set
# up in the environment that TensorFlow reads when it loads (tpu_runtime.py).
tpu_runtime.configure()
