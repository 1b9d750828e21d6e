"""Tests for heads.SpanHead, bert_tf/tasks/question_answering.py, squad.SquadSettings and
SquadData's scores, and bert_tf/serving/question_answering.py.

The head's names in the three checkpoint formats, the loss, span decoding,
scoring on hand-made logits, and the serving module's offsets (with a stub
encoder and head, so that the answer is known).
"""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file

from bert_tf.checkpoints import checkpoints
from bert_tf.data import squad
from bert_tf.model.heads import SpanHead, head_types
from bert_tf.model.modeling import BertModel
from bert_tf.serving import question_answering
from bert_tf.tasks import QuestionAnsweringTask
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")


def _span_model(config):
    encoder = BertModel(config)
    return encoder, {"squad": SpanHead(config)}


def _logits(model, inputs):
    encoder, heads = model
    return [t.numpy() for t in heads["squad"](encoder(inputs)["sequence_output"])]


def test_span_head_scores_every_position_in_float32(tiny_config, tiny_inputs):
    encoder, heads = _span_model(tiny_config)
    sequence = encoder(tiny_inputs)["sequence_output"]
    start, end = heads["squad"](sequence)
    assert start.shape == end.shape == (3, 12) and start.dtype == tf.float32
    weights = heads["squad"].output_weights.numpy()
    np.testing.assert_allclose(end[1, 4], sequence[1, 4].numpy() @ weights[1], atol=1e-5)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_span_head_gives_float32_logits_under_mixed_precision(tiny_config, policy):
    previous = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        head = SpanHead(tiny_config)
        hidden = tf.random.normal([2, 5, tiny_config.hidden_size], seed=3)
        start, end = head(tf.cast(hidden, head.compute_dtype))
    finally:
        tf.keras.mixed_precision.set_global_policy(previous)
    assert start.dtype == end.dtype == tf.float32
    expected = hidden.numpy() @ head.output_weights.numpy()[0]
    np.testing.assert_allclose(start.numpy(), expected, atol=0.1)


def test_span_head_round_trips_through_every_format(tmp_path, tiny_config, tiny_inputs):
    source = _span_model(tiny_config)
    source[1]["squad"].output_bias.assign([0.5, -0.25])
    google = checkpoints.save_google_checkpoint(str(tmp_path / "google" / "model.ckpt"),
                                                *source)
    shapes = dict(tf.train.list_variables(google))
    assert shapes["cls/squad/output_weights"] == [2, 64]
    assert shapes["cls/squad/output_bias"] == [2]

    checkpoints.convert(google, str(tmp_path / "hf"), "hf", head_types())
    tensors = load_file(str(tmp_path / "hf" / "model.safetensors"))
    # BertForQuestionAnswering's names, [out, in] as ours: not transposed.
    np.testing.assert_array_equal(tensors["qa_outputs.weight"],
                                  source[1]["squad"].output_weights.numpy())
    np.testing.assert_array_equal(tensors["qa_outputs.bias"], [0.5, -0.25])
    assert "bert.embeddings.word_embeddings.weight" in tensors

    checkpoints.convert(str(tmp_path / "hf"), str(tmp_path / "tf2" / "model"), "tf2",
                        head_types())
    tf2_names = dict(tf.train.list_variables(str(tmp_path / "tf2")))
    assert "squad/output_weights/.ATTRIBUTES/VARIABLE_VALUE" in tf2_names
    checkpoints.convert(str(tmp_path / "tf2"), str(tmp_path / "back" / "model.ckpt"),
                        "google", head_types())

    for folder in ("google", "hf", "tf2", "back"):
        found = checkpoints.detect_heads(str(tmp_path / folder), BertModel(tiny_config),
                                         head_types())
        assert list(found) == ["squad"] and isinstance(found["squad"], SpanHead)
        target = _span_model(tiny_config)
        report = checkpoints.load_weights(str(tmp_path / folder), *target)
        assert report.initialized == []
        for a, b in zip(_logits(source, tiny_inputs), _logits(target, tiny_inputs),
                        strict=True):
            np.testing.assert_array_equal(a, b)


def test_pretrained_checkpoint_leaves_the_span_head_new(tmp_path, tiny_config):
    checkpoints.save_google_checkpoint(str(tmp_path / "bert_model.ckpt"),
                                       BertModel(tiny_config))
    report = checkpoints.load_weights(str(tmp_path), *_span_model(tiny_config))
    assert report.initialized == ["cls/squad/output_weights", "cls/squad/output_bias"]


