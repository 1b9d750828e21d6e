"""bert_tf: Google's BERT, reimplemented on TensorFlow 2 and Keras."""

from bert_tf.runtime import startup_log, tpu_runtime

__version__ = "0.1.0"

# Before any bert_tf module imports TensorFlow: on a TPU VM, PJRT must be set
# up in the environment that TensorFlow reads when it loads (tpu_runtime.py).
tpu_runtime.configure()
# Unless TF_CPP_MIN_LOG_LEVEL is set: TensorFlow's start-up notes, which that
# variable cannot hide, leave the first import's output (startup_log.py).
startup_log.configure()
