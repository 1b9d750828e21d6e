"""The runtime a model runs on: strategy, precision, XLA, CPU kind, TPU."""
