"""GLUE tasks from TensorFlow Datasets, as the same InputExamples the TSV files give.

`examples_from_tfds("glue/mrpc", "validation")` reads a task from TFDS and maps
TFDS's label names onto the processor's labels.
"""

import tensorflow_datasets as tfds

from bert_tf.data.glue.base import InputExample
from bert_tf.data.glue.processors import get_processor


def examples_from_tfds(tfds_name, split, data_dir=None):
    """Reads a GLUE task from TensorFlow Datasets as InputExamples.

    TFDS's label ids are mapped through its class names onto the processor's
    labels, since the orders differ (TFDS MNLI: entailment, neutral,
    contradiction). Test splits have label -1 in TFDS and None here.

    Args:
      tfds_name: "glue/<config>", such as "glue/mrpc" or "glue/mnli".
      split: A TFDS split such as "train", "validation", "test",
        "validation_matched", or a slice of one ("train[:1%]").
      data_dir: TFDS's data directory, or None for its default.

    Returns:
      A list of InputExamples with guids "<split>-<idx>", idx being TFDS's
      row index, which for test splits is the index GLUE submissions use.
    """
    processor = get_processor(tfds_name)
    dataset, info = tfds.load(tfds_name, split=split, data_dir=data_dir, with_info=True)
    # ClassLabel features have names; STS-B's float label has none.
    names = getattr(info.features["label"], "names", None)
    key_a, key_b = processor.tfds_text_keys
    prefix = split.split("[")[0]
    examples = []
    for record in tfds.as_numpy(dataset):
        raw_label = record["label"]
        if raw_label == -1:
            label = None
        elif processor.is_regression:
            label = float(raw_label)
        else:
            label = processor.tfds_label(names[int(raw_label)])
        examples.append(InputExample(
            guid=f"{prefix}-{int(record['idx'])}",
            text_a=record[key_a].decode("utf-8"),
            text_b=record[key_b].decode("utf-8") if key_b else None,
            label=label))
    return examples
