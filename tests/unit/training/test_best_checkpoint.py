"""Evaluation during training: the best model kept, used, and early stopping, from Python.

Runs fine-tune a tiny BERT (2 layers, hidden 32) on the MRPC fixture (two
training examples, batches of two: one step per epoch) through
finetune.run with eval_every_steps. The data's main metric is scripted
(ScriptedData), so that which step is best, and when no gain comes, is
known in advance; everything else is the real run.
"""

import json
import logging
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)

from bert_tf import configs, finetune
from bert_tf.data import conll, glue, squad, swag
from bert_tf.tasks import ClassificationTask
from bert_tf.training import best_checkpoint, run_dir
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
MRPC = os.path.join(FIXTURES, "glue", "MRPC")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")


class ScriptedData(glue.GlueData):
    """MRPC data whose main metric takes given values, one per score() call.

    Once the values are used up, score() is the real one. Each call's
    predictions are kept, to compare the models that made them.
    """

    def __init__(self, values, tokenizer, data_dir=MRPC):
        super().__init__(glue.get_processor("MRPC"), tokenizer, 32, data_dir=data_dir)
        self.values = list(values)
        self.scored = []

    def score(self, predictions, references):
        metrics = super().score(predictions, references)
        self.scored.append(np.array(predictions["predictions"]))
        if self.values:
            metrics[self.main_metric] = self.values.pop(0)
        return metrics


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_google_checkpoint(str(tmp_path_factory.mktemp("google")), VOCAB)[0]


def fine_tune(checkpoint, output_dir, values, do_eval=False, export_dir=None, do_train=True,
              data_dir=MRPC, **settings):
    """finetune.run on MRPC (or a copy in data_dir) with ScriptedData; returns (data,
    FinetuneResult).

    settings: FinetuneConfig's own settings (epochs, evaluation during training).
    """
    config = configs.FinetuneConfig(
        run=configs.RunSettings(output_dir=str(output_dir), do_train=do_train, do_eval=do_eval),
        model=configs.ModelSettings(init_checkpoint=checkpoint, max_seq_length=32),
        batches=configs.BatchSizes(train_batch_size=2, eval_batch_size=2),
        predict_batch_size=2, optimizer=configs.OptimizerSettings(learning_rate=1e-3),
        runtime=configs.RuntimeSettings(jit_compile=False, seed=1, mixed_precision="float32"),
        export=configs.ExportSettings(export_dir=export_dir), **settings)
    files, runtime = finetune.start(config)
    processor = glue.get_processor("MRPC")
    task = ClassificationTask(2, sentence_pairs=True, max_seq_length=config.model.max_seq_length,
                              label_list=processor.get_labels())
    data = ScriptedData(values, files.tokenizer(), data_dir)
    return data, finetune.run(config, task, data, files, runtime)


def history_steps(output_dir):
    return [row["step"] for row in best_checkpoint.read_history(str(output_dir))]


