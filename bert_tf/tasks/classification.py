"""Sentence (pair) classification or regression on the pooled [CLS] output (GLUE)."""

import os

import numpy as np
import tensorflow as tf

from bert_tf import glue, labelled_data
from bert_tf.model.heads import ClassifierHead
from bert_tf.records import record_specs
from bert_tf.serving import served_model
from bert_tf.tasks.base import Task, encoder_inputs, hf_labels

keras = tf.keras

_CLASSIFIER = ClassifierHead.checkpoint_key


class ClassificationTask(Task):
    """Sentence (pair) classification, or regression (STS-B).

    Features: input_ids, input_mask, segment_ids [batch, seq]; label_ids
    [batch, 1] (int32, or float32 for regression); is_real_example [batch, 1]
    (0 for the padding examples that make the last eval batch full).
    """

    serving_tool = "predict_text.py"

    def __init__(self, num_labels, is_regression=False, glue_task=None, sentence_pairs=False,
                 max_seq_length=128, label_list=None):
        """Describes the task.

        Args:
          num_labels: Classes (ignored for regression, which has one output).
          is_regression: Squared-error loss and a score instead of classes.
          glue_task: The GLUE task name whose metrics score() reports (f1,
            mcc, pearson, ...), or None for data of one's own, which
            labelled_data scores and writes.
          sentence_pairs: Whether the exported model's default signature
            takes pairs.
          max_seq_length: The records' sequence length.
          label_list: The label strings in id order, for a converted
            checkpoint's id2label (hf_task_config) and the export's label
            names; None: unnamed.
        """
        self.num_labels = 1 if is_regression else num_labels
        self.label_list = None if is_regression or label_list is None else list(label_list)
        self.is_regression = is_regression
        self.glue_task = glue_task
        self.sentence_pairs = sentence_pairs
        self.max_seq_length = max_seq_length

    def feature_specs(self):
        """run_classifier.py's records (the original's)."""
        return record_specs.classification_features(self.max_seq_length,
                                                         self.is_regression)

    def hf_task_config(self):
        """BertForSequenceClassification, with the labels' names when known."""
        config = {"architectures": ["BertForSequenceClassification"]}
        if self.is_regression:
            config["problem_type"] = "regression"
        elif self.label_list:
            config.update(hf_labels(self.label_list))
        return config

    def create_heads(self, encoder):
        """Returns {"classifier": ClassifierHead}."""
        return {_CLASSIFIER: ClassifierHead(encoder.config, self.num_labels)}

    def forward(self, encoder, heads, features, training):
        """Returns {"logits": float32 [batch, num_labels]}."""
        pooled = encoder(encoder_inputs(features), training=training)["pooled_output"]
        return {"logits": heads[_CLASSIFIER](pooled, training=training)}

    def losses(self, features, outputs):
        """Returns {"loss": mean over real examples} of the cross-entropy, or of
        the squared error for regression."""
        labels = features["label_ids"][:, 0]
        if self.is_regression:
            per_example = tf.square(outputs["logits"][:, 0] - tf.cast(labels, tf.float32))
        else:
            per_example = keras.losses.sparse_categorical_crossentropy(
                labels, outputs["logits"], from_logits=True)
        weights = tf.cast(features["is_real_example"][:, 0], tf.float32)
        return {"loss": tf.reduce_sum(per_example * weights)
                / tf.maximum(tf.reduce_sum(weights), 1.0)}

    def predictions(self, features, outputs):
        """Returns predictions: probabilities [batch, num_labels], or for
        regression the score [batch]; and is_real_example [batch]."""
        if self.is_regression:
            values = outputs["logits"][:, 0]
        else:
            values = tf.nn.softmax(outputs["logits"], axis=-1)
        return {"predictions": values, "is_real_example": features["is_real_example"][:, 0]}

    def score(self, predictions, references):
        """eval_loss, eval_accuracy and the GLUE task's metrics.

        Args:
          predictions: {"predictions": ...} over the real examples, in order.
          references: A glue.GlueReferences with their label_ids; without
            glue_task, a labelled_data.LabelledReferences.

        Returns:
          glue.evaluation_metrics' dict, or labelled_data.score's.
        """
        if self.glue_task is None:
            return labelled_data.score(predictions["predictions"], references)
        return glue.evaluation_metrics(self.glue_task, predictions["predictions"],
                                       np.asarray(references.label_ids), self.is_regression)

    @property
    def main_metric(self):
        """The metric GLUE ranks the task by first: mcc for CoLA, f1 for MRPC and QQP,
        pearson for STS-B, eval_accuracy for the others; without a GLUE task,
        eval_accuracy (pearson for regression)."""
        if self.glue_task is None:
            return "pearson" if self.is_regression else "eval_accuracy"
        return glue.main_metric(self.glue_task)

    def write_outputs(self, predictions, references, output_dir):
        """The original's test_results.tsv and the GLUE submission file of a split.

        test_results.tsv holds one line of class probabilities (or the score)
        per example; a task with several test splits (MNLI) writes
        test_results_<split>.tsv for each. The submission file is named by
        the GLUE task's processor (e.g. MNLI-m.tsv).

        Without glue_task: test_results.tsv and the predictions file with
        the labels' names (labelled_data.write_outputs).

        Args:
          predictions: {"predictions": ...} over the real examples, in order.
          references: A glue.GlueReferences with their examples and split;
            without glue_task, a labelled_data.LabelledReferences.
          output_dir: The folder to write them in.
        """
        if self.glue_task is None:
            labelled_data.write_outputs(predictions["predictions"], references, output_dir)
            return
        processor = glue.get_processor(self.glue_task)
        suffix = "" if len(processor.predict_splits) == 1 else f"_{references.split}"
        glue.write_test_results(os.path.join(output_dir, f"test_results{suffix}.tsv"),
                                predictions["predictions"])
        glue.write_submission(os.path.join(output_dir, processor.submission_file(references.split)),
                              processor.name, references.examples, predictions["predictions"])

    def serving_module(self, encoder, heads, vocab_file, do_lower_case, max_seq_length,
                       shapes="dynamic", jit_compile=False):
        """A ClassificationServingModule with "single", "pair" and "serving_default"."""
        module = ClassificationServingModule(encoder, heads[_CLASSIFIER], vocab_file, do_lower_case,
                                         max_seq_length, self.is_regression, shapes,
                                             jit_compile, self.label_list)
        signatures = {"single": module.single, "pair": module.pair,
                      "serving_default": module.pair if self.sentence_pairs else module.single}
        return module, signatures


