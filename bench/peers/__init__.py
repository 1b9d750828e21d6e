"""The Hugging Face peers: independent reference runs that never import bert_tf.

Each runs in a venv with torch and transformers, from the repository root:
`/tmp/hfvenv/bin/python -m bench.peers.<script>`. They share their training recipe
(recipe.py: seeds, AdamW's groups, the schedules) with each other, and only bench/machine.py
(standard library) with the rest of bench/.
"""
