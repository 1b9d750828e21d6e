"""Tests for run_squad.py, run as a user runs it (subprocesses).

A tiny BERT (2 layers, hidden 32) over tests/fixtures/pretraining_vocab.txt
trains briefly on a made-up SQuAD 2.0 set whose contexts are long enough for
several windows and whose answer is always the same word, at a random place:
enough to learn that answerable questions' answers, not which questions have
none. The tests check the output files, the official metrics in
eval_results.txt and the exported SavedModel.
"""

import json
import os
import random
import re
import subprocess
import sys

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)

from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
VOCAB = os.path.join(ROOT, "tests", "fixtures", "pretraining_vocab.txt")
# The answer of every answerable question: one occurrence of this word in
# the context. A model that learns it shows that windows, positions, loss and
# decoding line up (an answer off by one piece would score 0).
ANSWER = "his"
# Whole words of the vocab, for contexts and questions.
WORDS = [w for w in tokenization.load_vocab(VOCAB)
         if w.isalpha() and w.islower() and not w.startswith("##") and w != ANSWER]


def _paragraph(rng, index, num_questions):
    """A context of 20-45 words with ANSWER once, and its questions; a third unanswerable."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(20, 45))]
    position = rng.randrange(len(words))
    words[position] = ANSWER
    # A comma after the eighth word, for the SavedModel to split off.
    context = " ".join(words[:8]) + ", " + " ".join(words[8:]) + "."
    start = len(" ".join(words[:position])) + (position > 0) + (position >= 8)
    assert context[start:start + len(ANSWER)] == ANSWER
    qas = []
    for q in range(num_questions):
        question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) + "?"
        qa = {"id": f"p{index}q{q}", "question": question, "is_impossible": q % 3 == 2,
              "answers": []}
        if not qa["is_impossible"]:
            qa["answers"] = [{"text": ANSWER, "answer_start": start}]
        qas.append(qa)
    return {"context": context, "qas": qas}


def _write_squad(path, paragraphs):
    path.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": "made up", "paragraphs": paragraphs}]}), encoding="utf-8")
    return str(path)


def run_script(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "run_squad.py"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_google_checkpoint(str(tmp_path_factory.mktemp("google")), VOCAB)[0]


@pytest.fixture(scope="module")
def squad_run(checkpoint, tmp_path_factory):
    """Train, predict, eval and export on SQuAD 2.0, with the original's flag spelling."""
    tmp = tmp_path_factory.mktemp("squad")
    rng = random.Random(0)
    train_file = _write_squad(tmp / "train.json", [_paragraph(rng, i, 3) for i in range(40)])
    dev = [_paragraph(rng, 100 + i, 3) for i in range(10)]
    dev_file = _write_squad(tmp / "dev.json", dev)
    output_dir, export_dir = tmp / "output", tmp / "export"
    result = run_script(
        f"--vocab_file={VOCAB}",
        f"--bert_config_file={os.path.join(os.path.dirname(checkpoint), 'bert_config.json')}",
        f"--init_checkpoint={checkpoint}", "--do_train=True", f"--train_file={train_file}",
        "--do_predict=True", f"--predict_file={dev_file}", "--train_batch_size=8",
        "--predict_batch_size=3", "--learning_rate=3e-3", "--num_train_epochs=6.0",
        "--max_seq_length=48", "--doc_stride=16", "--max_query_length=8",
        f"--output_dir={output_dir}", "--version_2_with_negative=True", "--do_eval",
        f"--export_dir={export_dir}", "--jit_compile=false", "--seed=1")
    assert result.returncode == 0, result.stderr[-3000:]
    contexts = {qa["id"]: p["context"] for p in dev for qa in p["qas"]}
    questions = {qa["id"]: qa["question"] for p in dev for qa in p["qas"]}
    return {"output": output_dir, "export": export_dir, "contexts": contexts,
            "questions": questions, "dev_file": dev_file, "stdout": result.stdout,
            "stderr": result.stderr}


