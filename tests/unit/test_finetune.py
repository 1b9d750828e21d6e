"""Every fine-tuning family, fine-tuned from Python through configs.FinetuneConfig.

Each family's case runs a short program in a fresh Python, as a notebook or a
user's script would: a FinetuneConfig, finetune.start(), the family's task and
data, finetune.run(). No absl flag is defined there, and none is needed: the
program ends by printing which of the scripts' flags exist (none may). The
last test follows run()'s reports after each chunk of training and what it
returns, as the notebook uses them.
"""

import json
import logging
import os
import random
import re
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from bert_tf import configs, finetune
from bert_tf.checkpoints import checkpoints
from bert_tf.data import conll, glue
from bert_tf.tasks import ClassificationTask, TaggingTask
from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
WORDS = [w for w in tokenization.load_vocab(VOCAB)
         if w.isalpha() and w.islower() and not w.startswith("##")]

# What each family's program builds after `files, runtime = finetune.start(config)`.
FAMILIES = {
    "classification": ("""
        processor = glue.get_processor("MRPC")
        task = ClassificationTask(len(processor.get_labels()), sentence_pairs=True,
                                  max_seq_length=config.model.max_seq_length,
                                  label_list=processor.get_labels())
        data = glue.GlueData(processor, files.tokenizer(), config.model.max_seq_length,
                             data_dir=DATA)
        """, "eval_accuracy"),
    "question_answering": ("""
        settings = squad.SquadSettings(max_seq_length=config.model.max_seq_length, doc_stride=16,
                                       max_query_length=8)
        task = QuestionAnsweringTask(settings)
        data = squad.SquadData(settings, files.tokenizer(), train_file=DATA, predict_file=DATA)
        """, "f1"),
    "tagging": ("""
        settings = conll.ConllSettings(config.model.max_seq_length, window_stride=8)
        data = conll.ConllData(settings, files.tokenizer(), data_dir=DATA)
        data.read(finetune.splits_to_read(data, config))  # the tags come from train.txt
        task = TaggingTask(data.labels(), settings)
        """, "eval_f1"),
    "multiple_choice": ("""
        settings = swag.SwagSettings(config.model.max_seq_length, num_choices=4)
        task = MultipleChoiceTask(settings)
        data = swag.SwagData(settings, files.tokenizer(), DATA)
        """, "eval_accuracy"),
}

PROGRAM = """
import json
import logging

from absl import flags

from bert_tf import finetune
from bert_tf.data import conll, glue, squad, swag
from bert_tf import configs
from bert_tf.tasks import (ClassificationTask, MultipleChoiceTask, QuestionAnsweringTask,
                           TaggingTask)

DATA = {data!r}
config = configs.FinetuneConfig(
    run=configs.RunSettings(output_dir={output_dir!r}, do_train=True, do_eval=True),
    model=configs.ModelSettings(init_checkpoint={checkpoint!r}, max_seq_length=32),
    batches=configs.BatchSizes(train_batch_size=2, eval_batch_size=2), num_train_epochs=1.0,
    optimizer=configs.OptimizerSettings(learning_rate=1e-3),
    runtime=configs.RuntimeSettings(jit_compile=False, seed=1))
files, runtime = finetune.start(config)
{family}
finetune.run(config, task, data, files, runtime)
script_flags = {{"output_dir", "learning_rate", "do_train", "tpu", "jit_compile",
                "dynamic_padding", "verbose"}}
print(json.dumps(sorted(script_flags & set(flags.FLAGS))))
"""


