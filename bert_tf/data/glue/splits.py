"""One split of a GLUE task, from the TSV files or from TensorFlow Datasets.

`read_split(processor, "dev", data_dir=...)` is what run_classifier.py and the
notebook call: it picks the source, maps the processor's split names onto
TFDS's, and refuses an empty split.
"""

from bert_tf.data.glue.tfds import examples_from_tfds

# The processors' split names that TFDS's GLUE builder calls otherwise.
TFDS_SPLITS = {"dev": "validation", "dev_matched": "validation_matched",
               "dev_mismatched": "validation_mismatched"}


def read_split(processor, split, data_dir=None, tfds_name=None):
    """The examples of one split, from data_dir or from TFDS.

    Args:
      processor: The task's DataProcessor.
      split: A split name of the processor ("train", "dev", "test_matched").
      data_dir: The task's folder of the GLUE download.
      tfds_name: Instead, a TFDS name such as "glue/mrpc".

    Returns:
      A non-empty list of InputExample, in file order.

    Raises:
      ValueError: The split has no examples (an empty split would train for
        no step, or fail later on an empty batch); or DataProcessor.get_examples'
        errors (GlueDataError, a ValueError, for a bad row).
    """
    if tfds_name:
        tfds_split = TFDS_SPLITS.get(split, split)
        examples = examples_from_tfds(tfds_name, tfds_split)
        source = f"{tfds_name} split {tfds_split}"
    else:
        examples = processor.get_examples(data_dir, split)
        source = data_dir
    if not examples:
        raise ValueError(f"{processor.name}: no {split} examples in {source}")
    return examples
