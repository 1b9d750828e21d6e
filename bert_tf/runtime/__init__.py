"""The runtime a model runs on, chosen once: strategy, precision, XLA, and their environment.

run_setup.py makes a run's Runtime from its configs.RuntimeSettings, once,
before any model is built (prepare: the seed, the strategy, the precision
policy, the XLA choice) and checks the batch sizes against the replicas;
distribution.py resolves the strategy (TPU, else GPUs, else CPU);
precision.py the dtype policy of training and of predictions; xla.py
whether the steps are XLA-compiled; cpu.py what the CPU's kind decides for
both; memory.py gives the C heap's free pages back while an XLA loop runs;
interrupts.py holds Ctrl-C and SIGTERM until a training loop ends;
tpu_rules.py checks a TPU program's rules on any device. tpu_runtime.py and
startup_log.py set up the environment before TensorFlow is imported, and
import no TensorFlow: bert_tf/__init__.py calls them first. Training,
serving and feature extraction all take the runtime from here.

This package's __init__ imports nothing: bert_tf/__init__.py loads
tpu_runtime before TensorFlow.
"""