def _squad_file(folder):
    """Four questions whose answer is a word of their context."""
    rng = random.Random(0)
    paragraphs = []
    for index in range(4):
        words = [rng.choice(WORDS) for _ in range(12)]
        context = " ".join(words)
        answer = words[5]
        paragraphs.append({"context": context, "qas": [{
            "id": f"q{index}", "question": " ".join(words[:2]) + "?",
            "answers": [{"text": answer, "answer_start": context.index(" " + answer) + 1}]}]})
    path = os.path.join(folder, "squad.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}, f)
    return path


def _conll_dir(folder):
    """train.txt and dev.txt of four tagged sentences each."""
    sentences = "he B-PER\nwas O\nin O\nhis B-LOC\nfirst I-LOC\n\nshe B-PER\nand O\nhim I-PER\n\n"
    for name in ("train.txt", "dev.txt"):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(sentences * 2)
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_google_checkpoint(str(tmp_path_factory.mktemp("google")), VOCAB)[0]


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_fine_tunes_from_python_with_no_flag_defined(family, checkpoint, tmp_path):
    data = {"classification": lambda: os.path.join(FIXTURES, "glue", "MRPC"),
            "question_answering": lambda: _squad_file(str(tmp_path)),
            "tagging": lambda: _conll_dir(str(tmp_path)),
            "multiple_choice": lambda: os.path.join(FIXTURES, "swag")}[family]()
    code, metric = FAMILIES[family]
    output_dir = tmp_path / "output"
    program = PROGRAM.format(data=data, output_dir=str(output_dir), checkpoint=checkpoint,
                             family=textwrap.dedent(code))
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    with open(output_dir / "eval_results.txt", encoding="utf-8") as f:
        results = dict(line.strip().split(" = ") for line in f)
    assert int(results["global_step"]) >= 1
    assert metric in results


def test_run_reports_each_chunk_and_returns_what_it_did(checkpoint, tmp_path, caplog):
    config = configs.FinetuneConfig(
        run=configs.RunSettings(output_dir=str(tmp_path / "output"), do_train=True,
                              do_eval=True),
        model=configs.ModelSettings(init_checkpoint=checkpoint, max_seq_length=32),
        batches=configs.BatchSizes(train_batch_size=2, eval_batch_size=2), num_train_epochs=4.0,
        optimizer=configs.OptimizerSettings(learning_rate=1e-3),
        runtime=configs.RuntimeSettings(jit_compile=False, seed=1, mixed_precision="float32"))
    files, runtime = finetune.start(config)
    processor = glue.get_processor("MRPC")
    task = ClassificationTask(2, sentence_pairs=True, max_seq_length=config.model.max_seq_length,
                              label_list=processor.get_labels())
    data = glue.GlueData(processor, files.tokenizer(), config.model.max_seq_length,
                         data_dir=os.path.join(FIXTURES, "glue", "MRPC"))
    reports = []

    def after_chunk(progress):
        reports.append((progress.trainer.global_step, progress))

    with caplog.at_level(logging.INFO, logger="absl"):
        result = finetune.run(config, task, data, files, runtime, num_chunks=2,
                              after_chunk=after_chunk)
    # Each chunk's progress lines count to the run's last step, not the chunk's.
    assert re.findall(r"^step (\d+/\d+) ", "\n".join(caplog.messages), re.MULTILINE) == [
        "1/4", "2/4", "3/4", "4/4"]
    # 2 training examples, batches of 2, 4 epochs: 4 steps, reported before training and
    # after each of the two chunks, each time with the dev set's metrics.
    assert [step for step, _ in reports] == [0, 2, 4]
    assert reports[0][1].history == ()
    assert [[loop["step"] for loop in progress.history] for _, progress in reports[1:]] == [
        [1, 2], [3, 4]]
    assert all(progress.num_train_steps == 4 for _, progress in reports)
    assert all("eval_accuracy" in progress.metrics for _, progress in reports)
    # What run() returns is what it wrote and scored.
    assert result.trainer.global_step == 4
    with open(tmp_path / "output" / "eval_results.txt", encoding="utf-8") as f:
        written = dict(line.strip().split(" = ") for line in f)
    assert set(written) == {"global_step", *result.eval_results}
    assert float(written["eval_accuracy"]) == pytest.approx(result.eval_results["eval_accuracy"])
    assert list(result.predictions) == ["dev"]
    assert len(result.predictions["dev"]["predictions"]) == 1  # the dev set's one example


def test_dynamic_padding_predicts_shortest_first_and_returns_input_order(checkpoint, tmp_path):
    """Dev windows are written in order of length; run() gives their predictions back in
    input order, as the windows' own sentence_index shows."""
    folder = tmp_path / "conll"
    folder.mkdir()
    # Dev sentences of 5, 2, 7 and 3 words, each word one word piece.
    lengths = [5, 2, 7, 3]
    dev = "\n".join("\n".join(f"{WORDS[i]} O" for i in range(n)) + "\n" for n in lengths)
    (folder / "dev.txt").write_text(dev, encoding="utf-8")
    (folder / "train.txt").write_text("he B-PER\nwas O\n\n", encoding="utf-8")
    config = configs.FinetuneConfig(
        run=configs.RunSettings(output_dir=str(tmp_path / "output"), do_train=True,
                              do_eval=True),
        model=configs.ModelSettings(init_checkpoint=checkpoint, max_seq_length=32),
        batches=configs.BatchSizes(train_batch_size=1, eval_batch_size=3), num_train_epochs=1.0,
        optimizer=configs.OptimizerSettings(learning_rate=1e-3),
        runtime=configs.RuntimeSettings(jit_compile=False, seed=1),
        padding=configs.PaddingSettings(dynamic_padding=True))
    files, runtime = finetune.start(config)
    settings = conll.ConllSettings(config.model.max_seq_length, window_stride=8)
    data = conll.ConllData(settings, files.tokenizer(), data_dir=str(folder))
    data.read(finetune.splits_to_read(data, config))
    task = TaggingTask(data.labels(), settings)
    result = finetune.run(config, task, data, files, runtime)
    spec = {"input_mask": tf.io.FixedLenFeature([32], tf.int64),
            "sentence_index": tf.io.FixedLenFeature([1], tf.int64)}
    written = [tf.io.parse_single_example(record, spec) for record in
               tf.data.TFRecordDataset(str(tmp_path / "output" / "valid.tf_record"))]
    # [CLS] and [SEP] around each sentence; two padding records fill the last batch.
    assert [int(r["input_mask"].numpy().sum()) for r in written] == [4, 5, 7, 9, 0, 0]
    assert [int(r["sentence_index"][0]) for r in written] == [1, 3, 0, 2, 0, 0]
    assert result.predictions["valid"]["sentence_index"].tolist() == [0, 1, 2, 3]


def test_a_task_or_data_of_another_max_seq_length_is_refused_before_any_work(tmp_path):
    config = configs.FinetuneConfig(
        run=configs.RunSettings(output_dir=str(tmp_path / "output"), do_train=True),
        model=configs.ModelSettings(max_seq_length=32))
    data = glue.GlueData(glue.get_processor("MRPC"), None, 32,
                         data_dir=os.path.join(FIXTURES, "glue", "MRPC"))
    with pytest.raises(finetune.FinetuneError, match="^max_seq_length differs: 32 in the "
                       "config, 64 in ClassificationTask, 32 in GlueData"):
        finetune.run(config, ClassificationTask(2, max_seq_length=64), data, None, None)
    assert not (tmp_path / "output").exists()


@pytest.mark.parametrize("labels,problem_type,trains,message", [
    (["b", "a", "c"], "single_label", True,
     "--labels=b,a,c: --init_checkpoint={run}'s head was trained with --labels=a,b,c (in "
     "{run}), the same labels in another order: give them in that order"),
    (["x", "y", "z"], "single_label", False,
     "--labels=x,y,z: --init_checkpoint={run}'s head was trained with --labels=a,b,c (in "
     "{run}); give that, or --do_train to train the head anew"),
    (["a", "b", "c"], "multi_label", False,
     "--problem_type=multi_label: --init_checkpoint={run}'s head was trained with "
     "--problem_type=single_label"),
    (["x", "y", "z"], "single_label", True, None),
    (["a", "b", "c"], "single_label", False, None),
])
def test_a_fine_tuned_runs_head_is_loaded_only_for_its_labels_and_problem_type(
        tmp_path, labels, problem_type, trains, message):
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    (run / "run_settings.json").write_text(json.dumps(
        {"task": {"problem_type": "single_label", "labels": ["a", "b", "c"]}}))
    for prefix in (run / "ckpt-6", run / "best" / "model"):
        report = checkpoints.LoadReport("tf2", str(prefix), ["bert/kernel"], [], [])
        settings = {"problem_type": problem_type, "labels": labels}
        if message is None:
            finetune.check_loaded_head(str(run), report, settings, trains)
            continue
        with pytest.raises(finetune.FinetuneError) as error:
            finetune.check_loaded_head(str(run), report, settings, trains)
        assert str(error.value).startswith(message.format(run=run))
    # A pretrained checkpoint's head is not loaded: nothing to check.
    report = checkpoints.LoadReport("tf2", str(run / "ckpt-6"), [], ["output_bias"], [])
    finetune.check_loaded_head(str(run), report, {"labels": ["b", "a", "c"]}, True)
