"""Fine-tuning data: the data protocol, shared metrics, one folder per dataset."""
