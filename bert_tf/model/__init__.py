"""The model: BertConfig, the BertModel encoder, its heads, and its checkpoints.

config.py (bert_config.json), modeling.py (embeddings, transformer blocks,
pooler), heads.py (masked LM, next sentence, classifier, span), the layers
whose backward pass recomputes instead of keeping (layer_norm.py,
feed_forward.py, dropout.py, recompute.py), and checkpoints.py with
checkpoint_names.py: loading, saving and converting Google's, Hugging Face's
and bert_tf's formats, and model_files.py: a model's config, vocab, casing
and checkpoint, found and checked together (ModelFiles).
"""