def test_loss_is_the_mean_start_and_end_cross_entropy_of_real_records():
    task = QuestionAnsweringTask(squad.SquadSettings(max_seq_length=6, max_query_length=2))
    start = tf.random.normal([3, 6], seed=1)
    end = tf.random.normal([3, 6], seed=2)
    features = {"start_positions": tf.constant([[2], [0], [5]]),
                "end_positions": tf.constant([[3], [0], [1]]),
                "unique_ids": tf.constant([[7], [8], [9]]),
                "is_real_example": tf.constant([[1], [1], [0]])}
    losses = task.losses(features, {"start_logits": start, "end_logits": end})
    log_start, log_end = tf.nn.log_softmax(start).numpy(), tf.nn.log_softmax(end).numpy()
    expected_start = -(log_start[0, 2] + log_start[1, 0]) / 2
    expected_end = -(log_end[0, 3] + log_end[1, 0]) / 2
    assert float(losses["start_loss"]) == pytest.approx(expected_start, rel=1e-5)
    assert float(losses["end_loss"]) == pytest.approx(expected_end, rel=1e-5)
    assert float(losses["loss"]) == pytest.approx((expected_start + expected_end) / 2, rel=1e-5)


def test_prediction_records_lack_the_answer_positions():
    task = QuestionAnsweringTask(squad.SquadSettings(max_seq_length=8, max_query_length=2))
    training = {spec.name for spec in task.feature_specs()}
    prediction = {spec.name for spec in task.prediction_feature_specs()}
    assert training - prediction == {"start_positions", "end_positions"}
    assert "is_real_example" in prediction and "unique_ids" in prediction


def test_predictions_are_padded_back_to_max_seq_length():
    task = QuestionAnsweringTask(squad.SquadSettings(max_seq_length=8, max_query_length=2))
    features = {"unique_ids": tf.constant([[5], [6]]), "is_real_example": tf.constant([[1], [0]])}
    logits = tf.ones([2, 5])
    out = task.predictions(features, {"start_logits": logits, "end_logits": logits * 2})
    assert out["unique_ids"].numpy().tolist() == [5, 6]
    assert out["is_real_example"].numpy().tolist() == [1, 0]
    assert out["start_logits"].shape == out["end_logits"].shape == (2, 8)
    assert out["end_logits"][0, 4] == 2 and out["end_logits"][0, 5] < -1000


@pytest.mark.parametrize("arguments, message", [
    ({"max_seq_length": 10, "max_query_length": 7}, "must be greater than"),
    ({"max_answer_length": 0}, "at least 1"),
])
def test_lengths_that_leave_no_room_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        squad.SquadSettings(**arguments)


def test_best_spans_keep_start_before_end_inside_the_context():
    # Columns 0-1 are [CLS] and the question, 2-6 the context, 7 [SEP]: the
    # high logits there are no answer. (4, 3) would score 12, but ends first.
    start = tf.constant([[9, 9, 0, 1, 6, 0, 0, 9.0], [0, 0, 0, 0, 0, 0, 0, 0.0]])
    end = tf.constant([[9, 9, 0, 6, 0, 2, 1, 9.0], [0, 0, 0, 0, 0, 0, 0, 0.0]])
    context_start = tf.constant([2, 2], tf.int64)
    begin, finish, score, found = question_answering.best_spans(
        start, end, context_start, tf.constant([5, 0], tf.int64), max_answer_length=3)
    assert (int(begin[0]), int(finish[0]), float(score[0])) == (4, 5, 8.0)
    assert found.numpy().tolist() == [True, False]
    assert (int(begin[1]), int(finish[1]), float(score[1])) == (0, 0, 0.0)
    # max_answer_length=1 allows single pieces only.
    begin, finish, score, _ = question_answering.best_spans(
        start, end, context_start, tf.constant([5, 0], tf.int64), max_answer_length=1)
    assert (int(begin[0]), int(finish[0]), float(score[0])) == (3, 3, 7.0)


def _squad_file(path):
    """Two paragraphs; the second one's context is cut into several windows."""
    long_context = " ".join(["the river was long and the water was cold"] * 4
                            + ["then his first car began to move"])
    data = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [
        {"context": "she had the first house in town.",
         "qas": [{"id": "q1", "question": "what did she have?", "is_impossible": False,
                  "answers": [{"text": "the first house", "answer_start": 8}]},
                 {"id": "q2", "question": "was he in it?", "is_impossible": True,
                  "answers": []}]},
        {"context": long_context,
         "qas": [{"id": "q3", "question": "what began to move?", "is_impossible": False,
                  "answers": [{"text": "his first car",
                               "answer_start": long_context.index("his first car")}]}]},
    ]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _gold_logits(features, max_seq_length):
    """Logits that point at each window's training answer (0, 0: no answer)."""
    start = np.zeros([len(features), max_seq_length], np.float32)
    end = np.zeros_like(start)
    for i, feature in enumerate(features):
        start[i, feature.start_position] = 10.0
        end[i, feature.end_position] = 10.0
    return {"unique_ids": np.array([f.unique_id for f in features]), "start_logits": start,
            "end_logits": end}


