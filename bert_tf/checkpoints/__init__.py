"""Checkpoint formats: reading and writing a BertModel's weights, and finding a model's files.

checkpoint_names.py is the three checkpoint formats (google, hf, tf2) and the
encoder's weight names in each; each head declares its own
(model/heads.py). checkpoints.py loads, saves and converts them, and reads
a checkpoint's config, vocab and casing from beside it; tf_hub.py and
keras_hub.py are the two formats TensorFlow and Keras users plug BERT in
with, both ways: TF Hub's encoder and preprocessor SavedModels (an encoder
bert_tf exported, or one of TF Hub's published BERT encoders, is read back)
and keras-hub's BertBackbone preset folders. checkpoints.py calls them for
--init_checkpoint and convert_checkpoint.py; they import nothing from it.
model_files.py finds a model's config, vocab, casing and checkpoint
together and checks that they fit (ModelFiles), for fine-tuning, feature
extraction and the tools.
"""
