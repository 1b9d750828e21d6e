"""One pipeline for every training job: its phases, in the order every job goes through them.

Pretraining (pretrain.PretrainingJob) and fine-tuning (finetune.FinetuneJob)
are each a Job; run() takes one through

  check     refuse settings that cannot run, before any work;
  prepare   read and check the inputs, build the Trainer, resumed from
            output_dir or initialized from init_checkpoint;
  train     to the last step, with the evaluations during training the job does;
  choose    the model that evaluation, prediction and export use (the
            newest, or the best one kept in output_dir);
  evaluate  score the dev set and write eval_results.txt;
  predict   write the test set's output files;
  export    write the raw-text SavedModel,

each as the job's actions ask. A job's phases write what it writes
(checkpoints and records in output_dir); run() holds only their order.
"""

import abc
import contextlib
import dataclasses


@dataclasses.dataclass(frozen=True)
class Actions:
    """What a run does: its phases besides check, prepare and choose.

    Attributes:
      train: --do_train.
      evaluate: --do_eval.
      predict: --do_predict.
      export: --export_dir given.
    """

    train: bool
    evaluate: bool
    predict: bool = False
    export: bool = False


class Job(abc.ABC):
    """A training job, phase by phase, for run(); see the module docstring.

    A job without prediction or export (pretraining) never asks for them,
    so it need not define those phases.
    """

    @property
    @abc.abstractmethod
    def actions(self):
        """The run's Actions."""

    @abc.abstractmethod
    def check(self):
        """Refuses settings that cannot run, before any work (a ValueError naming the flag)."""

    @abc.abstractmethod
    def prepare(self):
        """Reads and checks the inputs and builds the Trainer, before any training."""

    @abc.abstractmethod
    def train(self):
        """Trains to the last step (a resumed run from where it stopped)."""

    @abc.abstractmethod
    def choose_model(self):
        """Loads the model that evaluation, prediction and export use."""

    @abc.abstractmethod
    def evaluate(self):
        """Scores the dev set and writes eval_results.txt.

        Returns:
          The results, as eval_results.txt holds them.
        """

    def predict(self):
        """Writes the test set's output files."""
        raise NotImplementedError(f"{type(self).__name__} does not predict")

    def export(self):
        """Writes the raw-text SavedModel."""
        raise NotImplementedError(f"{type(self).__name__} does not export")

    def workspace(self):
        """A context around train, choose, evaluate and predict (fine-tuning's records
        folder); none by default."""
        return contextlib.nullcontext()

    @abc.abstractmethod
    def result(self, eval_results):
        """What the run returns to its caller.

        Args:
          eval_results: evaluate()'s results, or None when the run did not
            evaluate.
        """


def run(job):
    """Takes a job through its phases, as its actions ask.

    Args:
      job: A Job.

    Returns:
      job.result() of the run.
    """
    actions = job.actions
    job.check()
    job.prepare()
    eval_results = None
    with job.workspace():
        if actions.train:
            job.train()
        if actions.evaluate or actions.predict or actions.export:
            job.choose_model()
        if actions.evaluate:
            eval_results = job.evaluate()
        if actions.predict:
            job.predict()
    if actions.export:
        job.export()
    return job.result(eval_results)
