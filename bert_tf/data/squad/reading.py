"""SQuAD JSON files -> SquadExample, as the original run_squad.py reads them.

A context is split into words on whitespace exactly as the original splits it
(space, tab, carriage return, newline and U+202F NARROW NO-BREAK SPACE, nothing
else), and `char_to_word_offset` maps each of its characters to the index of
the word it belongs to (a whitespace character to the word before it). Answers
are character offsets into the context; for training they become word indices.

Choices, each counted in the stats that read_squad_examples returns:
  skipped_answer_mismatch: in training, an answer whose text is not found in
    the words its answer_start and length cover (odd Unicode, bad offsets) is
    skipped with a warning, as the original skips it. Evaluation reads the
    gold answers as they are.
  skipped_unanswerable: without version_2_with_negative (v1.1 mode), a
    question marked is_impossible, or with an empty answer list, is skipped:
    a v1.1 model cannot answer it, and the original would stop on it in
    training ("exactly 1 answer") and score it as a miss in evaluation. Run
    on a v2.0 file in v1.1 mode, the model then learns and is scored on the
    answerable questions only (see scoring.answerable_questions).

Every problem with the file itself is a SquadDataError that names the file and
the question id, or the JSON location (data[3].paragraphs[0].qas[2]).

Reading imports no TensorFlow unless the file is remote (gs://).
"""

import dataclasses
import json

from absl import logging

from bert_tf.text import tokenization


class SquadDataError(ValueError):
    """A SQuAD file that cannot be read: bad JSON, a missing key, an empty context."""


@dataclasses.dataclass
class SquadExample:
    """One question about one context.

    Questions of the same paragraph share their doc_tokens and
    char_to_word_offset lists, which must not be changed.

    Attributes:
      qas_id: the question's id.
      question_text: the question.
      context_text: the paragraph's context, as in the file.
      doc_tokens: the context's whitespace-separated words.
      char_to_word_offset: for each character of context_text, the index of
        its word in doc_tokens (of the preceding word for whitespace, -1
        before the first word).
      orig_answer_text: in training, the answer's text ("" for an
        unanswerable question); None in evaluation.
      start_position, end_position: in training, the answer's first and last
        word indices in doc_tokens; None otherwise and for unanswerable ones.
      is_impossible: whether the question has no answer in the context (v2.0).
      answers: the gold answer texts, for evaluation; [] for an unanswerable
        question.
    """

    qas_id: str
    question_text: str
    context_text: str
    doc_tokens: list
    char_to_word_offset: list
    orig_answer_text: str | None = None
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False
    answers: list = dataclasses.field(default_factory=list)


def _is_whitespace(char):
    """The original's whitespace: a narrower set than str.split()'s."""
    return char in " \t\r\n\u202f"


def split_context(context_text):
    """Splits a context into words on whitespace, as the original does.

    Args:
      context_text: the paragraph's text.

    Returns:
      (doc_tokens, char_to_word_offset): the words, and for each character
      the index of its word (see SquadExample).
    """
    doc_tokens = []
    char_to_word_offset = []
    previous_is_whitespace = True
    for char in context_text:
        if _is_whitespace(char):
            previous_is_whitespace = True
        else:
            if previous_is_whitespace:
                doc_tokens.append(char)
            else:
                doc_tokens[-1] += char
            previous_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def load_json(input_file):
    """Reads and parses a JSON file, local or remote.

    Args:
      input_file: the path (gs:// and other tf.io.gfile paths work).

    Returns:
      The parsed JSON value.

    Raises:
      SquadDataError: naming the file, when it cannot be read, is not UTF-8,
        or is not valid JSON (with the line and column of the error).
    """
    try:
        if "://" in str(input_file):
            # Only remote files need TensorFlow, so local ones load without it.
            import tensorflow as tf

            with tf.io.gfile.GFile(input_file, "rb") as reader:
                data = reader.read()
        else:
            with open(input_file, "rb") as reader:
                data = reader.read()
    except Exception as error:
        raise SquadDataError(f"{input_file}: cannot read it: {error}") from error
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise SquadDataError(
            f"{input_file}: not UTF-8: invalid byte at offset {error.start}") from error
    except json.JSONDecodeError as error:
        raise SquadDataError(
            f"{input_file}: not valid JSON: {error.msg} at line {error.lineno} "
            f"column {error.colno}") from error


