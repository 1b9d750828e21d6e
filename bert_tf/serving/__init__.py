"""Serving: every raw-text SavedModel, built, written and run.

This folder owns everything about serving a trained model on raw text; the
tasks know nothing of it. Each family's serving module (classification.py,
tagging.py, question_answering.py, multiple_choice.py) builds the tf.Module
that tokenizes raw text in the graph and turns the model's outputs into
answers; task_serving.py says which module serves which task; export.py
writes a task's SavedModel; served_model.py runs the encoder inside it (each
batch at its own length, or at one shape); export_runner.py reads an export
back and runs it batch by batch. The predict_*.py scripts that run an
export on a file read their texts through cli/text_input.py.
"""
