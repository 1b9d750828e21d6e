"""The phases every training job goes through, in order (bert_tf/runner.py)."""

import contextlib

import pytest

from bert_tf import runner


class RecordingJob(runner.Job):
    """A job whose phases note their names, inside or outside the workspace."""

    def __init__(self, actions, fail_in=None):
        self._actions = actions
        self.fail_in = fail_in
        self.calls = []
        self.in_workspace = False

    @property
    def actions(self):
        return self._actions

    def _note(self, phase):
        self.calls.append(phase + (" (workspace)" if self.in_workspace else ""))
        if phase == self.fail_in:
            raise ValueError(f"--flag refused in {phase}")

    def check(self):
        self._note("check")

    def prepare(self):
        self._note("prepare")

    def train(self):
        self._note("train")

    def choose_model(self):
        self._note("choose")

    def evaluate(self):
        self._note("evaluate")
        return {"eval_accuracy": 0.5}

    def predict(self):
        self._note("predict")

    def export(self):
        self._note("export")

    @contextlib.contextmanager
    def workspace(self):
        self.in_workspace = True
        try:
            yield
        finally:
            self.in_workspace = False

    def result(self, eval_results):
        return self.calls, eval_results


def test_every_phase_runs_in_order_the_scoring_ones_in_the_workspace_export_after_it():
    calls, results = runner.run(RecordingJob(runner.Actions(True, True, True, True)))
    assert calls == ["check", "prepare", "train (workspace)", "choose (workspace)",
                     "evaluate (workspace)", "predict (workspace)", "export"]
    assert results == {"eval_accuracy": 0.5}


@pytest.mark.parametrize("actions, expected", [
    (runner.Actions(train=True, evaluate=False), ["check", "prepare", "train (workspace)"]),
    (runner.Actions(train=False, evaluate=True),
     ["check", "prepare", "choose (workspace)", "evaluate (workspace)"]),
    (runner.Actions(train=False, evaluate=False, export=True),
     ["check", "prepare", "choose (workspace)", "export"]),
])
def test_only_the_phases_asked_for_run(actions, expected):
    calls, results = runner.run(RecordingJob(actions))
    assert calls == expected
    assert results == ({"eval_accuracy": 0.5} if actions.evaluate else None)


def test_a_refusal_in_check_stops_the_run_before_any_work():
    job = RecordingJob(runner.Actions(True, True, True, True), fail_in="check")
    with pytest.raises(ValueError, match="refused in check"):
        runner.run(job)
    assert job.calls == ["check"]


def test_a_job_without_prediction_or_export_is_a_job_and_is_never_asked_for_them():
    class Pretraining(RecordingJob):
        predict = runner.Job.predict
        export = runner.Job.export

    calls, _ = runner.run(Pretraining(runner.Actions(train=True, evaluate=True)))
    assert "predict" not in " ".join(calls) and "export" not in " ".join(calls)
    with pytest.raises(NotImplementedError, match="Pretraining does not predict"):
        Pretraining(runner.Actions(True, True)).predict()
