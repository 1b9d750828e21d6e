"""TFRecords: what each family's records hold, writing them, and reading them back.

record_specs.py (each record field's name, type and length) and tfrecord.py
(a writer in numpy) need no TensorFlow; input_pipeline.py reads records into
tf.data, and dynamic_masking.py draws new masks there. The data side of
fine-tuning and its one record writer is bert_tf/data/protocol.py.
"""
