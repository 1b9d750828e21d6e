"""The model: BertConfig, the BertModel encoder and its heads, the architecture only.

config.py (bert_config.json), modeling.py (embeddings, transformer blocks,
pooler), heads.py (masked LM, next sentence, classifier, span), and the
layers whose backward pass recomputes instead of keeping (layer_norm.py,
feed_forward.py, dropout.py, recompute.py). Reading and writing the
weights in Google's, Hugging Face's, bert_tf's, TF Hub's and keras-hub's
formats is bert_tf/checkpoints/.
"""
