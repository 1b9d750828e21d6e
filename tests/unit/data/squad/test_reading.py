"""Tests for bert_tf/data/squad/reading.py: SQuAD JSON files -> SquadExample."""

import json

import pytest

from bert_tf.data.squad import reading

CONTEXT = "The leader was John Smith (1895-1943).\u202fHe  lived\tin Paris."


def _write(tmp_path, data, name="squad.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _dataset(qas, context=CONTEXT):
    return {"version": "v2.0", "data": [{"title": "T", "paragraphs": [
        {"context": context, "qas": qas}]}]}


def _qa(qid, question="Who?", answers=(), is_impossible=False):
    return {"id": qid, "question": question, "is_impossible": is_impossible,
            "answers": [{"text": text, "answer_start": start} for text, start in answers]}


def test_split_context_splits_on_the_originals_whitespace_only():
    words, offsets = reading.split_context(" a\u202fb  c\u00a0d")
    # U+202F splits, U+00A0 (no-break space) does not.
    assert words == ["a", "b", "c\u00a0d"]
    assert offsets == [-1, 0, 0, 1, 1, 1, 2, 2, 2]


def test_training_answer_becomes_word_positions(tmp_path):
    start = CONTEXT.index("1895")
    path = _write(tmp_path, _dataset([_qa("q1", answers=[("1895", start)])]))
    (example,), stats = reading.read_squad_examples(path, is_training=True,
                                                    version_2_with_negative=False)
    assert stats == {"skipped_answer_mismatch": 0, "skipped_unanswerable": 0}
    assert example.doc_tokens[example.start_position] == "(1895-1943)."
    assert example.start_position == example.end_position == 5
    assert example.orig_answer_text == "1895"
    assert example.answers == ["1895"]
    assert len(example.char_to_word_offset) == len(example.context_text) == len(CONTEXT)


def test_answer_over_several_words(tmp_path):
    start = CONTEXT.index("John Smith")
    path = _write(tmp_path, _dataset([_qa("q1", answers=[("John Smith", start)])]))
    (example,), _ = reading.read_squad_examples(path, True, False)
    assert example.doc_tokens[example.start_position:example.end_position + 1] == [
        "John", "Smith"]


def test_v2_keeps_impossible_questions(tmp_path):
    path = _write(tmp_path, _dataset([
        _qa("q1", answers=[("Paris", CONTEXT.index("Paris"))]),
        _qa("q2", is_impossible=True)]))
    examples, stats = reading.read_squad_examples(path, True, True)
    assert [e.qas_id for e in examples] == ["q1", "q2"]
    impossible = examples[1]
    assert impossible.is_impossible and impossible.answers == []
    assert impossible.orig_answer_text == ""
    assert impossible.start_position is None and impossible.end_position is None
    assert stats["skipped_unanswerable"] == 0
    # Questions of one paragraph share its words.
    assert examples[0].doc_tokens is examples[1].doc_tokens


def test_v2_evaluation_reads_every_gold_answer(tmp_path):
    path = _write(tmp_path, _dataset([
        _qa("q1", answers=[("Paris", 56), ("in Paris", 53)]), _qa("q2", is_impossible=True)]))
    examples, _ = reading.read_squad_examples(path, False, True)
    assert examples[0].answers == ["Paris", "in Paris"]
    assert examples[0].orig_answer_text is None and examples[0].start_position is None
    assert examples[1].is_impossible and examples[1].answers == []


@pytest.mark.parametrize("is_training", [True, False])
def test_v1_mode_skips_and_counts_unanswerable_questions(tmp_path, is_training):
    path = _write(tmp_path, _dataset([
        _qa("q1", answers=[("Paris", CONTEXT.index("Paris"))]),
        _qa("q2", is_impossible=True),
        # No is_impossible key, no answers: unanswerable too.
        {"id": "q3", "question": "Why?", "answers": []}]))
    examples, stats = reading.read_squad_examples(path, is_training, False)
    assert [e.qas_id for e in examples] == ["q1"]
    assert stats["skipped_unanswerable"] == 2


def test_training_skips_and_counts_answers_that_miss_the_context(tmp_path):
    path = _write(tmp_path, _dataset([
        _qa("good", answers=[("Paris", CONTEXT.index("Paris"))]),
        _qa("shifted", answers=[("Paris", CONTEXT.index("Paris") - 10)]),
        _qa("past_end", answers=[("Paris", len(CONTEXT) - 2)]),
        _qa("empty", answers=[("", 3)])]))
    examples, stats = reading.read_squad_examples(path, True, False)
    assert [e.qas_id for e in examples] == ["good"]
    assert stats["skipped_answer_mismatch"] == 3
    # Evaluation keeps them: gold answers are only compared with predictions.
    examples, stats = reading.read_squad_examples(path, False, False)
    assert len(examples) == 4 and stats["skipped_answer_mismatch"] == 0


def test_training_needs_exactly_one_answer(tmp_path):
    path = _write(tmp_path, _dataset([_qa("q7", answers=[("Paris", 56), ("Paris", 56)])]))
    with pytest.raises(reading.SquadDataError, match=r"q7.*exactly 1 answer"):
        reading.read_squad_examples(path, True, False)


def test_malformed_json_names_the_file_and_position(tmp_path):
    path = _write(tmp_path, '{"data": [\n  {"paragraphs": [}\n]}')
    with pytest.raises(reading.SquadDataError, match=r"squad\.json.*line 2 column"):
        reading.read_squad_examples(path, True, False)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(reading.SquadDataError, match="absent.json"):
        reading.read_squad_examples(str(tmp_path / "absent.json"), True, False)


def test_empty_context_names_its_questions(tmp_path):
    path = _write(tmp_path, _dataset([_qa("q1"), _qa("q2")], context=" \n\t"))
    with pytest.raises(reading.SquadDataError, match=r"empty context.*q1, q2"):
        reading.read_squad_examples(path, False, True)


@pytest.mark.parametrize("key, where", [
    ("question", r"question 'q1' \(data\[0\]\.paragraphs\[0\]\.qas\[0\]\) has no 'question'"),
    ("id", r"data\[0\]\.paragraphs\[0\]\.qas\[0\] has no 'id'"),
    ("is_impossible", r"question 'q1'.*has no 'is_impossible'"),
])
def test_missing_question_key_names_the_key_and_question(tmp_path, key, where):
    qa = _qa("q1", answers=[("Paris", 56)])
    del qa[key]
    path = _write(tmp_path, _dataset([qa]))
    with pytest.raises(reading.SquadDataError, match=where):
        reading.read_squad_examples(path, True, True)


def test_missing_paragraph_keys_name_the_location(tmp_path):
    path = _write(tmp_path, {"data": [{"paragraphs": [{"qas": []}]}]})
    with pytest.raises(reading.SquadDataError,
                       match=r"data\[0\]\.paragraphs\[0\] has no 'context'"):
        reading.read_squad_examples(path, True, True)
    path = _write(tmp_path, {"version": "v2.0"})
    with pytest.raises(reading.SquadDataError, match="top level has no 'data'"):
        reading.read_squad_examples(path, True, True)


def test_mistyped_answer_start_is_a_data_error(tmp_path):
    qa = _qa("q1")
    qa["answers"] = [{"text": "Paris", "answer_start": "56"}]
    path = _write(tmp_path, _dataset([qa]))
    with pytest.raises(reading.SquadDataError, match="'answer_start' should be of type int, not"):
        reading.read_squad_examples(path, True, False)


def test_prediction_files_may_lack_answers(tmp_path):
    path = _write(tmp_path, _dataset([{"id": "q1", "question": "Who?"}]))
    (example,), _ = reading.read_squad_examples(path, False, False)
    assert example.answers == [] and not example.is_impossible


def test_questions_to_answer_come_from_a_squad_file_or_json_lines(tmp_path):
    squad = _write(tmp_path, _dataset([_qa("q1", "Who led?"), _qa("q2", "Where?")]))
    assert reading.read_questions(squad) == [("q1", "Who led?", CONTEXT),
                                             ("q2", "Where?", CONTEXT)]
    lines = _write(tmp_path, '{"question": "Who?", "context": "Ann sang."}\n\n'
                   '{"id": 7, "question": "What?", "context": "A song."}\n', "q.jsonl")
    assert reading.read_questions(lines) == [("0", "Who?", "Ann sang."),
                                             ("7", "What?", "A song.")]


@pytest.mark.parametrize("text, message", [
    ('{"question": "Who?"}\n', r"q.jsonl: line 1 has no 'context'"),
    ('{"question": "Who?", "context": "x"}\n{"question": \n', r"q.jsonl:2: not a JSON object"),
])
def test_a_bad_line_of_questions_is_named(tmp_path, text, message):
    with pytest.raises(reading.SquadDataError, match=message):
        reading.read_questions(_write(tmp_path, text, "q.jsonl"))
