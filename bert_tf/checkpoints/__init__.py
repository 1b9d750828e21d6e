"""Checkpoint formats: Google, Hugging Face, bert_tf, TF Hub, keras-hub."""
