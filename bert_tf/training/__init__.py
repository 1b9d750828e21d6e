"""Running a model: the runtime it runs on, the training loop, and inference.

run_setup.py makes the one Runtime (strategy, precision policy, XLA choice:
distribution.py, precision.py, xla.py, cpu.py) that everything below is
handed. training_loop.py is the Trainer; optimization.py its optimizers and
schedule; training_checkpoints.py and run_dir.py what a run saves and how it
resumes; inference.py evaluation and prediction; progress.py and memory.py
its pacing and CPU memory; run_checks.py the checks a run's settings pass
first. tpu_runtime.py and startup_log.py set up the environment before
TensorFlow is imported; tpu_rules.py checks a TPU program's rules anywhere.

This package's __init__ imports nothing: bert_tf/__init__.py loads
tpu_runtime before TensorFlow.
"""