def test_the_best_model_is_kept_and_evaluated_predicted_and_exported(checkpoint, tmp_path):
    output_dir, export_dir = tmp_path / "output", tmp_path / "export"
    # 6 steps, evaluated at 2, 4 and 6: the best is step 4's.
    scripted = [0.2, 0.9, 0.4]
    data, result = fine_tune(checkpoint, output_dir, scripted, num_train_epochs=6.0,
                             eval_every_steps=2, do_eval=True, do_predict=True,
                             export_dir=str(export_dir))
    assert result.trainer.global_step == 6
    history = best_checkpoint.read_history(str(output_dir))
    assert [row["step"] for row in history] == [2, 4, 6]
    assert [row["f1"] for row in history] == scripted
    assert {"eval_loss", "eval_accuracy"} <= set(history[0])
    best = json.loads((output_dir / "best" / "best.json").read_text())
    assert best["step"] == history[int(np.argmax([row["f1"] for row in history]))]["step"] == 4
    assert (best["metric"], best["value"]) == ("f1", 0.9)
    # The final evaluation scored step 4's model, not step 6's, and says so.
    at_step_4, at_step_6, final = data.scored[1], data.scored[2], data.scored[3]
    np.testing.assert_allclose(final, at_step_4, atol=1e-6)
    assert not np.allclose(final, at_step_6, atol=1e-4)
    with open(output_dir / "eval_results.txt", encoding="utf-8") as f:
        written = dict(line.strip().split(" = ") for line in f)
    assert written["global_step"] == "4"
    # The export is step 4's model: it gives the dev predictions scored at step 4 ...
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    dev = glue.get_processor("MRPC").get_dev_examples(MRPC)
    exported = serve(text_a=tf.constant([e.text_a for e in dev]),
                     text_b=tf.constant([e.text_b for e in dev]))["probabilities"].numpy()
    np.testing.assert_allclose(exported, at_step_4, atol=1e-5)
    # ... and the test predictions were made by the same model.
    test = glue.get_processor("MRPC").get_test_examples(MRPC)
    exported = serve(text_a=tf.constant([e.text_a for e in test]),
                     text_b=tf.constant([e.text_b for e in test]))["probabilities"].numpy()
    np.testing.assert_allclose(result.predictions["test"]["predictions"], exported, atol=1e-5)
    # TensorBoard's eval summaries hold the dev metric at each evaluation, in one file.
    events, = (output_dir / "eval").iterdir()
    summaries = [(event.step, value.tag) for event in tf.compat.v1.train.summary_iterator(
        str(events)) for value in event.summary.value]
    assert [step for step, tag in summaries if tag == "f1"] == [2, 4, 6]
    # The training checkpoints go on to the last step, for training on.
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-6")


@pytest.mark.slow
def test_early_stopping_stops_stays_stopped_and_a_resumed_run_keeps_the_best(
        checkpoint, tmp_path, caplog):
    output_dir = tmp_path / "output"
    # A copy of MRPC, whose dev set changes at the end.
    mrpc = tmp_path / "MRPC"
    shutil.copytree(MRPC, mrpc)
    caplog.set_level(logging.INFO, logger="absl")
    # Evaluated every step, the metric never gains after step 1: patience 2 stops at 3.
    stopping = {"num_train_epochs": 8.0, "eval_every_steps": 1, "early_stopping_patience": 2,
                "data_dir": str(mrpc)}
    _, result = fine_tune(checkpoint, output_dir, [0.5] * 8, **stopping)
    assert result.trainer.global_step == 3
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-3")
    assert history_steps(output_dir) == [1, 2, 3]
    assert best_checkpoint.read_best(str(output_dir)).step == 1
    stopped = "Stopped early at step 3: no gain in 2 evaluations, best at step 1."
    assert stopped in caplog.messages
    # The same command again: stopped it stays, with nothing trained or evaluated.
    caplog.clear()
    data, result = fine_tune(checkpoint, output_dir, [0.5] * 8, **stopping)
    assert result.trainer.global_step == 3 and data.scored == []
    assert stopped in caplog.messages
    # Without early stopping it trains on, and the best so far is read back: step 4's
    # 0.4 does not beat step 1's 0.5; step 5's 0.9 does.
    _, result = fine_tune(checkpoint, output_dir, [0.4, 0.9, 0.1, 0.1, 0.1],
                          num_train_epochs=8.0, eval_every_steps=1, data_dir=str(mrpc))
    assert result.trainer.global_step == 8
    assert history_steps(output_dir) == list(range(1, 9))
    assert best_checkpoint.read_best(str(output_dir)).step == 5
    # Going on with another dev set would compare its scores with the first set's best.
    with open(mrpc / "dev.tsv", "a", encoding="utf-8") as f:
        f.write("1\t7\t8\tthe man\tthe dog\n")
    with pytest.raises(run_dir.RunDirError) as error:
        fine_tune(checkpoint, output_dir, [], num_train_epochs=9.0, eval_every_steps=1,
                  data_dir=str(mrpc))
    assert str(error.value).startswith(f"{output_dir} holds a run with other eval data "
                                       "settings (dev_data.")
    assert history_steps(output_dir) == list(range(1, 9))
    # A best model the history says was kept is used, or its loss refused: never replaced
    # by the newest checkpoint without a word.
    shutil.copy(os.path.join(MRPC, "dev.tsv"), mrpc / "dev.tsv")
    (output_dir / "best" / "best.json").write_text("{")
    for do_train in (False, True):
        with pytest.raises(best_checkpoint.BestModelError, match=(
                f"^{output_dir / 'best'} is damaged \\(best.json: JSONDecodeError")):
            fine_tune(checkpoint, output_dir, [], do_train=do_train, do_eval=True,
                      num_train_epochs=8.0, eval_every_steps=1 if do_train else 0,
                      data_dir=str(mrpc))
    shutil.rmtree(output_dir / "best")
    with pytest.raises(best_checkpoint.BestModelError) as error:
        fine_tune(checkpoint, output_dir, [], do_train=False, do_eval=True, data_dir=str(mrpc))
    assert str(error.value) == (
        f"{output_dir / 'best'} is missing, though {output_dir / 'eval_history.tsv'} records "
        "the evaluations it was chosen by: restore it, or delete that history to use the "
        "newest checkpoint instead, or give a new --output_dir")


