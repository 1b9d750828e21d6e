"""The TPU's rules, checked on the CPU (bert_tf/runtime/tpu_rules.py).

Every script that trains or predicts runs a tiny job with BERT_TF_TPU_RULES=1 and
--jit_compile=true, as a TPU would run it: each train, eval and predict step
XLA-compiled, each input checked for static shapes and TPU types. The five jobs
start together and the tests read their results.

The rules must also catch what breaks them: a string op in the train, the eval or
the predict step fails to compile, and an input with a dynamic batch or an int64
feature is refused before the first step, while the same steps and inputs run
without the rules.
"""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import configs
from bert_tf.model.config import BertConfig
from bert_tf.runtime import run_setup, tpu_rules
from bert_tf.tasks import ClassificationTask
from bert_tf.training import training_loop
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
STEPS_LINE = "XLA for the train, eval and predict steps: on (the TPU's rules)"
SEQ = 16


def _write_ner(path, rng, sentences):
    tags = {"he": "B-PER", "his": "B-LOC", "first": "I-LOC", "the": "O", "of": "O"}
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(sentences):
            for word in rng.choices(list(tags), k=rng.randint(2, 8)):
                f.write(f"{word} {tags[word]} 0\n")
            f.write("\n")


def _write_squad(path, rng, paragraphs):
    words = ["the", "of", "he", "first", "was", "in", "and", "she"]
    data = []
    for p in range(paragraphs):
        context = " ".join(rng.choice(words) for _ in range(30)) + " his end."
        qas = [{"id": f"p{p}q{q}", "question": "where is it?",
                "answers": [{"text": "his", "answer_start": context.index(" his ") + 1}]}
               for q in range(2)]
        data.append({"context": context, "qas": qas})
    path.write_text(json.dumps({"version": "1.1", "data": [
        {"title": "made up", "paragraphs": data}]}), encoding="utf-8")
    return str(path)


