"""Which serving module exports which task: the one table of the task families' exports.

Each family's raw-text export is a module of this folder (classification.py,
multi_label.py, tagging.py, question_answering.py, multiple_choice.py) with two public names:

  serving_module(task, encoder, heads, vocab_file, do_lower_case,
                 max_seq_length, shapes, jit_compile)
                    the tf.Module that serves the trained task on raw text,
                    and its signatures, for export.save_model;
  TOOL              the script that runs the export on a file (e.g.
                    "predict_text.py"), which the export records so that a
                    tool given another task's export can name the right
                    one; None without one.

A new family adds its module and one line to SERVING_MODULES; a task
without a line (pretraining) has no raw-text export. The tasks know nothing
of serving: this table points from serving to them.
"""

from bert_tf.serving import (
    classification,
    multi_label,
    multiple_choice,
    question_answering,
    tagging,
)
from bert_tf.tasks import (
    ClassificationTask,
    MultiLabelTask,
    MultipleChoiceTask,
    QuestionAnsweringTask,
    TaggingTask,
)

# {task class: the module that serves it}. A subclass of a task is served
# by its own line if it has one, else by its nearest base class's.
SERVING_MODULES = {
    ClassificationTask: classification,
    MultiLabelTask: multi_label,
    MultipleChoiceTask: multiple_choice,
    QuestionAnsweringTask: question_answering,
    TaggingTask: tagging,
}


def for_task(task):
    """The serving module of a task's family.

    Args:
      task: A tasks.Task.

    Returns:
      The module (its serving_module() and TOOL).

    Raises:
      NotImplementedError: for a task without a raw-text export.
    """
    for task_type in type(task).__mro__:
        if task_type in SERVING_MODULES:
            return SERVING_MODULES[task_type]
    raise NotImplementedError(f"{type(task).__name__} has no raw-text export")