@pytest.mark.parametrize("version_2", [False, True])
def test_score_runs_the_official_metrics_on_the_chosen_answers(tmp_path, version_2):
    path = _squad_file(tmp_path / "squad.json")
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    examples, _ = squad.read_squad_examples(path, True, version_2)
    features, _ = squad.convert_examples_to_features(
        examples, tokenizer, max_seq_length=24, doc_stride=6, max_query_length=8,
        is_training=True)
    assert len({f.example_index for f in features}) < len(features)  # several windows
    data = squad.SquadData(squad.SquadSettings(max_seq_length=24,
                                               version_2_with_negative=version_2,
                                               max_query_length=8), tokenizer)
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    references = squad.SquadReferences(examples, features, path)
    metrics = data.score(_gold_logits(features, 24), references)
    data.write_outputs(_gold_logits(features, 24), references, str(output_dir))
    predictions = json.loads((output_dir / "predictions.json").read_text())
    assert predictions["q1"] == "the first house" and predictions["q3"] == "his first car"
    assert (output_dir / "nbest_predictions.json").exists()
    if version_2:
        assert predictions["q2"] == ""
        assert metrics["exact"] == 100.0 and metrics["f1"] == 100.0 and metrics["total"] == 3
        assert (output_dir / "null_odds.json").exists()
    else:
        assert "q2" not in predictions
        assert metrics == {"exact_match": 100.0, "f1": 100.0}


class _OneHotEncoder:
    """A stand-in encoder: each position's hidden state is its token id, one-hot."""

    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def __call__(self, inputs, training=False):
        return {"sequence_output": tf.one_hot(inputs["input_ids"], self.vocab_size)}


class _PickHead:
    """A stand-in span head: the answer starts at start_token and ends at end_token."""

    def __init__(self, start_id, end_id):
        self.start_id, self.end_id = start_id, end_id

    def __call__(self, sequence):
        return sequence[:, :, self.start_id] * 10.0, sequence[:, :, self.end_id] * 10.0


def _serving(start_token, end_token, version_2=False, max_seq_length=16):
    vocab = tokenization.load_vocab(VOCAB)
    return question_answering.QuestionAnsweringServingModule(
        _OneHotEncoder(len(vocab)), _PickHead(vocab[start_token], vocab[end_token]), VOCAB,
        True, max_seq_length, max_query_length=4, max_answer_length=5,
        version_2_with_negative=version_2)


def _answers(module, questions, contexts):
    out = module.answer(tf.constant(questions), tf.constant(contexts))
    return [(out["answer_text"][i].numpy().decode(), int(out["answer_start"][i]),
             int(out["answer_end"][i]), bool(out["has_answer"][i]))
            for i in range(len(questions))]


def test_serving_answer_is_the_contexts_own_text_at_character_offsets():
    module = _serving("great", "##s")
    contexts = ["Über  the GREAT Rivers, then first.", "", "the great rivers"]
    got = _answers(module, ["where?", "where?", "great rivers?"], contexts)
    # The span ends inside "Rivers" (at "##s"): the answer is the whole word.
    start = contexts[0].index("GREAT")
    assert got[0] == ("GREAT Rivers", start, start + len("GREAT Rivers"), True)
    assert got[1] == ("", -1, -1, False)
    # "great" of the question is no answer: only the context's pieces are.
    assert got[2] == ("great rivers", 4, 16, True)


def test_serving_reads_a_long_context_through_its_windows():
    module = _serving("first", "first")
    # [CLS] 2 question pieces [SEP] leave 11 context pieces and one [SEP] in
    # a window: "first" is in the second window.
    context = "the " * 11 + "first"
    (text, start, end, found), = _answers(module, ["what first"], [context])
    assert (text, start, end, found) == ("first", context.index("first"), len(context), True)


# Plain lower-case words of the vocab: their words and pieces are the same
# in run_squad.py's reading (split on whitespace) and in the served graph's.
WORDS = ("the man went to the store and bought a gallon of milk he said that it was not "
         "to be and that the man of the house was in it").split()