class ClassificationServingModule(tf.Module):
    """Classifies raw text: tokenizes in the graph, runs the encoder and the head.

    The tokenizer (text_ops.BertTextTokenizer) gives the same ids as the
    Python FullTokenizer, so served and fine-tuned inputs agree.

    Signatures:
      single: text_a [batch] string -> probabilities [batch, num_labels],
        predictions [batch] (int64 class ids; for regression: the score),
        labels [batch] string (the predicted label's name; only when the
        labels' names were given), truncated [batch] bool (the input had
        more word pieces than fit max_seq_length, and was cut as in
        training).
      pair: text_a, text_b [batch] strings -> the same.
    """

    def __init__(self, encoder, classifier_head, vocab_file, do_lower_case, max_seq_length,
                 is_regression=False, shapes="dynamic", jit_compile=False, label_list=None):
        """Wraps a trained encoder and head.

        Args:
          encoder: A BertModel.
          classifier_head: Its heads.ClassifierHead.
          vocab_file: The vocab the model was trained with.
          do_lower_case: As in training.
          max_seq_length: As in training.
          is_regression: Whether the head outputs a score (STS-B).
          shapes: One of served_model.SHAPES.
          jit_compile: Whether the model runs XLA-compiled (served_model.ServedModel).
          label_list: The labels' names in id order, which the "labels" output
            gives; None: no such output.
        """
        super().__init__(name="bert_classifier")
        # Imported here, not at the top: text_ops loads tensorflow_text, about
        # 116 MB of resident memory that only an export needs, not training.
        from bert_tf.text import text_ops

        self.encoder = encoder
        self.classifier_head = classifier_head
        self.tokenizer = text_ops.BertTextTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.packer = text_ops.BertPacker(
            max_seq_length, self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"])
        self.model = served_model.ServedModel(self._logits, shapes, jit_compile)
        self.is_regression = is_regression
        self.label_names = None if label_list is None else tf.constant(list(label_list))

    def _logits(self, features):
        """Packed inputs -> {"logits": [batch, num_labels]}."""
        pooled = self.encoder(features, training=False, pooled_only=True)["pooled_output"]
        return {"logits": self.classifier_head(pooled, training=False)}

    def _classify(self, segments):
        """Tokenized segments -> the output dict."""
        logits = self.model(self.packer(*segments))["logits"]
        # [CLS] and a [SEP] after each segment take places too.
        pieces = tf.add_n([segment.row_lengths() for segment in segments])
        truncated = pieces + len(segments) + 1 > self.packer.max_seq_length
        if self.is_regression:
            return {"probabilities": logits, "predictions": logits[:, 0],
                    "truncated": truncated}
        probabilities = tf.nn.softmax(logits, axis=-1)
        outputs = {"probabilities": probabilities,
                   "predictions": tf.argmax(probabilities, axis=-1), "truncated": truncated}
        if self.label_names is not None:
            outputs["labels"] = tf.gather(self.label_names, outputs["predictions"])
        return outputs

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
    def single(self, text_a):
        """Classifies single sentences."""
        return self._classify([self.tokenizer.tokenize(text_a)])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a"),
                                  tf.TensorSpec([None], tf.string, name="text_b")])
    def pair(self, text_a, text_b):
        """Classifies sentence pairs."""
        return self._classify([self.tokenizer.tokenize(text_a), self.tokenizer.tokenize(text_b)])