def test_settings_that_cannot_work_are_refused(checkpoint, tmp_path):
    with pytest.raises(finetune.FinetuneError, match="--early_stopping_patience counts .* "
                       "give --eval_every_steps"):
        fine_tune(checkpoint, tmp_path, [], early_stopping_patience=2)
    with pytest.raises(finetune.FinetuneError, match="--eval_every_steps evaluates during "
                       "training: add --do_train"):
        finetune.check_config(configs.FinetuneConfig(
            run=configs.RunSettings(output_dir=str(tmp_path), do_eval=True),
            eval_every_steps=2))


@pytest.mark.parametrize("task_name, metric", [
    ("CoLA", "mcc"), ("MRPC", "f1"), ("QQP", "f1"), ("STS-B", "pearson"),
    ("SST-2", "eval_accuracy"), ("MNLI", "eval_accuracy")])
def test_each_glue_tasks_main_metric_is_one_of_its_scores(task_name, metric):
    processor = glue.get_processor(task_name)
    data = glue.GlueData(processor, None, 128)
    assert data.main_metric == metric
    labels = np.array([0.5, 2.0, 4.5]) if processor.is_regression else np.array([0, 1, 1])
    predictions = (np.array([1.0, 2.5, 4.0]) if processor.is_regression
                   else np.full((3, len(processor.get_labels())), 1 / 3))
    assert metric in data.score({"predictions": predictions},
                                glue.GlueReferences(labels, None, "dev"))


def test_each_familys_main_metric():
    assert glue.GlueData(glue.get_processor("SST-2"), None, 128).main_metric == "eval_accuracy"
    assert squad.SquadData(squad.SquadSettings(128), None).main_metric == "f1"
    assert conll.ConllData(conll.ConllSettings(32), None).main_metric == "eval_f1"
    assert swag.SwagData(swag.SwagSettings(32, 4), None).main_metric == "eval_accuracy"


def test_each_familys_dev_file_is_recorded_for_evaluation_during_training(tmp_path):
    # A resumed run that scores another dev set would compare its scores with the first
    # set's best: each family names its dev file by its fingerprint.
    (tmp_path / "dev.txt").write_text("EU B-ORG\n", encoding="utf-8")
    (tmp_path / "val.csv").write_text("header\n", encoding="utf-8")
    (tmp_path / "dev.json").write_text("{}", encoding="utf-8")
    families = {
        "dev.txt": conll.ConllData(conll.ConllSettings(32), None, data_dir=str(tmp_path)),
        "val.csv": swag.SwagData(swag.SwagSettings(32, 4), None, data_dir=str(tmp_path)),
        "dev.json": squad.SquadData(squad.SquadSettings(128), None,
                                    predict_file=str(tmp_path / "dev.json")),
    }
    for name, data in families.items():
        recorded = data.eval_settings()
        assert list(recorded["dev_data"]) == [str(tmp_path / name)]
        with open(tmp_path / name, "a", encoding="utf-8") as f:
            f.write("\n")
        assert data.eval_settings() != recorded, name