def test_prediction_files_answer_every_question_from_its_context(squad_run):
    output, contexts = squad_run["output"], squad_run["contexts"]
    assert (output / "train.tf_record").exists() and (output / "eval.tf_record").exists()
    # Some contexts take several windows.
    questions, windows = map(int, re.search(r"Predicting (\d+) questions in (\d+) windows",
                                            squad_run["stderr"]).groups())
    assert questions == len(contexts) and windows > questions
    predictions = json.loads((output / "predictions.json").read_text())
    assert list(predictions) == list(contexts)
    for qas_id, text in predictions.items():
        assert text == "" or text in contexts[qas_id]
    nbest = json.loads((output / "nbest_predictions.json").read_text())
    assert list(nbest) == list(contexts)
    for entries in nbest.values():
        assert entries and set(entries[0]) == {"text", "probability", "start_logit",
                                               "end_logit"}
        assert sum(e["probability"] for e in entries) == pytest.approx(1.0, abs=1e-4)
    null_odds = json.loads((output / "null_odds.json").read_text())
    assert list(null_odds) == list(contexts)


def test_eval_results_hold_the_official_v2_metrics(squad_run):
    results = dict(line.split(" = ") for line in
                   (squad_run["output"] / "eval_results.txt").read_text().splitlines())
    for key in ("exact", "f1", "total", "HasAns_exact", "HasAns_f1", "NoAns_exact",
                "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh", "global_step"):
        assert key in results
    assert float(results["total"]) == len(squad_run["contexts"])
    # The answerable questions' answer is learnt (which questions have none is
    # not): 17 of the 20 here. Pieces off by one would score 0.
    assert float(results["HasAns_exact"]) > 70
    assert 0 <= float(results["f1"]) <= 100
    assert "exact = " in squad_run["stdout"]


def test_exported_model_answers_with_the_contexts_own_text(squad_run):
    model = tf.saved_model.load(str(squad_run["export"]))
    ids = list(squad_run["contexts"])
    contexts = [squad_run["contexts"][i] for i in ids] + ["", "the river"]
    questions = [squad_run["questions"][i] for i in ids] + ["where?", "where?"]
    out = model.signatures["serving_default"](question=tf.constant(questions),
                                              context=tf.constant(contexts))
    for name in ("answer_text", "answer_start", "answer_end", "score", "has_answer"):
        assert out[name].shape == (len(contexts),)
    for i, context in enumerate(contexts):
        text = out["answer_text"][i].numpy().decode()
        start, end = int(out["answer_start"][i]), int(out["answer_end"][i])
        if bool(out["has_answer"][i]):
            assert 0 <= start < end <= len(context) and context[start:end] == text
        else:
            assert (text, start, end) == ("", -1, -1)
    assert not bool(out["has_answer"][len(ids)])  # the empty context
    # Where the whole context fits in the window, the model finds the answer.
    answers = [out["answer_text"][i].numpy().decode() for i in range(len(ids))
               if len(contexts[i].split()) < 30 and bool(out["has_answer"][i])]
    assert answers and answers.count(ANSWER) >= 0.8 * len(answers)


