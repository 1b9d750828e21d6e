"""Tests for the run_pretraining.py script, run as a user runs it.

Each test starts the script in a subprocess on the CPU, with a tiny model
(2 layers, hidden 32) and a few steps. Two kinds of data:

  - tests/fixtures/pretraining_original.tfrecord: 28 records that Google's
    original create_pretraining_data.py wrote (max_seq_length 32,
    max_predictions_per_seq 5; see tests/unit/records/test_input_pipeline.py);
  - synthetic records written here with bert_tf.records.record_specs' pretraining contract,
    in which every masked token is a function of its position and the
    next-sentence label shows at [CLS]: the loss falls from about 4 to
    near 0 in a few dozen steps, so that a resumed run is easy to tell from
    a restarted one.
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from bert_tf.checkpoints import checkpoints
from bert_tf.cli import script_flags
from bert_tf.model.config import BertConfig
from bert_tf.model.modeling import BertModel
from bert_tf.records import input_pipeline, record_specs
from bert_tf.runtime import distribution
from bert_tf.tasks import PretrainingTask
from tests import helpers
from tests.helpers.cluster_helpers import two_workers_and_one_process

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
ORIGINAL_RECORDS = os.path.join(FIXTURES, "pretraining_original.tfrecord")
ORIGINAL_SEQ, ORIGINAL_PREDICTIONS = 32, 5
ORIGINAL_VOCAB_SIZE = 393  # lines of pretraining_vocab.txt
SEQ, PREDICTIONS, VOCAB_SIZE = 16, 4, 30  # the synthetic records
STEP_LINE = re.compile(r"step (\d+)/(\d+)  loss ([0-9.]+)")
# The progress line prints the loss with 4 decimals (a little over one step of
# them, for float error in the difference).
LOGGED_LOSS_STEP = 1.5e-4
EVAL_KEYS = {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
             "next_sentence_accuracy", "next_sentence_loss"}

# The same command with run_pretraining's own dataset function, except that the
# training shuffle buffer holds one record: the records then come in file order,
# so that a single process and two workers see exactly the same global batches.
IN_FILE_ORDER = (
    "import functools\n"
    "from absl import app\n"
    "from bert_tf.records import input_pipeline\n"
    "import run_pretraining\n"
    "input_pipeline.pretraining_dataset = functools.partial(\n"
    "    input_pipeline.pretraining_dataset, shuffle_buffer_size=1)\n"
    "app.run(run_pretraining.main)\n")


def _env(**extra):
    """The subprocess environment: the CPU only, no cluster, unless extra says so."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update({"CUDA_VISIBLE_DEVICES": "-1", "PYTHONPATH": ROOT}, **extra)
    return env


def _command(*flag_list, entry=None):
    """The command line: run_pretraining.py, or `python -c entry`, with flags."""
    script = ["-c", entry] if entry else [os.path.join(ROOT, "run_pretraining.py")]
    return [sys.executable, *script, *flag_list]


def run_script(*flag_list, entry=None, env=None):
    """Runs the script to its end; returns the CompletedProcess."""
    return subprocess.run(_command(*flag_list, entry=entry), cwd=ROOT, env=env or _env(),
                          capture_output=True, text=True, timeout=300, check=False)


def _ok(result):
    """Asserts a clean exit, showing the end of the log otherwise."""
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _steps(log):
    """[(step, loss)] of the "step N/M  loss L" lines of a log."""
    return [(int(m.group(1)), float(m.group(3))) for m in STEP_LINE.finditer(log)]


def _eval_results(output_dir):
    """eval_results.txt as {key: float}."""
    with open(os.path.join(output_dir, "eval_results.txt"), encoding="utf-8") as f:
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f)}


def _flags(**values):
    """--name=value for each keyword, in order."""
    return [f"--{name}={value}" for name, value in values.items()]


def _save_model(folder, config):
    """A random model with both heads, as an original-style bert_model.ckpt + bert_config.json.

    Returns:
      (prefix, encoder, heads).
    """
    encoder = BertModel(config)
    heads = PretrainingTask().create_heads(encoder)
    prefix = checkpoints.save_google_checkpoint(
        os.path.join(folder, "bert_model.ckpt"), encoder, heads)
    return prefix, encoder, heads