def _commands(tmp, checkpoint):
    """The five scripts' tiny jobs, each training (where it can), evaluating and predicting;
    and one that breaks the rules."""
    config = os.path.join(os.path.dirname(checkpoint), "bert_config.json")
    model = [f"--init_checkpoint={checkpoint}", f"--bert_config_file={config}",
             f"--vocab_file={VOCAB}"]
    rng = random.Random(0)
    ner = tmp / "ner"
    ner.mkdir()
    for split, sentences in (("train", 24), ("dev", 7), ("test", 5)):
        _write_ner(ner / f"{split}.txt", rng, sentences)
    squad = tmp / "squad.json"
    _write_squad(squad, rng, 5)
    lines = tmp / "lines.txt"
    lines.write_text("he was in his first\nthe first of ||| she and he\nhis\n", encoding="utf-8")
    common = ["--jit_compile=true", "--seed=1", "--learning_rate=1e-3"]
    return {
        "run_pretraining.py": [
            f"--input_file={os.path.join(FIXTURES, 'pretraining_original.tfrecord')}",
            f"--output_dir={tmp / 'pretraining'}", "--do_train", "--do_eval",
            f"--bert_config_file={config}", f"--init_checkpoint={checkpoint}",
            "--train_batch_size=4",
            "--eval_batch_size=4", "--max_seq_length=32", "--max_predictions_per_seq=5",
            "--num_train_steps=2", "--max_eval_steps=2", *common],
        "run_classifier.py": [
            "--task_name=MRPC", f"--data_dir={os.path.join(FIXTURES, 'glue', 'MRPC')}",
            "--do_train", "--do_eval", "--do_predict", f"--output_dir={tmp / 'classifier'}",
            "--max_seq_length=32", "--train_batch_size=2", "--eval_batch_size=3",
            "--predict_batch_size=3", "--num_train_epochs=1", *model, *common],
        "run_ner.py": [
            f"--data_dir={ner}", "--do_train", "--do_eval", "--do_predict",
            f"--output_dir={tmp / 'ner_out'}", f"--max_seq_length={SEQ}",
            "--train_batch_size=8", "--eval_batch_size=4", "--predict_batch_size=3",
            "--num_train_epochs=1", *model, *common],
        "run_squad.py": [
            f"--train_file={squad}", f"--predict_file={squad}", "--do_train", "--do_predict",
            "--do_eval", f"--output_dir={tmp / 'squad_out'}", "--max_seq_length=32",
            "--doc_stride=8", "--max_query_length=6", "--train_batch_size=4",
            "--predict_batch_size=3", "--num_train_epochs=1",
            # The original's step count (questions): 2 steps, as the other jobs take.
            "--epoch_unit=questions", *model, *common],
        # The same classifier job with batches cut to their longest example: shapes that
        # vary from batch to batch, which the rules refuse at once.
        "run_classifier.py --dynamic_padding": [
            "--task_name=MRPC", f"--data_dir={os.path.join(FIXTURES, 'glue', 'MRPC')}",
            "--do_train", f"--output_dir={tmp / 'dynamic'}", "--max_seq_length=32",
            "--train_batch_size=2", "--num_train_epochs=1", "--dynamic_padding", *model,
            *common],
        "extract_features.py": [
            f"--input_file={lines}", f"--output_file={tmp / 'features.jsonl'}",
            f"--init_checkpoint={checkpoint}", f"--vocab_file={VOCAB}",
            f"--max_seq_length={SEQ}", "--layers=-1,-2", "--batch_size=2",
            "--jit_compile=true"],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Starts the jobs at once; (tmp folder, {job: (returncode, stderr)})."""
    tmp = tmp_path_factory.mktemp("tpu_rules")
    # Over pretraining_vocab.txt, the vocab of the original's records that
    # run_pretraining.py reads.
    checkpoint, _ = tiny_google_checkpoint(str(tmp / "model"), VOCAB)
    env = {**os.environ, tpu_rules.ENV: "1", "CUDA_VISIBLE_DEVICES": "-1"}
    env.pop("TF_CONFIG", None)
    started = {job: subprocess.Popen(
        [sys.executable, os.path.join(ROOT, job.split()[0]), *flag_args], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for job, flag_args in _commands(tmp, checkpoint).items()}
    results = {}
    for script, process in started.items():
        _, stderr = process.communicate(timeout=600)
        results[script] = (process.returncode, stderr)
    return tmp, results


# What each job leaves when its train, eval and predict steps all ran.
OUTPUTS = {
    "run_pretraining.py": ["pretraining/ckpt-2.index", "pretraining/eval_results.txt"],
    "run_classifier.py": ["classifier/ckpt-1.index", "classifier/eval_results.txt",
                          "classifier/test_results.tsv"],
    "run_ner.py": ["ner_out/ckpt-3.index", "ner_out/eval_results.txt",
                   "ner_out/test_predictions.txt"],
    "run_squad.py": ["squad_out/ckpt-2.index", "squad_out/predictions.json",
                     "squad_out/eval_results.txt"],
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(OUTPUTS))
def test_training_scripts_run_under_the_tpu_rules(runs, script):
    tmp, results = runs
    returncode, stderr = results[script]
    assert returncode == 0, stderr[-3000:]
    assert STEPS_LINE in stderr
    for path in OUTPUTS[script]:
        assert (tmp / path).exists(), path


@pytest.mark.slow
def test_batches_of_varying_shape_are_refused_in_one_line(runs):
    tmp, results = runs
    returncode, stderr = results["run_classifier.py --dynamic_padding"]
    assert returncode == 1
    assert stderr.splitlines()[-1] == (
        "run_classifier.py: error: --dynamic_padding is for CPUs and GPUs: a TPU program needs "
        "one static sequence length")
    assert not (tmp / "dynamic").exists()


@pytest.mark.slow
def test_feature_extraction_runs_under_the_tpu_rules(runs):
    tmp, results = runs
    returncode, stderr = results["extract_features.py"]
    assert returncode == 0, stderr[-3000:]
    assert "XLA for the forward pass: on (the TPU's rules)" in stderr
    assert len((tmp / "features.jsonl").read_text(encoding="utf-8").splitlines()) == 3


# What the rules must catch, in-process on a tiny classifier.


def _examples(n, label_dtype=np.int32):
    rng = np.random.default_rng(0)
    return {"input_ids": rng.integers(5, 50, size=(n, SEQ)).astype(np.int32),
            "input_mask": np.ones((n, SEQ), np.int32),
            "segment_ids": np.zeros((n, SEQ), np.int32),
            "label_ids": rng.integers(0, 2, size=(n, 1)).astype(label_dtype),
            "is_real_example": np.ones((n, 1), np.int32)}


def _dataset_fn(examples, batch_size, repeat, drop_remainder=True):
    def fn(input_context):
        dataset = tf.data.Dataset.from_tensor_slices(examples)
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(batch_size, drop_remainder=drop_remainder)
    return fn


class StreamingClassifier(ClassificationTask):
    """A classifier with a streaming loss, so that Trainer.evaluate has an eval step.

    Fine-tuning tasks stream no metrics (they are scored on their
    predictions); pretraining's do, and its eval step must obey the rules too.
    """

    def create_metrics(self):
        return {"eval_loss": tf.keras.metrics.Mean()}

    def update_metrics(self, metrics, features, outputs):
        metrics["eval_loss"].update_state(self.losses(features, outputs)["loss"])


class StringOpIn(StreamingClassifier):
    """A classifier with a string op in one step: "train", "eval" or "predict"."""

    def __init__(self, step):
        super().__init__(2)
        self.step = step

    @staticmethod
    def _through_strings(values):
        # Formats the values as text and parses them back: the same numbers, by way of a
        # string tensor, which no TPU (nor XLA) can hold.
        return tf.strings.to_number(tf.strings.as_string(values), tf.float32)

    def losses(self, features, outputs):
        losses = super().losses(features, outputs)
        if self.step == "train":
            losses["loss"] += 0.0 * tf.reduce_sum(self._through_strings(outputs["logits"]))
        return losses

    def update_metrics(self, metrics, features, outputs):
        if self.step == "eval":
            outputs = {"logits": self._through_strings(outputs["logits"])}
        super().update_metrics(metrics, features, outputs)

    def predictions(self, features, outputs):
        if self.step == "predict":
            outputs = {"logits": self._through_strings(outputs["logits"])}
        return super().predictions(features, outputs)


def _trainer(task, output_dir):
    config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2)
    runtime = run_setup.Runtime.resolve(tf.distribute.get_strategy(), jit_compile=False)
    return training_loop.Trainer(task, config, runtime, configs.TrainingConfig(
        str(output_dir), num_train_steps=2,
        cadence=configs.CadenceSettings(iterations_per_loop=1, save_checkpoints_steps=1000)))


def _run_step(trainer, step, examples, **batching):
    if step == "train":
        trainer.train(_dataset_fn(examples, 4, repeat=True, **batching), 1, 4)
    elif step == "eval":
        trainer.evaluate(_dataset_fn(examples, 4, repeat=False, **batching))
    else:
        trainer.inference.predict(_dataset_fn(examples, 4, repeat=False, **batching))


@pytest.mark.parametrize("step", ["train", "eval", "predict"])
def test_a_string_op_in_a_step_fails_under_the_rules_only(step, tmp_path, monkeypatch):
    examples = _examples(8)
    # Without the rules (--jit_compile=false) the string op runs on the CPU ...
    _run_step(_trainer(StringOpIn(step), tmp_path / "plain"), step, examples)
    # ... with them the step is compiled, and XLA refuses it.
    monkeypatch.setenv(tpu_rules.ENV, "1")
    trainer = _trainer(StringOpIn(step), tmp_path / "rules")
    assert trainer.tpu_rules
    with pytest.raises(tf.errors.InvalidArgumentError, match="(?i)string|AsString"):
        _run_step(trainer, step, examples)


@pytest.mark.parametrize("step", ["train", "eval", "predict"])
def test_a_dynamic_batch_is_refused_under_the_rules_only(step, tmp_path, monkeypatch):
    examples = _examples(10)  # batches of 4, 4 and 2 without drop_remainder
    _run_step(_trainer(StreamingClassifier(2), tmp_path / "plain"), step, examples,
              drop_remainder=False)
    monkeypatch.setenv(tpu_rules.ENV, "1")
    trainer = _trainer(StreamingClassifier(2), tmp_path / "rules")
    with pytest.raises(tpu_rules.TpuRuleError, match=r"feature '\w+' has shape \(None, "):
        _run_step(trainer, step, examples, drop_remainder=False)


def test_an_int64_feature_is_refused_under_the_rules(tmp_path, monkeypatch):
    monkeypatch.setenv(tpu_rules.ENV, "1")
    trainer = _trainer(StreamingClassifier(2), tmp_path)
    with pytest.raises(tpu_rules.TpuRuleError, match="'label_ids' is int64"):
        _run_step(trainer, "eval", _examples(8, label_dtype=np.int64))


def test_the_rules_hold_under_tpu_strategy_only_by_default(monkeypatch):
    monkeypatch.delenv(tpu_rules.ENV, raising=False)
    assert not tpu_rules.enforced(tf.distribute.get_strategy())
    monkeypatch.setenv(tpu_rules.ENV, "1")
    assert tpu_rules.enforced(tf.distribute.get_strategy())