def _require(mapping, key, kind, input_file, where):
    """Returns mapping[key], checked to be a `kind`; a SquadDataError otherwise.

    Args:
      mapping: the JSON object that should hold the key.
      key: the key.
      kind: the Python type the value must have.
      input_file: the file, for the message.
      where: the object's JSON location or question id, for the message.
    """
    if not isinstance(mapping, dict):
        raise SquadDataError(f"{input_file}: {where} should be a JSON object, not "
                             f"{type(mapping).__name__}")
    if key not in mapping:
        raise SquadDataError(f"{input_file}: {where} has no {key!r}")
    value = mapping[key]
    # bool is an int in Python, but true is no answer offset.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SquadDataError(f"{input_file}: {where}: {key!r} should be of type "
                             f"{kind.__name__}, not {type(value).__name__}")
    return value


def _answer_words(answer_text, answer_start, doc_tokens, char_to_word_offset):
    """The first and last word of an answer, or None when it does not match the context.

    An answer matches when the words its characters cover contain its text
    (whitespace normalized), the original's test. Offsets outside the context
    and empty answers never match: the original would index out of range or
    make an empty span.
    """
    end_char = answer_start + len(answer_text) - 1
    if not answer_text or answer_start < 0 or end_char >= len(char_to_word_offset):
        return None
    start_position = char_to_word_offset[answer_start]
    end_position = char_to_word_offset[end_char]
    if start_position < 0:
        # The answer starts on whitespace before the first word.
        return None
    actual_text = " ".join(doc_tokens[start_position:end_position + 1])
    cleaned_answer_text = " ".join(tokenization.whitespace_tokenize(answer_text))
    if actual_text.find(cleaned_answer_text) == -1:
        return None
    return start_position, end_position


def _read_question(qa, where, paragraph_fields, is_training, version_2_with_negative,
                   input_file):
    """Builds the SquadExample of one question.

    Args:
      qa: the question's JSON object.
      where: its JSON location, for messages until its id is known.
      paragraph_fields: (context_text, doc_tokens, char_to_word_offset).
      is_training: whether answers become word positions.
      version_2_with_negative: whether unanswerable questions are kept.
      input_file: the file, for messages.

    Returns:
      A SquadExample, or for a skipped question the name of its count in
      read_squad_examples' stats.
    """
    context_text, doc_tokens, char_to_word_offset = paragraph_fields
    qas_id = _require(qa, "id", str, input_file, where)
    where = f"question {qas_id!r} ({where})"
    question_text = _require(qa, "question", str, input_file, where)
    # Evaluation and prediction files may lack the gold answers.
    has_answers = is_training or "answers" in qa
    answers = _require(qa, "answers", list, input_file, where) if has_answers else []
    if version_2_with_negative and is_training:
        is_impossible = _require(qa, "is_impossible", bool, input_file, where)
    else:
        is_impossible = bool(qa.get("is_impossible", False))
    if not version_2_with_negative and (is_impossible or (has_answers and not answers)):
        return "skipped_unanswerable"
    answer_texts = [] if is_impossible else [
        _require(a, "text", str, input_file, f"{where}.answers[{i}]")
        for i, a in enumerate(answers)]
    example = SquadExample(
        qas_id=qas_id, question_text=question_text, context_text=context_text,
        doc_tokens=doc_tokens, char_to_word_offset=char_to_word_offset,
        is_impossible=is_impossible, answers=answer_texts)
    if not is_training:
        return example
    if is_impossible:
        example.orig_answer_text = ""
        return example
    if len(answers) != 1:
        raise SquadDataError(f"{input_file}: {where}: for training, each question should "
                             f"have exactly 1 answer, not {len(answers)}")
    answer_start = _require(answers[0], "answer_start", int, input_file, f"{where}.answers[0]")
    positions = _answer_words(answer_texts[0], answer_start, doc_tokens, char_to_word_offset)
    if positions is None:
        logging.warning("%s: %s: could not find answer %r at character %d of the context; "
                        "skipped", input_file, where, answer_texts[0], answer_start)
        return "skipped_answer_mismatch"
    example.orig_answer_text = answer_texts[0]
    example.start_position, example.end_position = positions
    return example