def _tiny_config(vocab_size, max_position_embeddings, dropout=0.1):
    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=64,
                      max_position_embeddings=max_position_embeddings, type_vocab_size=2,
                      hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)


@pytest.fixture(scope="module")
def original_model(tmp_path_factory):
    """A tiny model for the original's records: (prefix, encoder, heads)."""
    folder = tmp_path_factory.mktemp("original_model")
    return _save_model(str(folder), _tiny_config(ORIGINAL_VOCAB_SIZE, ORIGINAL_SEQ))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """64 synthetic records and a dropout-free model: {records, config, init} paths."""
    folder = tmp_path_factory.mktemp("synthetic")
    records = str(folder / "records.tfrecord")
    _write_synthetic_records(records, 64)
    prefix, _, _ = _save_model(str(folder), _tiny_config(VOCAB_SIZE, SEQ, dropout=0.0))
    return {"records": records, "init": prefix,
            "config": os.path.join(str(folder), "bert_config.json")}


def _write_synthetic_records(path, n, seed=0):
    """Writes n records that follow record_specs.pretraining_features."""
    rng = np.random.default_rng(seed)
    specs = record_specs.pretraining_features(SEQ, PREDICTIONS)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            input_ids = rng.integers(5, VOCAB_SIZE, size=SEQ)
            positions = np.sort(rng.choice(np.arange(1, SEQ - 1), PREDICTIONS, replace=False))
            input_ids[positions] = 4  # [MASK]
            label = int(rng.integers(0, 2))
            input_ids[0] = 2 + label  # the next-sentence label, visible at [CLS]
            values = {"input_ids": input_ids, "input_mask": [1] * SEQ,
                      "segment_ids": [0] * (SEQ // 2) + [1] * (SEQ // 2),
                      "masked_lm_positions": positions, "masked_lm_ids": 5 + positions,
                      "masked_lm_weights": [1.0] * PREDICTIONS, "next_sentence_labels": [label]}
            feature = {}
            for spec in specs:
                value = np.asarray(values[spec.name]).tolist()
                assert len(value) == spec.length
                feature[spec.name] = (
                    tf.train.Feature(float_list=tf.train.FloatList(value=value))
                    if spec.dtype == record_specs.FLOAT32
                    else tf.train.Feature(int64_list=tf.train.Int64List(value=value)))
            writer.write(tf.train.Example(
                features=tf.train.Features(feature=feature)).SerializeToString())


def _synthetic_flags(synthetic, output_dir, **overrides):
    """Flags for a short run on the synthetic records, without XLA."""
    values = {"input_file": synthetic["records"], "output_dir": output_dir,
              "bert_config_file": synthetic["config"], "do_train": True,
              "train_batch_size": 16, "max_seq_length": SEQ,
              "max_predictions_per_seq": PREDICTIONS, "num_train_steps": 20,
              "num_warmup_steps": 5, "learning_rate": 2e-3, "iterations_per_loop": 5,
              "save_checkpoints_steps": 20, "jit_compile": False}
    values.update(overrides)
    return _flags(**values)


def test_readme_command_line_on_the_originals_records(tmp_path, original_model):
    """The original README's command, unchanged; --jit_compile=auto is XLA in float32 on a CPU."""
    prefix, _, _ = original_model
    output_dir = str(tmp_path / "out")
    result = _ok(run_script(
        f"--input_file={ORIGINAL_RECORDS}", f"--output_dir={output_dir}",
        "--do_train=True", "--do_eval=True",
        f"--bert_config_file={os.path.dirname(prefix)}/bert_config.json",
        f"--init_checkpoint={prefix}", "--train_batch_size=8",
        f"--max_seq_length={ORIGINAL_SEQ}", f"--max_predictions_per_seq={ORIGINAL_PREDICTIONS}",
        "--num_train_steps=4", "--num_warmup_steps=2", "--learning_rate=2e-5",
        env=_env(TF_CPP_MIN_LOG_LEVEL="0")))
    log = result.stderr
    # Every tensor of the init checkpoint, the cls/ heads included, was loaded.
    in_checkpoint = tf.train.list_variables(prefix)
    assert sum(name.startswith("cls/") for name, _ in in_checkpoint) == 7
    assert f"Loaded {len(in_checkpoint)} tensors from google checkpoint {prefix}." in log
    assert "Left at initial values" not in log
    assert "XLA for the train, eval and predict steps: on (auto)" in log
    assert "Compiled cluster using XLA" in log
    assert ("Precision policy: float32 (auto: the CPU multiplies float32 at least as fast as "
            "bfloat16") in log
    # On a CPU, without --iterations_per_loop, the first progress line comes
    # after one step; later loops are sized by time.
    steps = [step for step, _ in _steps(log)]
    assert steps[0] == 1 and steps[-1] == 4 and steps == sorted(set(steps))
    results = _eval_results(output_dir)
    assert set(results) == EVAL_KEYS
    assert results["global_step"] == 4
    assert all(math.isfinite(v) for v in results.values())
    assert 0 <= results["masked_lm_accuracy"] <= 1
    # The script also prints the results.
    assert "global_step = 4" in result.stdout.splitlines()
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-4")
    assert os.path.exists(os.path.join(output_dir, "bert_config.json"))


def test_eval_only_gives_the_init_checkpoints_own_metrics(tmp_path, original_model):
    """Eval at step 0 equals the source model's metrics: the heads came with the weights."""
    prefix, encoder, heads = original_model
    output_dir = str(tmp_path / "out")
    _ok(run_script(
        f"--input_file={ORIGINAL_RECORDS}", f"--output_dir={output_dir}",
        "--do_train=False", "--do_eval=True", f"--init_checkpoint={prefix}",
        f"--max_seq_length={ORIGINAL_SEQ}", f"--max_predictions_per_seq={ORIGINAL_PREDICTIONS}",
        "--eval_batch_size=8", "--jit_compile=false"))
    task = PretrainingTask()
    metrics = task.create_metrics()
    for batch in input_pipeline.pretraining_dataset(
            ORIGINAL_RECORDS, 8, ORIGINAL_SEQ, ORIGINAL_PREDICTIONS, is_training=False):
        task.update_metrics(metrics, batch, task.forward(encoder, heads, batch, training=False))
    results = _eval_results(output_dir)
    assert results.pop("global_step") == 0
    assert results == pytest.approx({k: float(m.result()) for k, m in metrics.items()},
                                    abs=1e-5)


def test_kill_9_mid_run_then_the_same_command_resumes(tmp_path, synthetic):
    """SIGKILL once a checkpoint exists; the same command then finishes the run.

    One step per loop, so that the loss is logged at every step: the loss of
    the first step after the restart must be within a tenth of the initial
    loss (about 0.4; here the loss falls by about 0.1 per step) of the loss
    at the checkpoint, where a restart from scratch would be back near the
    initial loss.
    """
    output_dir = tmp_path / "out"
    flags = dict(num_train_steps=200, learning_rate=5e-3, iterations_per_loop=1, seed=1)
    command = _command(*_synthetic_flags(synthetic, str(output_dir), **flags))
    killed_log = tmp_path / "killed.log"
    with open(killed_log, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                                   stderr=stderr)
        try:
            # The state file names a checkpoint only once it is complete.
            deadline = time.monotonic() + 240
            while not (output_dir / "checkpoint").exists():
                assert process.poll() is None, killed_log.read_text()[-3000:]
                assert time.monotonic() < deadline, "no checkpoint within 240 s"
                time.sleep(0.01)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it was killed"
    checkpoint_step = int(tf.train.latest_checkpoint(str(output_dir)).rsplit("-", 1)[1])
    assert checkpoint_step % 20 == 0 and 20 <= checkpoint_step < 200
    before = dict(_steps(killed_log.read_text()))
    initial_loss = before[1]

    result = _ok(subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True,
                                timeout=300, check=False))
    assert f"ckpt-{checkpoint_step} at step {checkpoint_step}" in result.stderr
    after = _steps(result.stderr)
    assert [step for step, _ in after] == list(range(checkpoint_step + 1, 201))
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-200")
    # The loss goes on from where the checkpoint left it, far below a fresh start's.
    resumed_loss = after[0][1]
    trace = f"initial {initial_loss}, at the checkpoint {before[checkpoint_step]}, " \
            f"after {resumed_loss}"
    assert initial_loss > 3.0, trace
    assert resumed_loss < initial_loss / 2, trace
    assert abs(resumed_loss - before[checkpoint_step]) < 0.1 * initial_loss, trace
    assert after[-1][1] < 0.1
    # Exactly once: with the same --seed, the resumed run goes on with the
    # batches, dropout masks and losses of a run that was never killed.
    whole = _ok(subprocess.run(
        _command(*_synthetic_flags(synthetic, str(tmp_path / "whole"), **flags)), cwd=ROOT,
        env=_env(), capture_output=True, text=True, timeout=300, check=False))
    uninterrupted = dict(_steps(whole.stderr))
    assert after == [(step, uninterrupted[step]) for step, _ in after]


