"""Tests for run_ner.py and predict_entities.py, run as a user runs them (subprocesses).

A tiny BERT (2 layers, hidden 32) over tests/fixtures/pretraining_vocab.txt
learns a made-up tagging set in which each word has one tag, so that a short
training run predicts entities and the outputs can be compared.
"""

import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)

from bert_tf.data import conll
from bert_tf.text import tokenization
from tests import helpers
from tests.helpers.tiny_models import tiny_google_checkpoint

ROOT = helpers.ROOT
VOCAB = os.path.join(ROOT, "tests", "fixtures", "pretraining_vocab.txt")
# Each word's tag; "his first" is a two-word location. "was" and "in" are
# in no training sentence.
TAGS = {"he": "B-PER", "she": "B-PER", "him": "I-PER", "his": "B-LOC", "first": "I-LOC",
        "the": "O", "of": "O", "and": "O", "was": "O", "in": "O"}


def _sentence(rng):
    words = []
    for _ in range(rng.randint(2, 9)):
        words += ["his", "first"] if rng.random() < 0.2 else [rng.choice(list(TAGS)[:-2] +
                                                                          ["the", "of"])]
    return words


def _tags(words):
    return [TAGS[w] for w in words]


def _write(path, sentences, layout):
    """Writes sentences in the "word TAG 0" layout, or as words only ("words")."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("-DOCSTART- -X- -X- O\n\n" if layout == "4" else "")
        for words in sentences:
            # Words only: words of no tag may be among them.
            tags = [None] * len(words) if layout == "words" else _tags(words)
            for word, tag in zip(words, tags, strict=True):
                f.write({"3": f"{word} {tag} 0\n", "4": f"{word} NN I-NP {tag}\n",
                         "words": f"{word}\n"}[layout])
            f.write("\n")


def run_script(script, *args, stdin=None):
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_google_checkpoint(str(tmp_path_factory.mktemp("google")), VOCAB)[0]


@pytest.fixture(scope="module")
def ner_run(checkpoint, tmp_path_factory):
    """Train, eval, predict and export on a made-up set; one long sentence is windowed."""
    tmp = tmp_path_factory.mktemp("ner")
    rng = random.Random(0)
    data_dir = tmp / "data"
    data_dir.mkdir()
    _write(data_dir / "train.txt", [_sentence(rng) for _ in range(200)], "3")
    valid = [_sentence(rng) for _ in range(20)] + [["he", "was", "in", "his", "first"] * 5]
    _write(data_dir / "dev.txt", valid, "4")
    test = [_sentence(rng) for _ in range(7)] + [["she", "and", "him"] * 9]
    _write(data_dir / "test.txt", test, "words")
    output_dir, export_dir = tmp / "output", tmp / "export"
    result = run_script(
        "run_ner.py", f"--data_dir={data_dir}", f"--init_checkpoint={checkpoint}",
        f"--vocab_file={VOCAB}", f"--output_dir={output_dir}", f"--export_dir={export_dir}",
        "--do_train", "--do_eval", "--do_predict", "--max_seq_length=16",
        "--window_stride=5", "--train_batch_size=16", "--eval_batch_size=4",
        "--predict_batch_size=3", "--num_train_epochs=6", "--learning_rate=5e-3",
        "--jit_compile=false", "--seed=1")
    assert result.returncode == 0, result.stderr[-3000:]
    return {"data_dir": data_dir, "output": output_dir, "export": export_dir, "test": test,
            "valid": valid, "stdout": result.stdout}


def test_eval_results_hold_entity_scores_per_type(ner_run):
    results = dict(line.split(" = ") for line in
                   (ner_run["output"] / "eval_results.txt").read_text().splitlines())
    for key in ("eval_precision", "eval_recall", "eval_f1", "eval_PER_f1", "eval_LOC_f1",
                "eval_token_accuracy", "eval_loss", "global_step"):
        assert key in results
    # The set is learnable word by word: a short run gets most entities.
    assert float(results["eval_f1"]) > 0.8
    assert "eval_f1 = " in ner_run["stdout"]
    labels = (ner_run["output"] / "label_list.txt").read_text().split()
    assert labels == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    config = json.loads((ner_run["output"] / "hf_settings.json").read_text())["config"]
    assert config["architectures"] == ["BertForTokenClassification"]
    assert [config["id2label"][str(i)] for i in range(5)] == labels


def test_predictions_keep_the_input_lines_and_tag_every_word(ner_run):
    source = (ner_run["data_dir"] / "test.txt").read_text().splitlines()
    output = (ner_run["output"] / "test_predictions.txt").read_text().splitlines()
    assert len(output) == len(source)
    for line, out in zip(source, output, strict=True):
        assert out == line if not line else out.split(" ")[0] == line
    sentences = conll.read_conll(str(ner_run["output"] / "test_predictions.txt"))
    assert [list(s.words) for s in sentences] == ner_run["test"]
    # The long sentence (27 words, 3 windows) is tagged right word by word.
    assert list(sentences[-1].tags) == _tags(ner_run["test"][-1])


def test_exported_model_finds_the_entities_of_raw_text(ner_run):
    # The long sentence too: the export cuts it into run_ner.py's windows.
    test = ner_run["test"]
    predicted = conll.read_conll(str(ner_run["output"] / "test_predictions.txt"))
    model = tf.saved_model.load(str(ner_run["export"]))
    texts = [" ".join(words) for words in test]
    out = model.signatures["serving_default"](text=tf.constant(texts))
    for i, (text, sentence) in enumerate(zip(texts, predicted, strict=True)):
        expected = []
        for entity_type, start, end in conll.entity_spans(list(sentence.tags)):
            begin = len(" ".join(sentence.words[:start])) + (1 if start else 0)
            expected.append((entity_type, begin, begin + len(" ".join(
                sentence.words[start:end]))))
        n = int(out["num_entities"][i])
        got = [(out["entity_type"][i, j].numpy().decode(), int(out["entity_start"][i, j]),
                int(out["entity_end"][i, j])) for j in range(n)]
        assert got == expected
        for j in range(n):
            start, end = got[j][1:]
            assert out["entity_text"][i, j].numpy().decode() == text[start:end]
            assert 0 < float(out["entity_score"][i, j]) <= 1
    assert int(np.sum(out["num_entities"])) > 0


def test_predict_entities_prints_one_escaped_line_per_entity(ner_run):
    sentences = ["he and the his first", "the\tof", "", "he and the his first"]
    result = run_script("predict_entities.py", f"--export_dir={ner_run['export']}", *sentences)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert [line.split("\t")[:4] for line in lines] == [
        ["0", "PER", "0", "2"], ["0", "LOC", "11", "20"],
        ["3", "PER", "0", "2"], ["3", "LOC", "11", "20"]]
    assert lines[1].split("\t")[5] == "his first"
    assert "predict_entities.py: warning: argument 3 is empty" in result.stderr

    # The same sentences on stdin, in batches of 3: the same lines, numbered across batches.
    from_stdin = run_script("predict_entities.py", f"--export_dir={ner_run['export']}",
                            "--input_file=-", "--batch_size=3",
                            stdin="".join(f"{sentence}\n" for sentence in sentences))
    assert from_stdin.returncode == 0, from_stdin.stderr[-2000:]
    assert from_stdin.stdout == result.stdout
    assert ("predict_entities.py: warning: <stdin>: 1 line with an empty text, the first "
            "line 3" in from_stdin.stderr)


def test_predict_entities_reads_a_line_of_any_length_as_run_ner_does(ner_run, tmp_path):
    # 2,000 words, about 8,000 characters: one window of 14 pieces holds 14.
    words = ["he", "was", "in", "his", "first"] * 400
    text = " ".join(words)
    result = run_script("predict_entities.py", f"--export_dir={ner_run['export']}", text)
    assert result.returncode == 0, result.stderr[-2000:]
    served = [(kind, int(start), int(end)) for _, kind, start, end, _, _ in
              (line.split("\t") for line in result.stdout.splitlines())]
    # run_ner.py --do_predict on the same sentence, in a copy of the run's folder.
    output_dir = shutil.copytree(ner_run["output"], tmp_path / "output")
    _write(tmp_path / "long.txt", [words], "words")
    predicted = run_script(
        "run_ner.py", f"--data_dir={ner_run['data_dir']}", f"--vocab_file={VOCAB}",
        f"--init_checkpoint={output_dir}", f"--output_dir={output_dir}", "--do_predict",
        f"--predict_file={tmp_path / 'long.txt'}", "--max_seq_length=16", "--window_stride=5",
        "--predict_batch_size=64", "--jit_compile=false")
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    (sentence,) = conll.read_conll(str(output_dir / "long_predictions.txt"))
    expected = []
    for entity_type, start, end in conll.entity_spans(list(sentence.tags)):
        begin = len(" ".join(words[:start])) + (1 if start else 0)
        expected.append((entity_type, begin, begin + len(" ".join(words[start:end]))))
    assert served == expected
    # Entities to the line's end, not only in its first window.
    assert max(start for _, start, _ in served) > len(text) - 100


def test_words_of_several_pieces_take_the_same_windows_in_run_ner_and_the_export(
        ner_run, tmp_path):
    """A word of several pieces moves the later words' first pieces, and so their windows."""
    # Words of two or three pieces ("hisworks" is "his ##work ##s"), among one-piece ones.
    many = ["hes", "firsts", "ofers", "hisos", "inling", "sheps", "himwater", "andlines",
            "hisworks"]
    rng = random.Random(3)
    sentences = [[rng.choice(many + list(TAGS)) for _ in range(n)] for n in (60, 31, 12, 4)]
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    pieces = [sum(len(tokenizer.tokenize(w)) for w in words) for words in sentences]
    # Windows of 14 pieces: all but the last sentence take several.
    assert pieces[0] > 4 * 14 and pieces[2] > 14 >= pieces[3]
    assert all(pieces[i] > len(sentences[i]) for i in range(3))
    _write(tmp_path / "many.txt", sentences, "words")
    (tmp_path / "lines.txt").write_text("".join(" ".join(words) + "\n" for words in sentences),
                                        encoding="utf-8")
    served = [[] for _ in sentences]
    result = run_script("predict_entities.py", f"--export_dir={ner_run['export']}",
                        f"--input_file={tmp_path / 'lines.txt'}")
    assert result.returncode == 0, result.stderr[-2000:]
    for line in result.stdout.splitlines():
        index, kind, start, end, _, _ = line.split("\t")
        served[int(index)].append((kind, int(start), int(end)))
    # run_ner.py --do_predict on the same sentences, in a copy of the run's folder.
    output_dir = shutil.copytree(ner_run["output"], tmp_path / "output")
    predicted = run_script(
        "run_ner.py", f"--data_dir={ner_run['data_dir']}", f"--vocab_file={VOCAB}",
        f"--init_checkpoint={output_dir}", f"--output_dir={output_dir}", "--do_predict",
        f"--predict_file={tmp_path / 'many.txt'}", "--max_seq_length=16", "--window_stride=5",
        "--predict_batch_size=8", "--jit_compile=false")
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    tagged = conll.read_conll(str(output_dir / "many_predictions.txt"))
    for words, sentence, entities in zip(sentences, tagged, served, strict=True):
        expected = []
        for entity_type, start, end in conll.entity_spans(list(sentence.tags)):
            begin = len(" ".join(words[:start])) + (1 if start else 0)
            expected.append((entity_type, begin, begin + len(" ".join(words[start:end]))))
        assert entities == expected
    assert sum(map(len, served)) > 5


def test_predict_text_refuses_a_tagger_export_naming_the_right_tool(ner_run):
    result = run_script("predict_text.py", f"--export_dir={ner_run['export']}", "he and the")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"predict_text.py: error: {ner_run['export']} holds a TaggingTask model, not a "
        "ClassificationTask one: use predict_entities.py")


@pytest.mark.parametrize("case", ["no tag", "unknown tag"])
def test_bad_input_is_one_clear_line(checkpoint, tmp_path, case):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _write(data_dir / "train.txt", [["he", "was"]], "3")
    if case == "no tag":
        (data_dir / "train.txt").write_text("he B-PER 0\nwas\n", encoding="utf-8")
        message = f"{data_dir / 'train.txt'}:2: "
    else:
        (data_dir / "valid.txt").write_text("he B-ORG 0\n", encoding="utf-8")
        message = f"{data_dir / 'valid.txt'}:1: tag 'B-ORG' is not one the model was trained"
    result = run_script("run_ner.py", f"--data_dir={data_dir}",
                        f"--init_checkpoint={checkpoint}", f"--vocab_file={VOCAB}",
                        f"--output_dir={tmp_path / 'out'}", "--do_train", "--do_eval",
                        "--max_seq_length=16", "--train_batch_size=1")
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
