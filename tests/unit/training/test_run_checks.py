"""The shared checks of a run's settings (bert_tf/training/run_checks.py) and where they apply."""

import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import configs, finetune, output_folders
from bert_tf.data import squad
from bert_tf.records import input_pipeline, record_specs, tfrecord
from bert_tf.training import run_checks


def config(output_dir, do_train=False, do_eval=False, allow_random_weights=False,
           init_checkpoint=None, **settings):
    """A FinetuneConfig of the given actions and weights' source."""
    return configs.FinetuneConfig(
        run=configs.RunSettings(output_dir, do_train, do_eval, allow_random_weights),
        model=configs.ModelSettings(init_checkpoint=init_checkpoint), **settings)


def test_scoring_needs_weights_unless_asked_for_random_ones_by_name(tmp_path):
    empty = str(tmp_path / "empty")
    for actions, named in (({"do_eval": True}, "--do_eval"),
                           ({"do_predict": True,
                             "export": configs.ExportSettings(export_dir="x")},
                            "--do_predict and --export_dir")):
        with pytest.raises(run_checks.RunCheckError, match=(
                f"^{named} would use random weights: --output_dir={empty} holds no checkpoint, "
                "and there is no --init_checkpoint or --do_train; give one of them, or "
                "--allow_random_weights to run on random weights anyway$")):
            finetune.check_actions(config(empty, **actions))
    # Weights from training, a checkpoint to start from, or asked for by name.
    for fine in ({"do_train": True}, {"init_checkpoint": "model"},
                 {"allow_random_weights": True}):
        finetune.check_actions(config(empty, do_eval=True, **fine))
    # A folder with a run's checkpoint.
    checkpoint = tf.train.Checkpoint(step=tf.Variable(1))
    checkpoint.save(str(tmp_path / "run" / "ckpt"))
    finetune.check_actions(config(str(tmp_path / "run"), do_predict=True))


def test_an_export_dir_of_a_users_files_is_refused_before_any_work(tmp_path):
    """From Python as from the scripts: the export would replace the folder whole."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(output_folders.OutputFolderError, match=(
            f"^--export_dir={mine} holds files that are no part of an earlier SavedModel")):
        finetune.check_actions(config(str(tmp_path / "run"), do_train=True,
                                      export=configs.ExportSettings(export_dir=str(mine))))
    assert (mine / "notes.txt").read_text() == "mine"


def test_heads_the_init_checkpoint_lacked_are_refused_unless_trained_or_asked_for():
    with pytest.raises(run_checks.RunCheckError, match=(
            "^--do_eval would use a random head: --init_checkpoint=bert has no cls/w \\(2 "
            "weights of the task's head are missing")):
        run_checks.check_loaded_heads(["cls/w", "cls/b"], "bert", False, True)
    run_checks.check_loaded_heads(["cls/w"], "bert", True, True)
    run_checks.check_loaded_heads(["cls/w"], "bert", False, True, allow_random_weights=True)
    run_checks.check_loaded_heads([], "bert", False, True)


def test_training_at_a_learning_rate_of_0_is_refused(tmp_path):
    with pytest.raises(run_checks.RunCheckError, match="^--learning_rate=0 trains nothing"):
        finetune.check_actions(configs.FinetuneConfig(
            run=configs.RunSettings(output_dir=str(tmp_path), do_train=True),
            optimizer=configs.OptimizerSettings(learning_rate=0.0)))
    # Scoring at 0 trains nothing anyway.
    run_checks.check_learning_rate(False, 0.0)


def test_a_warmup_longer_than_the_training_is_warned_with_the_peak_reached(capsys):
    run_checks.warn_warmup(6, 50, 5e-5)
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "warning: --num_warmup_steps=50 is more than --num_train_steps=6: the learning rate "
        "only warms up, and peaks at 6e-06 of --learning_rate=5e-05")
    run_checks.warn_warmup(50, 50, 5e-5)
    assert not capsys.readouterr().err


def test_stale_eval_results_are_removed(tmp_path):
    results = tmp_path / run_checks.EVAL_RESULTS_FILE
    for model_changes, outputs_change in ((True, False), (False, True)):
        results.write_text("eval_accuracy = 0.9\n")
        run_checks.remove_stale_eval_results(str(tmp_path), model_changes, outputs_change)
        assert not results.exists()
    results.write_text("eval_accuracy = 0.9\n")
    run_checks.remove_stale_eval_results(str(tmp_path), False, False)
    assert results.exists()


def test_records_of_another_task_are_named_as_not_pretraining_records(tmp_path):
    path = tmp_path / "train.tf_record"
    specs = record_specs.classification_features(8)
    with open(path, "wb") as f:
        tfrecord.write_examples(f, [{"input_ids": np.arange(8), "input_mask": [1] * 8,
                                     "segment_ids": [0] * 8, "label_ids": 1,
                                     "is_real_example": 1}], specs)
    with pytest.raises(ValueError, match=(
            f"^{path}: not pretraining records: they have no masked_lm_positions, "
            "masked_lm_ids, masked_lm_weights, next_sentence_labels \\(their features: "
            "input_ids, input_mask, is_real_example, label_ids, segment_ids\\); give the "
            "output of create_pretraining_data.py$")):
        input_pipeline.check_pretraining_records(str(path), 8, 2)


def test_a_squad_file_without_answers_cannot_be_scored(tmp_path):
    path = tmp_path / "test.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [
        {"context": "a b c", "qas": [{"id": "q1", "question": "a?"}]}]}]}))
    settings = squad.SquadSettings(max_seq_length=32, doc_stride=8, max_query_length=8)
    data = squad.SquadData(settings, None, predict_file=str(path))
    with pytest.raises(squad.SquadDataError, match=(
            f"^--do_eval: {path} cannot be scored: question 'q1' .* has no 'answers' to score "
            "against; drop --do_eval to only predict$")):
        data.check_scorable("eval")