@pytest.mark.parametrize(("signal_number", "cause"), [(signal.SIGINT, "Ctrl-C"),
                                                      (signal.SIGTERM, "SIGTERM")])
def test_an_interrupt_ends_in_one_line_that_says_how_to_resume(tmp_path, synthetic,
                                                               signal_number, cause):
    output_dir = tmp_path / "out"
    command = _command(*_synthetic_flags(synthetic, str(output_dir), num_train_steps=100000,
                                         iterations_per_loop=1))
    # A test run started in the background by a non-interactive shell ignores
    # SIGINT, and a child inherits the ignore (Python then leaves Ctrl-C
    # ignored too); a handler is reset to the default in the child instead.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        # The state file names a checkpoint only once it is complete.
        for line in process.stderr:
            if (output_dir / "checkpoint").exists() and STEP_LINE.search(line):
                break
        process.send_signal(signal_number)
        stderr = process.communicate(timeout=120)[1]
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 128 + signal_number, stderr[-3000:]
    assert "Traceback" not in stderr
    # Held until the loop in progress ended (interrupts.held).
    assert f"{cause}: stopping after this training loop" in stderr
    last = stderr.strip().splitlines()[-1]
    latest = tf.train.latest_checkpoint(str(output_dir))
    match = re.fullmatch(f"run_pretraining.py: interrupted by {cause} at step (\\d+); the last "
                         f"checkpoint, {re.escape(latest)}, is at step (\\d+): the same command "
                         "resumes from there", last)
    assert match, last
    assert int(match.group(1)) >= int(match.group(2)) == int(latest.rsplit("-", 1)[1]) >= 20


