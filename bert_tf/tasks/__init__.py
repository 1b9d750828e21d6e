"""Tasks: the model side of each training family: records, heads, loss, predictions.

base.py defines the Task protocol that training_loop.Trainer, checkpoints.py,
export.py and finetune.py rely on; each other module is one family. What a
family's predictions are scored against, and its output files, belong to its
data (data/protocol.py, the dataset packages); its raw-text export
belongs to serving/. A task imports neither.
"""

from bert_tf.tasks.base import Task
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.multi_label import MultiLabelTask
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tasks.question_answering import QuestionAnsweringTask
from bert_tf.tasks.tagging import TaggingTask

__all__ = ["ClassificationTask", "MultiLabelTask", "MultipleChoiceTask", "PretrainingTask",
           "QuestionAnsweringTask", "TaggingTask", "Task"]
