"""Training data: the data protocol, the shared metrics, and one folder per dataset.

protocol.py is TrainingData, what every training job asks of its data (its
splits, read and checked before any work), and FinetuneData, what
finetune.run asks of a dataset besides (records, scores and output files),
and the one record writer;
metrics.py the numpy metrics that GLUE and one's own CSV data score with,
and test_results.py the original's test_results.tsv, which both write;
fingerprints.py what the files a run trained on were. Each dataset's folder
gives the same job the same module name: settings.py (what the run's task
and data share), reading.py (files -> examples), scoring.py (metrics,
official evaluations), outputs.py (output files), records.py (examples ->
records, and the FinetuneData subclass, which uses the others), beside the
modules of a job of the dataset's own (data/squad/windows.py, data/glue/processors.py);
each folder's __init__ lists its modules in import order:

  glue/    GLUE and XNLI: processors, TSV or TFDS, submission files;
  squad/   SQuAD 1.1 and 2.0: windows, answers, the official evaluation;
  conll/   CoNLL-2003 named entities: windows, conlleval's scores;
  swag/    SWAG multiple choice;
  csv/     CSV or TSV files of one's own (run_classifier.py --train_file);
  pretraining/  the record files of create_pretraining_data.py, for
           run_pretraining.py (records.py only: the records exist already).

Reading a dataset imports no training code (training/, model/, tasks/):
tests/unit/data/test_imports.py checks it.
"""
