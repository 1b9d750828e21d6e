"""Training a model: the training loop, its optimizers, its checkpoints, and inference.

training_loop.py is the Trainer, handed the runtime that run_setup.py makes
(bert_tf/runtime/); optimization.py its optimizers and schedule;
training_checkpoints.py and run_dir.py what a run saves and how it resumes;
best_checkpoint.py the best model and early stopping; inference.py
evaluation and prediction; progress.py its pacing; run_checks.py the checks
a run's settings pass first.
"""