def test_predictions_json_and_the_export_answer_every_question_alike(squad_run):
    """One answer rule (data/squad/answer_rule.py) for run_squad.py's files and its export."""
    output, contexts = squad_run["output"], squad_run["contexts"]
    predictions = json.loads((output / "predictions.json").read_text())
    nbest = json.loads((output / "nbest_predictions.json").read_text())
    null_odds = json.loads((output / "null_odds.json").read_text())
    model = tf.saved_model.load(str(squad_run["export"]))
    ids = list(contexts)
    out = model.signatures["serving_default"](
        question=tf.constant([squad_run["questions"][i] for i in ids]),
        context=tf.constant([contexts[i] for i in ids]))
    answered = 0
    for i, qas_id in enumerate(ids):
        text = out["answer_text"][i].numpy().decode()
        start, end = int(out["answer_start"][i]), int(out["answer_end"][i])
        assert text == predictions[qas_id], qas_id
        assert bool(out["has_answer"][i]) == (text != "")
        # The best span's entry heads the n-best list's spans; the null entry
        # holds the null score. The export's score is the span's when it
        # answers, the null score when it abstains: the same span and null
        # score, within the float32 rounding of two runs of the model.
        span = next(e for e in nbest[qas_id] if e["text"])
        null = next(e for e in nbest[qas_id] if not e["text"])
        span_score = span["start_logit"] + span["end_logit"]
        null_score = null["start_logit"] + null["end_logit"]
        assert span["text"] == (text or span["text"])
        assert null_odds[qas_id] == pytest.approx(null_score - span_score, abs=1e-5)
        assert float(out["score"][i]) == pytest.approx(span_score if text else null_score,
                                                       abs=1e-4)
        if text:
            answered += 1
            assert contexts[qas_id][start:end] == text
        else:
            assert (start, end) == (-1, -1)
    # Both outcomes are compared.
    assert 0 < answered < len(ids)


def test_v1_prediction_from_the_trained_output_dir(squad_run, tmp_path):
    """A tf2 checkpoint with the span head loads; v1.1 mode skips unanswerable questions."""
    output = tmp_path / "v1"
    result = run_script(f"--init_checkpoint={squad_run['output']}", f"--vocab_file={VOCAB}",
                        "--do_predict", f"--predict_file={squad_run['dev_file']}",
                        "--max_seq_length=48", "--doc_stride=16", "--max_query_length=8",
                        f"--output_dir={output}", "--do_eval")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "without an answer" in result.stderr
    predictions = json.loads((output / "predictions.json").read_text())
    answerable = [i for i in squad_run["contexts"] if not i.endswith("q2")]
    assert list(predictions) == answerable and not (output / "null_odds.json").exists()
    results = (output / "eval_results.txt").read_text()
    assert "exact_match = " in results and "f1 = " in results


@pytest.mark.parametrize("case", ["malformed json", "empty context"])
def test_bad_input_is_one_clear_line(checkpoint, tmp_path, case):
    path = tmp_path / "train.json"
    if case == "malformed json":
        path.write_text('{"data": [', encoding="utf-8")
        message = f"run_squad.py: error: {path}: not valid JSON"
    else:
        _write_squad(path, [{"context": "  ", "qas": [
            {"id": "x1", "question": "who?", "is_impossible": True, "answers": []}]}])
        message = f"run_squad.py: error: {path}: data[0].paragraphs[0] has an empty context"
    result = run_script(f"--init_checkpoint={checkpoint}", f"--vocab_file={VOCAB}",
                        f"--output_dir={tmp_path / 'out'}", "--do_train",
                        f"--train_file={path}", "--max_seq_length=48", "--max_query_length=8",
                        "--version_2_with_negative")
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags, message", [
    (["--max_seq_length=40"],
     "--max_seq_length=40 must be greater than --max_query_length=64 + 3"),
    # 128 - 64 - 3 = 61 context pieces cannot share 128 with the next window.
    (["--max_seq_length=128", "--doc_stride_means=overlap"],
     "--doc_stride=128 pieces of overlap leave no new piece in a window of 61 context "
     "pieces"),
])
def test_windows_without_room_or_progress_are_refused_at_once(checkpoint, tmp_path, flags,
                                                               message):
    result = run_script(f"--init_checkpoint={checkpoint}", f"--output_dir={tmp_path / 'out'}",
                        "--do_predict", f"--predict_file={tmp_path / 'missing.json'}", *flags)
    assert result.returncode != 0
    assert "run_squad.py: error: flags max_seq_length=" in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_epochs_count_windows_by_default_and_questions_on_request(squad_run, checkpoint,
                                                                  tmp_path):
    """--epoch_unit: Hugging Face's step count (windows) or the original's (questions)."""
    line = re.compile(r"Training on (\d+) questions in (\d+) windows: (\d+) steps")
    questions, windows, steps = map(int, line.search(squad_run["stderr"]).groups())
    # The fixture's 40 paragraphs hold 80 answerable and 40 unanswerable
    # questions; several contexts take more than one window.
    assert questions == 120 and windows > questions
    assert steps == int(windows / 8 * 6.0)
    # The fixture's training file again: the same generator, the same draws.
    rng = random.Random(0)
    train_file = _write_squad(tmp_path / "train.json", [_paragraph(rng, i, 3) for i in range(40)])
    result = run_script(
        f"--vocab_file={VOCAB}", f"--init_checkpoint={checkpoint}", "--do_train",
        f"--train_file={train_file}", "--train_batch_size=8", "--num_train_epochs=0.5",
        "--epoch_unit=questions", "--max_seq_length=48", "--doc_stride=16",
        "--max_query_length=8", f"--output_dir={tmp_path / 'out'}",
        "--version_2_with_negative", "--jit_compile=false")
    assert result.returncode == 0, result.stderr[-3000:]
    assert line.search(result.stderr).groups() == (
        str(questions), str(windows), str(int(questions / 8 * 0.5)))


