"""docs/serving.md's TensorFlow Serving request bodies, read as the server reads them.

No TensorFlow Serving binary is installable here (it is neither on PyPI nor in
Debian), so each body is decoded by TensorFlow Serving's REST rules and run
through the signature it names, on a tiny export of each family: "instances"
holds one object per example (or bare values, for a signature of one input),
"inputs" one list per input; a list inside an instance is one more dimension.
"""

import json
import os
import re

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)

from bert_tf.data import conll, squad, swag
from bert_tf.model.config import BertConfig
from bert_tf.model.modeling import BertModel
from bert_tf.serving import export
from bert_tf.tasks import ClassificationTask, MultipleChoiceTask, QuestionAnsweringTask, TaggingTask
from bert_tf.text import tokenization
from tests import helpers

VOCAB = os.path.join(helpers.FIXTURES, "pretraining_vocab.txt")
SEQ = 32

# Each family's task, and the outputs docs/serving.md says its signatures give.
FAMILIES = {
    "classification": (
        ClassificationTask(2, sentence_pairs=True, label_list=["0", "1"]),
        {"probabilities", "predictions", "labels", "truncated"}),
    "question_answering": (
        QuestionAnsweringTask(squad.SquadSettings(SEQ, doc_stride=8, max_query_length=8)),
        {"answer_text", "answer_start", "answer_end", "score", "has_answer"}),
    "tagging": (
        TaggingTask(["O", "B-PER", "I-PER", "B-LOC", "I-LOC"], conll.ConllSettings(SEQ)),
        {"entity_type", "entity_text", "entity_start", "entity_end", "entity_score",
         "num_entities"}),
    "multiple_choice": (
        MultipleChoiceTask(swag.SwagSettings(SEQ, 4)),
        {"probabilities", "predictions", "truncated"}),
}


def _rest_bodies():
    """Every request body of docs/serving.md: curl's -d, JSON lines and inline code."""
    with open(os.path.join(helpers.ROOT, "docs", "serving.md"), encoding="utf-8") as f:
        text = f.read()
    bodies = [json.loads(body) for body in re.findall(r"-d '(\{.*?\})'", text)]
    bodies += [json.loads(line) for line in re.findall(r"^(\{.*\})$", text, flags=re.M)
               if '"instances"' in line or '"inputs"' in line]
    bodies += [json.loads(body) for body in re.findall(r"`(\{\"signature_name\".*?\})`", text)]
    return bodies


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{family: the loaded SavedModel} of a tiny random model per family."""
    config = BertConfig(vocab_size=len(tokenization.load_vocab(VOCAB)), hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2)
    loaded = {}
    for family, (task, _) in FAMILIES.items():
        encoder = BertModel(config)
        export_dir = str(tmp_path_factory.mktemp(family) / "model")
        export.export_task(export_dir, task, encoder, task.create_heads(encoder), VOCAB, True,
                           SEQ)
        loaded[family] = tf.saved_model.load(export_dir)
    return loaded


def _columns(body, names):
    """The body's inputs by name, as TensorFlow Serving decodes them.

    Args:
      body: A REST request body (dict).
      names: The signature's input names, sorted.

    Returns:
      {input name: values}, one value per example.
    """
    if "inputs" in body:
        return body["inputs"]
    instances = body["instances"]
    if isinstance(instances[0], dict):
        return {name: [row[name] for row in instances] for name in names}
    # Bare values are the one input of a signature with one.
    return {names[0]: instances}


def _family(body, exports):
    """The family whose export has the signature and inputs the body names."""
    fitting = []
    for family, loaded in exports.items():
        signature = loaded.signatures.get(body.get("signature_name", "serving_default"))
        if signature is None:
            continue
        names = sorted(signature.structured_input_signature[1])
        given = body["inputs"] if "inputs" in body else body["instances"][0]
        if isinstance(given, dict) and sorted(given) != names:
            continue
        if not isinstance(given, dict) and len(names) != 1:
            continue
        fitting.append(family)
    assert len(fitting) == 1, (body, fitting)
    return fitting[0]


@pytest.mark.slow  # four exports: over 10 s on 2 cores
def test_every_familys_documented_rest_body_runs_through_its_signature(exports):
    bodies = _rest_bodies()
    served = set()
    for body in bodies:
        family = _family(body, exports)
        signature = exports[family].signatures[body.get("signature_name", "serving_default")]
        names = sorted(signature.structured_input_signature[1])
        columns = _columns(body, names)
        assert sorted(columns) == names, body
        outputs = signature(**{name: tf.constant(values) for name, values in columns.items()})
        assert set(outputs) == FAMILIES[family][1], body
        # One answer per example the body holds.
        batch = len(next(iter(columns.values())))
        assert all(output.shape[0] == batch for output in outputs.values()), body
        served.add(family)
    assert served == set(FAMILIES), f"docs/serving.md has no REST body for {set(FAMILIES) - served}"
    assert len(bodies) >= 6, bodies