def test_training_on_needs_the_same_records_and_may_go_longer(tmp_path, synthetic):
    output_dir = str(tmp_path / "out")
    other_records = str(tmp_path / "other.tfrecord")
    _write_synthetic_records(other_records, 64, seed=1)
    _ok(run_script(*_synthetic_flags(synthetic, output_dir, num_train_steps=2)))
    refused = run_script(*_synthetic_flags(synthetic, output_dir, num_train_steps=4,
                                           input_file=other_records))
    assert refused.returncode == 1
    assert re.search(f"other training data settings \\(input_files\\.{synthetic['records']}: "
                     f"'.*' there, None now; input_files\\.{other_records}: None there, '.*' "
                     "now\\): give another --output_dir", refused.stderr), refused.stderr[-2000:]
    assert "Traceback" not in refused.stderr
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-2")
    # The same records, longer: the run goes on from step 2.
    longer = _ok(run_script(*_synthetic_flags(synthetic, output_dir, num_train_steps=4)))
    assert "ckpt-2 at step 2" in longer.stderr
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-4")


def test_two_workers_match_one_process(tmp_path, synthetic):
    """MultiWorkerMirroredStrategy over two local processes vs one process, same global batch.

    Both runs read the records in file order (IN_FILE_ORDER); the two workers
    split each global batch of 16 records between them (worker 0 the even
    records, worker 1 the odd ones), so that every update averages the same
    16 records' gradients in both runs. Tolerance: 1e-5 on every weight and
    optimizer slot (float32 sums in another order; the measured difference is
    about 1e-7). The logged losses are rounded to 4 decimals, so two losses
    1e-7 apart can print one last digit apart: they get that digit's 1e-4.
    """
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def job(output_dir, name, tf_config):
        extra = {"TMPDIR": str(scratch)}
        if tf_config:
            extra["TF_CONFIG"] = tf_config
        command = _command(*_synthetic_flags(
            synthetic, str(output_dir), init_checkpoint=synthetic["init"], do_eval=True,
            eval_batch_size=16, num_train_steps=10, save_checkpoints_steps=5),
            entry=IN_FILE_ORDER)
        return command, _env(**extra), tmp_path / f"{name}.log"

    logs = two_workers_and_one_process(job, tmp_path, ROOT)
    assert "default strategy on the CPU" in logs[2]

    # Each logged loss is the mean over all 16 records, on either worker.
    losses = [_steps(log) for log in logs]
    assert [step for step, _ in losses[2]] == [5, 10]
    for worker_losses in losses[:2]:
        np.testing.assert_allclose(worker_losses, losses[2], atol=LOGGED_LOSS_STEP)
    assert losses[2][1][1] < losses[2][0][1]

    # Only the chief wrote to --output_dir; worker 1's throwaway checkpoints are gone.
    workers, single = tmp_path / "workers", tmp_path / "single"
    assert sorted(os.listdir(workers)) == sorted(os.listdir(single))
    assert len(os.listdir(workers / "train")) == 1  # one TensorBoard events file
    assert os.listdir(scratch) == []
    chief = tf.train.load_checkpoint(str(workers / "ckpt-10"))
    alone = tf.train.load_checkpoint(str(single / "ckpt-10"))
    init = tf.train.load_checkpoint(synthetic["init"])
    names = [n for n in chief.get_variable_to_shape_map() if n != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    # The one process also saves its input position; multi-worker runs do not.
    assert sorted(names) == sorted(alone.get_variable_to_shape_map().keys() - {
        "_CHECKPOINTABLE_OBJECT_GRAPH", "train_input/.ATTRIBUTES/ITERATOR_STATE"})
    for name in names:
        np.testing.assert_allclose(chief.get_tensor(name), alone.get_tensor(name), atol=1e-5,
                                   err_msg=name)
    # The weights moved far more than the tolerance: the comparison means something.
    moved = chief.get_tensor("encoder/embeddings/word_embeddings/.ATTRIBUTES/VARIABLE_VALUE")
    assert np.abs(moved - init.get_tensor("bert/embeddings/word_embeddings")).max() > 1e-3

    # Evaluation covers both workers' shares of the records.
    assert _eval_results(str(workers)) == pytest.approx(_eval_results(str(single)), abs=1e-5)


def test_gradient_accumulation_and_lamb(tmp_path, synthetic):
    """Also: --jit_compile=false leaves the steps to TensorFlow's kernels."""
    output_dir = str(tmp_path / "out")
    result = _ok(run_script(*_synthetic_flags(
        synthetic, output_dir, gradient_accumulation_steps=2, optimizer="lamb",
        learning_rate=5e-2, iterations_per_loop=10), env=_env(TF_CPP_MIN_LOG_LEVEL="0")))
    # (Only the model's small fused loops, the dropout masks and the GELU, use XLA then.)
    assert "XLA for the train, eval and predict steps: off\n" in result.stderr
    assert "batch 16 (8 per replica and micro-batch)" in result.stderr
    losses = _steps(result.stderr)
    assert [step for step, _ in losses] == [10, 20]
    assert losses[1][1] < losses[0][1] - 0.3
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-20")


BAD_INPUT = {
    "missing input": ({"input_file": "{tmp}/missing-*.tfrecord"},
                      "--input_file: no input file matches '{tmp}/missing-*.tfrecord'"),
    "sequence too long": ({"max_seq_length": 64},
                          "--max_seq_length=64 exceeds the model's max_position_embeddings=16"),
    "batch does not split": ({"train_batch_size": 6, "gradient_accumulation_steps": 4},
                             "--train_batch_size=6 must be a multiple of the 1 replica(s) x "
                             "--gradient_accumulation_steps=4"),
    "nothing to do": ({"do_train": False, "do_eval": False},
                      "at least one of --do_train or --do_eval must be True"),
    "records of another length": ({"max_seq_length": 12},
                                  "the records do not hold 12 input_ids and 4 "
                                  "masked_lm_positions"),
    "random bytes": ({"input_file": "{tmp}/random.tfrecord"},
                     "--input_file: {tmp}/random.tfrecord: corrupt or truncated after its "
                     "first 0 good records"),
    # Records past the first are cut: the start-up check reads every record.
    "truncated file": ({"input_file": "{tmp}/truncated.tfrecord"},
                       "--input_file: {tmp}/truncated.tfrecord: corrupt or truncated"),
    "learning rate 0": ({"learning_rate": 0},
                        "run_pretraining.py: error: --learning_rate=0 trains nothing"),
    "eval of random weights": ({"do_train": False, "do_eval": True},
                               "run_pretraining.py: error: --do_eval would use random weights: "
                               "--output_dir={tmp}/out holds no checkpoint, and there is no "
                               "--init_checkpoint or --do_train; give one of them, or "
                               "--allow_random_weights to run on random weights anyway"),
    # Warned, before the run stops at its too long --max_seq_length.
    "warmup longer than training": (
        {"num_warmup_steps": 50, "num_train_steps": 6, "max_seq_length": 64},
        "run_pretraining.py: warning: --num_warmup_steps=50 is more than --num_train_steps=6: "
        "the learning rate only warms up, and peaks at 0.00024 of --learning_rate=0.002"),
}


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory, synthetic):
    """Runs every BAD_INPUT case at once (each is mostly TensorFlow's start-up).

    Returns:
      {case: (tmp folder, output_dir, returncode, stderr)}.
    """
    started = {}
    for case, (overrides, _) in BAD_INPUT.items():
        tmp = tmp_path_factory.mktemp("bad_input")
        (tmp / "random.tfrecord").write_bytes(np.random.default_rng(0).bytes(4000))
        with open(synthetic["records"], "rb") as f:
            (tmp / "truncated.tfrecord").write_bytes(f.read()[:-100])
        output_dir = tmp / "out"
        overrides = {k: str(v).format(tmp=tmp) for k, v in overrides.items()}
        started[case] = (tmp, output_dir, subprocess.Popen(
            _command(*_synthetic_flags(synthetic, str(output_dir), **overrides)), cwd=ROOT,
            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    results = {}
    for case, (tmp, output_dir, process) in started.items():
        stderr = process.communicate(timeout=300)[1]
        results[case] = (tmp, output_dir, process.returncode, stderr)
    return results


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_gets_a_clear_error(bad_input_runs, case):
    tmp, output_dir, returncode, stderr = bad_input_runs[case]
    assert returncode != 0
    assert BAD_INPUT[case][1].format(tmp=tmp) in stderr
    assert "Traceback" not in stderr
    assert not output_dir.exists() or not os.listdir(output_dir)


def test_help_explains_every_flag():
    names = {"input_file", "eval_input_file", "max_predictions_per_seq", "num_train_steps",
             "num_warmup_steps", "max_eval_steps"}
    shared = flags.FlagValues()
    script_flags.pretraining_flags(shared)
    names |= set(shared)
    result = run_script("--help")  # absl exits with 1 after --help
    for name in sorted(names):
        match = re.search(rf"--(\[no\])?{name}:(.*)", result.stdout)
        assert match and len(match.group(2).strip()) > 10, f"--{name} has no useful help"


def _strategy_with(cluster, task_type, task_id):
    """A stand-in for a multi-worker strategy: only its cluster_resolver is read."""
    class Strategy:
        cluster_resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
            tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id)
    return Strategy()


def test_only_the_chief_writes(monkeypatch):
    workers = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    assert distribution.is_chief(tf.distribute.get_strategy())
    assert distribution.is_chief(_strategy_with(workers, "worker", 0))
    assert not distribution.is_chief(_strategy_with(workers, "worker", 1))
    with_chief = {"chief": ["127.0.0.1:0"], **workers}
    assert distribution.is_chief(_strategy_with(with_chief, "chief", 0))
    assert not distribution.is_chief(_strategy_with(with_chief, "worker", 0))
    assert distribution.task_name(_strategy_with(with_chief, "worker", 1)) == "worker_1"
    # A chief task trains too: a chief and one worker are two workers.
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:1"]},
                                                "task": {"type": "chief", "index": 0}}))
    assert distribution._worker_count() == 2