def test_eval_of_a_file_without_answers_is_refused_before_predicting(squad_run, tmp_path):
    """Checked before the work; and a later prediction removes the results it made stale."""
    dataset = json.loads(open(squad_run["dev_file"], encoding="utf-8").read())
    for paragraph in dataset["data"][0]["paragraphs"]:
        for qa in paragraph["qas"]:
            del qa["answers"]
    test_file = tmp_path / "test.json"
    test_file.write_text(json.dumps(dataset), encoding="utf-8")
    output = tmp_path / "out"
    output.mkdir()
    (output / "eval_results.txt").write_text("exact = 99.0\n")
    flags = [f"--init_checkpoint={squad_run['output']}", f"--vocab_file={VOCAB}",
             "--max_seq_length=48", "--doc_stride=16", "--max_query_length=8",
             f"--output_dir={output}", "--version_2_with_negative", "--do_predict",
             f"--predict_file={test_file}", "--jit_compile=false"]
    refused = run_script(*flags, "--do_eval")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        f"run_squad.py: error: --do_eval: {test_file} cannot be scored: question 'p100q0' "
        "(data[0].paragraphs[0].qas[0]) has no 'answers' to score against; drop --do_eval to "
        "only predict")
    assert not (output / "predictions.json").exists()
    predicted = run_script(*flags)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    assert (output / "predictions.json").exists()
    assert not (output / "eval_results.txt").exists()


def test_predict_answers_gives_the_exports_answers_with_their_offsets(squad_run):
    ids = list(squad_run["contexts"])[:4]
    questions = [squad_run["questions"][i] for i in ids]
    contexts = [squad_run["contexts"][i] for i in ids]
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "predict_answers.py"),
         f"--export_dir={squad_run['export']}", "--batch_size=3",
         *[f"--question={q}" for q in questions], *[f"--context={c}" for c in contexts]],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    out = tf.saved_model.load(str(squad_run["export"])).signatures["serving_default"](
        question=tf.constant(questions), context=tf.constant(contexts))
    assert [a["id"] for a in answers] == ["0", "1", "2", "3"]
    for i, (answer, context) in enumerate(zip(answers, contexts, strict=True)):
        assert answer["answer"] == out["answer_text"][i].numpy().decode()
        assert (answer["start"], answer["end"]) == (int(out["answer_start"][i]),
                                                    int(out["answer_end"][i]))
        assert answer["answer"] == (context[answer["start"]:answer["end"]]
                                    if answer["start"] >= 0 else "")
        assert answer["score"] == pytest.approx(float(out["score"][i]), abs=1e-3)
    # Quiet: no long line and no line twice (timestamps aside).
    lines = [re.sub(r"^[IWE]\d{4} [\d:.]+\s+\d+ ", "", line)
             for line in result.stderr.splitlines()]
    assert [line for line in lines if len(line) > 300] == []
    assert len(set(lines)) == len(lines), result.stderr
