"""The model: BertConfig, the BertModel encoder, its heads, and its checkpoints.

config.py (bert_config.json), modeling.py (embeddings, transformer blocks,
pooler), heads.py (masked LM, next sentence, classifier, span), the layers
whose backward pass recomputes instead of keeping (layer_norm.py,
feed_forward.py, dropout.py, recompute.py), and checkpoints.py with
checkpoint_names.py: loading, saving and converting Google's, Hugging Face's
and bert_tf's formats, and model_files.py: a model's config, vocab, casing
and checkpoint, found and checked together (ModelFiles). tf_hub.py and
keras_hub.py are the two formats TensorFlow and Keras users plug BERT in
with, both ways: TF Hub's encoder and preprocessor SavedModels (an encoder
bert_tf exported, or one of TF Hub's published BERT encoders, is read back)
and keras-hub's BertBackbone preset folders. checkpoints.py calls them for
--init_checkpoint and convert_checkpoint.py; they import nothing from it.
"""