def read_squad_examples(input_file, is_training, version_2_with_negative):
    """Reads a SQuAD v1.1 or v2.0 JSON file into SquadExamples.

    Args:
      input_file: the JSON file (local or gs://).
      is_training: whether to compute the answers' word positions (and skip
        answers that do not match their context).
      version_2_with_negative: keep unanswerable questions (SQuAD 2.0);
        without it they are skipped and counted.

    Returns:
      (examples, stats): the list of SquadExample in file order, and a dict
      of counts: "skipped_answer_mismatch", "skipped_unanswerable".

    Raises:
      SquadDataError: for malformed JSON, a missing or mistyped key, a
        training question without exactly one answer, or a paragraph whose
        context holds no word; it names the file and the question id or the
        JSON location.
    """
    dataset = load_json(input_file)
    articles = _require(dataset, "data", list, input_file, "the top level")
    examples = []
    stats = {"skipped_answer_mismatch": 0, "skipped_unanswerable": 0}
    for article_index, article in enumerate(articles):
        article_where = f"data[{article_index}]"
        paragraphs = _require(article, "paragraphs", list, input_file, article_where)
        for paragraph_index, paragraph in enumerate(paragraphs):
            where = f"{article_where}.paragraphs[{paragraph_index}]"
            context_text = _require(paragraph, "context", str, input_file, where)
            questions = _require(paragraph, "qas", list, input_file, where)
            doc_tokens, char_to_word_offset = split_context(context_text)
            if not doc_tokens and questions:
                # No word means no window: its questions would vanish unscored.
                ids = [qa.get("id", f"qas[{i}]") if isinstance(qa, dict) else f"qas[{i}]"
                       for i, qa in enumerate(questions)]
                raise SquadDataError(f"{input_file}: {where} has an empty context; its "
                                     f"questions: {', '.join(map(str, ids))}")
            paragraph_fields = (context_text, doc_tokens, char_to_word_offset)
            for qa_index, qa in enumerate(questions):
                example = _read_question(qa, f"{where}.qas[{qa_index}]", paragraph_fields,
                                         is_training, version_2_with_negative, input_file)
                if isinstance(example, str):
                    stats[example] += 1
                else:
                    examples.append(example)
    return examples, stats


def read_questions(input_file):
    """The questions of a file to answer: a SQuAD JSON file, or JSON lines.

    A SQuAD file (an object with "data", v1.1 or v2.0, answers or not) gives
    each question with its paragraph's context and its id. Any other file is
    read as JSON lines: one object a line, {"question": ..., "context": ...,
    "id": ...}, the id optional (the question's number from 0, as a string,
    stands for it); blank lines are skipped.

    Args:
      input_file: The file (a SQuAD one may be on gs://).

    Returns:
      A list of (id, question, context) in file order.

    Raises:
      SquadDataError: naming the file and the line (or the question) that is
        not valid JSON, or lacks a question or a context.
    """
    try:
        whole = load_json(input_file)
    except SquadDataError as error:
        if not isinstance(error.__cause__, json.JSONDecodeError):
            raise  # Unreadable, or not UTF-8.
        whole = None  # Not one JSON value: JSON lines, read below.
    if isinstance(whole, dict) and "data" in whole:
        examples, _ = read_squad_examples(input_file, is_training=False,
                                          version_2_with_negative=True)
        return [(e.qas_id, e.question_text, e.context_text) for e in examples]
    with open(input_file, encoding="utf-8") as f:
        lines = [(number, line) for number, line in enumerate(f, 1) if line.strip()]
    questions = []
    for number, line in lines:
        where = f"line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise SquadDataError(f"{input_file}:{number}: not a JSON object of a question "
                                 f"and its context: {error.msg}") from None
        question = _require(item, "question", str, input_file, where)
        context = _require(item, "context", str, input_file, where)
        qas_id = item.get("id", str(len(questions)))
        questions.append((str(qas_id), question, context))
    return questions