def _long_contexts(seed):
    """Questions, and contexts of 3 to 40 words (1 to 9 windows below)."""
    rng = np.random.default_rng(seed)
    questions = [" ".join(rng.choice(WORDS, size=rng.integers(1, 7))) for _ in range(6)]
    contexts = [" ".join(rng.choice(WORDS, size=n)) for n in (3, 12, 25, 40, 17, 33)]
    return questions, contexts


def _windows_answers(encoder, head, questions, contexts, max_seq_length, doc_stride,
                     doc_stride_means, max_query_length, max_answer_length):
    """Each question's best span as run_squad.py's windows give it, by brute force.

    Returns:
      [(answer text, score, null score)]: the best start + end logit over
      every window's allowed spans (start at a max-context piece), and the
      lowest position-0 score over the windows.
    """
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    examples = [squad.SquadExample(qas_id=str(i), question_text=q, context_text=c,
                                   doc_tokens=c.split(), char_to_word_offset=[],
                                   orig_answer_text=None, start_position=None,
                                   end_position=None, is_impossible=False, answers=[])
                for i, (q, c) in enumerate(zip(questions, contexts, strict=True))]
    features, _ = squad.convert_examples_to_features(
        examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training=False,
        doc_stride_means=doc_stride_means)
    inputs = {name: np.array([getattr(f, name) for f in features], np.int32)
              for name in ("input_ids", "input_mask", "segment_ids")}
    start_logits, end_logits = [t.numpy() for t in head(encoder(inputs)["sequence_output"])]
    best = {}
    for f, starts, ends in zip(features, start_logits, end_logits, strict=True):
        doc_tokens = examples[f.example_index].doc_tokens
        text, score, null = best.get(f.example_index, ("", -np.inf, np.inf))
        null = min(null, starts[0] + ends[0])
        for s in f.token_to_orig_map:
            for e in f.token_to_orig_map:
                if f.token_is_max_context[s] and 0 <= e - s < max_answer_length:
                    if starts[s] + ends[e] > score:
                        score = starts[s] + ends[e]
                        text = " ".join(doc_tokens[f.token_to_orig_map[s]:
                                                   f.token_to_orig_map[e] + 1])
        best[f.example_index] = (text, score, null)
    # Several windows a question: the test would mean little otherwise.
    assert len(features) > 2 * len(examples)
    return [best[i] for i in range(len(examples))]


@pytest.mark.parametrize("shapes, doc_stride_means",
                         [("dynamic", "step"), ("static", "step"), ("dynamic", "overlap")])
def test_serving_answers_as_run_squads_windows_do(tiny_config, shapes, doc_stride_means):
    tf.keras.utils.set_random_seed(3)
    # Wide weights, so that spans score clearly apart.
    config = dataclasses.replace(tiny_config, vocab_size=len(tokenization.load_vocab(VOCAB)),
                                 initializer_range=0.5)
    encoder, heads = _span_model(config)
    questions, contexts = _long_contexts(seed=4)
    max_seq_length, doc_stride = 16, 5
    expected = _windows_answers(encoder, heads["squad"], questions, contexts, max_seq_length,
                                doc_stride, doc_stride_means, max_query_length=4,
                                max_answer_length=3)
    for version_2 in (False, True):
        module = question_answering.QuestionAnsweringServingModule(
            encoder, heads["squad"], VOCAB, True, max_seq_length, max_query_length=4,
            max_answer_length=3, version_2_with_negative=version_2, doc_stride=doc_stride,
            doc_stride_means=doc_stride_means, shapes=shapes)
        out = module.answer(tf.constant(questions), tf.constant(contexts))
        for i, (text, score, null) in enumerate(expected):
            answers = not version_2 or null - score <= 0.0
            assert bool(out["has_answer"][i]) == answers
            served = out["answer_text"][i].numpy().decode()
            assert served == (text if answers else "")
            # Within float32 rounding. The serving graph runs the windows in another batch
            # shape, so oneDNN may pick other kernels; the encoder's outputs then differ by
            # ~1e-6, and each logit sums 64 of them times weights of std 0.5: up to ~3e-5
            # on some CPUs, far below the gap between two spans' scores.
            np.testing.assert_allclose(float(out["score"][i]), score if answers else null,
                                       rtol=0, atol=1e-4)
            if answers:
                assert contexts[i][int(out["answer_start"][i]):
                                   int(out["answer_end"][i])] == text


def test_serving_v2_model_abstains_when_the_null_score_wins():
    module = _serving("[CLS]", "[CLS]", version_2=True)
    out = module.answer(tf.constant(["who?"]), tf.constant(["the river"]))
    assert not bool(out["has_answer"][0]) and out["answer_text"][0].numpy() == b""
    assert int(out["answer_start"][0]) == -1 and float(out["score"][0]) == 20.0
