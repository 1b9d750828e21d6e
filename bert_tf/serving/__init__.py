"""Serving: raw-text SavedModels, written and run.

export.py writes a task's SavedModel, whose signatures tokenize raw text in
the graph; served_model.py runs the encoder inside them (each batch at its own
length, or at one shape); export_runner.py reads an export back and runs it
batch by batch; text_input.py reads the texts the predict_*.py scripts label.
"""
