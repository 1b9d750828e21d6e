"""GLUE's submission files: the file GLUE's server scores ("MRPC.tsv", "MNLI-m.tsv", ...).

`write_submission` drops the padding examples that fill the last batch and
writes through `bert_tf.io_utils.atomic_write`: a file appears only once it
is complete. The original's test_results.tsv, which GlueData writes beside
it, is bert_tf/data/test_results.py's.
"""

import numpy as np

from bert_tf import io_utils
from bert_tf.data.glue.processors import get_processor
from bert_tf.data.test_results import real_rows


def _submission_index(example):
    """The GLUE test index at the end of a test example's guid."""
    index = example.guid.rpartition("-")[2]
    if not index.isdigit():
        raise ValueError(f"guid {example.guid!r} does not end in a test index")
    return int(index)


def _submission_value(processor, prediction):
    """A prediction as GLUE's submission file spells it."""
    values = np.asarray(prediction)
    if processor.is_regression:
        if values.size != 1:
            raise ValueError(f"{processor.name} predictions are single scores, got "
                             f"shape {values.shape}")
        # GLUE scores similarity on [0, 5]; a regression head may overshoot it.
        return f"{min(max(float(values.reshape(())), 0.0), 5.0):.3f}"
    labels = processor.get_labels()
    if values.ndim == 1 and values.size == len(labels):
        class_id = int(values.argmax())
    elif values.ndim == 0 and np.issubdtype(values.dtype, np.integer):
        class_id = int(values)
    else:
        raise ValueError(f"a {processor.name} prediction is a class id or {len(labels)} "
                         f"class scores, got {values!r}")
    if not 0 <= class_id < len(labels):
        raise ValueError(f"class id {class_id} is out of range for {processor.name}")
    return labels[class_id]


def write_submission(path, task_name, examples, predictions, is_real_example=None):
    """Writes a GLUE submission file: "index<TAB>prediction" lines under a header.

    Args:
      path: The output file; its name should be the processor's
        `submission_file(split)`, such as "MNLI-m.tsv".
      task_name: A name get_processor accepts.
      examples: The split's test InputExamples, in prediction order; their
        guids end in the test index.
      predictions: One per example (plus padding, see is_real_example): a
        class id or a row of class scores (argmax is taken); for STS-B, a
        score, clipped to [0, 5].
      is_real_example: Optional 0/1 mask over predictions; padding (0) is
        dropped before predictions are matched with examples.

    Returns:
      The number of predictions written.

    Raises:
      ValueError: Counts differ, a guid has no index or a prediction does not
        fit the task; `path` is left as it was.
    """
    processor = get_processor(task_name)
    rows = real_rows(predictions, is_real_example)
    if len(rows) != len(examples):
        raise ValueError(f"{len(rows)} real predictions for {len(examples)} examples")
    with io_utils.atomic_write(path) as f:
        f.write("index\tprediction\n")
        for example, prediction in zip(examples, rows, strict=True):
            index = _submission_index(example)
            f.write(f"{index}\t{_submission_value(processor, prediction)}\n")
    return len(rows)
