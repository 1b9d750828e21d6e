"""Tests for token tagging: the task's loss (tasks/tagging.py), the assembly of word predictions
and the scores (conll.ConllData), serving (serving/tagging.py)."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import conll
from bert_tf.model.heads import ClassifierHead
from bert_tf.serving import tagging
from bert_tf.tasks import TaggingTask
from bert_tf.text import text_ops
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")
LABELS = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]


def test_classifier_head_tags_every_token(tiny_config):
    head = ClassifierHead(tiny_config, 5)
    hidden = tf.random.normal([2, 7, tiny_config.hidden_size])
    per_token = head(hidden)
    assert per_token.shape == (2, 7, 5)
    np.testing.assert_allclose(per_token[1, 3], head(hidden[1:2, 3])[0], atol=1e-5)


def test_loss_counts_scored_positions_only():
    task = TaggingTask(LABELS, conll.ConllSettings(max_seq_length=4))
    logits = tf.random.normal([2, 4, 5], seed=1)
    features = {"label_ids": tf.constant([[0, 1, 2, 0], [0, 3, 0, 0]]),
                "label_weights": tf.constant([[0, 1, 1, 0], [0, 1, 0, 0]], tf.float32)}
    loss = task.losses(features, {"logits": logits})["loss"]
    log_probs = tf.nn.log_softmax(logits).numpy()
    expected = -(log_probs[0, 1, 1] + log_probs[0, 2, 2] + log_probs[1, 1, 3]) / 3
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    # A batch with nothing scored (padding records) has loss 0, not NaN.
    zero = dict(features, label_weights=tf.zeros([2, 4]))
    assert float(task.losses(zero, {"logits": logits})["loss"]) == 0.0


def _window_predictions():
    """Two sentences (3 and 2 words); the first split in two windows."""
    return {
        "predictions": np.array([[0, 1, 2, 0], [0, 0, 3, 0], [0, 3, 4, 0]]),
        "scores": np.array([[0, .9, .8, 0], [0, 0, .7, 0], [0, .6, .5, 0]], np.float32),
        "label_weights": np.array([[0, 1, 1, 0], [0, 0, 1, 0], [0, 1, 1, 0]], np.float32),
        "word_ids": np.array([[0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 1, 0]]),
        "token_losses": np.array([[0, .1, .2, 0], [0, 0, .3, 0], [0, .4, .5, 0]]),
        "sentence_index": np.array([0, 0, 1]),
    }


def test_word_predictions_gather_each_word_from_its_window():
    tag_ids, scores = conll.word_predictions(_window_predictions(), [3, 2])
    assert [ids.tolist() for ids in tag_ids] == [[1, 2, 3], [3, 4]]
    np.testing.assert_allclose(scores[0], [.9, .8, .7])


def test_word_predictions_refuse_a_missing_or_double_prediction():
    predictions = _window_predictions()
    with pytest.raises(ValueError, match="sentence 0, word 2: no prediction"):
        conll.word_predictions(dict(predictions, label_weights=predictions[
            "label_weights"] * np.array([[1], [0], [1]])), [3, 2])
    doubled = dict(predictions, word_ids=np.array([[0, 0, 1, 0], [0, 0, 1, 0], [0, 0, 1, 0]]))
    with pytest.raises(ValueError, match="sentence 0, word 1: predicted twice"):
        conll.word_predictions(doubled, [3, 2])


def _sentences(path):
    """The two sentences of _window_predictions, in a CoNLL file at path."""
    path.write_text("Rio NNP B-LOC\nGrande NNP I-LOC\nflows VBZ O\n\n"
                    "Ana NNP B-PER\nLima NNP I-PER\n", encoding="utf-8")
    return conll.read_conll(str(path))


def test_score_is_conlleval_entity_f1_of_the_words(tmp_path):
    data = conll.ConllData(conll.ConllSettings(), None, labels=LABELS)
    references = [["B-LOC", "I-LOC", "O"], ["B-PER", "I-PER"]]
    sentences = _sentences(tmp_path / "valid.txt")
    assert [list(s.tags) for s in sentences] == references
    metrics = data.score(_window_predictions(), conll.ConllReferences(sentences))
    predicted = [["B-LOC", "I-LOC", "B-PER"], ["B-PER", "I-PER"]]
    expected = conll.entity_scores(references, predicted)
    assert metrics["eval_f1"] == pytest.approx(expected["f1"])
    assert metrics["eval_precision"] == pytest.approx(2 / 3)
    assert metrics["eval_recall"] == 1.0
    assert metrics["eval_token_accuracy"] == pytest.approx(4 / 5)
    assert metrics["eval_loss"] == pytest.approx(1.5 / 5)


def test_outputs_are_the_file_with_a_predicted_tag_column(tmp_path):
    path = tmp_path / "test.txt"
    references = conll.ConllReferences(_sentences(path), str(path))
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    conll.ConllData(conll.ConllSettings(), None, labels=LABELS).write_outputs(
        _window_predictions(), references, str(output_dir))
    assert (output_dir / "test_predictions.txt").read_text(encoding="utf-8") == (
        "Rio NNP B-LOC B-LOC\nGrande NNP I-LOC I-LOC\nflows VBZ O B-PER\n\n"
        "Ana NNP B-PER B-PER\nLima NNP I-PER I-PER\n")


def test_words_split_with_byte_offsets_as_basic_tokenization_splits():
    tokenizer = text_ops.BertTextTokenizer(VOCAB)
    text = "Zürich,  the man\tsaid: “no”"
    words, starts, ends = tokenizer.split_words_with_offsets(tf.constant([text, ""]))
    raw = text.encode()
    got = [w.decode() for w in words[0].numpy()]
    assert got == ["Zürich", ",", "the", "man", "said", ":", "“", "no", "”"]
    assert [raw[s:e].decode() for s, e in zip(starts[0].numpy(), ends[0].numpy(),
                                              strict=True)] == got
    assert words[1].shape == (0,)


def test_entities_join_words_as_conlleval_and_give_character_offsets():
    text = tf.constant(["Müller met Ann Lee in Rome", "nothing here", "Ann Lee"])
    words = tf.ragged.constant([["Müller", "met", "Ann", "Lee", "in", "Rome"],
                                ["nothing", "here"], ["Ann", "Lee"]])
    flat = [w.decode() for w in words.flat_values.numpy()]
    starts, ends = [], []
    for row, sentence in enumerate(text.numpy()):
        position = 0
        for word in words[row].numpy():
            start = sentence.index(word, position)
            starts.append(start)
            ends.append(start + len(word))
            position = start + len(word)
    # Müller: B-PER; Ann: I-PER after O opens an entity; Lee: I-PER continues;
    # Rome: B-LOC. Sentence 3: Ann B-PER, Lee B-PER: two entities.
    types = ["PER", "", "PER", "PER", "", "LOC", "", "", "PER", "PER"]
    begins = [True, False, False, False, False, True, False, False, True, True]
    scores = [0.9, 1, 0.8, 0.6, 1, 0.5, 1, 1, 0.4, 0.2]
    assert len(flat) == len(types)
    out = tagging.entities_from_word_tags(text, words, tf.constant(starts, tf.int64),
                            tf.constant(ends, tf.int64), tf.constant(types),
                            tf.constant(begins), tf.constant(scores, tf.float32))
    assert out["num_entities"].numpy().tolist() == [3, 0, 2]
    assert [t.decode() for t in out["entity_type"][0].numpy()] == ["PER", "PER", "LOC"]
    assert [t.decode() for t in out["entity_text"][0].numpy()] == ["Müller", "Ann Lee", "Rome"]
    # Character offsets: "ü" is two bytes but one character.
    assert out["entity_start"][0].numpy().tolist() == [0, 11, 22]
    assert out["entity_end"][0].numpy().tolist() == [6, 18, 26]
    np.testing.assert_allclose(out["entity_score"][0], [0.9, 0.7, 0.5], rtol=1e-6)
    assert [t.decode() for t in out["entity_text"][2].numpy()] == ["Ann", "Lee", ""]
    assert out["entity_type"][1].numpy().tolist() == [b"", b"", b""]


@pytest.mark.parametrize(("window_size", "stride"), [(6, 3), (7, 2), (5, 5), (14, 5)])
def test_the_exports_windows_are_run_ners(window_size, stride):
    """sentence_windows and scoring_window, in the graph, against conll.windows."""
    num_pieces = list(range(0, 40))
    sentence, start, end = tagging.sentence_windows(
        tf.constant(num_pieces, tf.int64), window_size, stride)
    for n in num_pieces:
        # Every piece is a word's first piece.
        expected = conll.windows(n, list(range(n)), window_size, stride)
        mine = np.flatnonzero(sentence.numpy() == n)
        assert [(w.start, w.end) for w in expected] == list(
            zip(start.numpy()[mine], end.numpy()[mine], strict=True))
        if n == 0:
            continue  # No word to score.
        scored = tagging.scoring_window(tf.range(n, dtype=tf.int64), tf.fill([n], tf.cast(
            n, tf.int64)), window_size, stride).numpy()
        assert scored.tolist() == [next(i for i, w in enumerate(expected) if piece in w.scored)
                                   for piece in range(n)]
