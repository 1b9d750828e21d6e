"""Tests for bert_tf.serving.export: the raw-text SavedModel gives the Python path's probabilities.

The module exported is the classification task's (tasks/classification.py).
"""

import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the SavedModel tokenizes with)
from absl import logging as absl_logging

from bert_tf import output_folders
from bert_tf.model.config import BertConfig
from bert_tf.model.heads import ClassifierHead
from bert_tf.model.modeling import BertModel
from bert_tf.serving import classification, export, export_runner, task_serving
from bert_tf.tasks import ClassificationTask, PretrainingTask
from bert_tf.text import tokenization
from tests import helpers

FIXTURES = helpers.FIXTURES
VOCAB = os.path.join(FIXTURES, "pretraining_vocab.txt")
SEQ = 16

# Cased and accented text, punctuation, words the vocab lacks, an empty
# string, and one that must be truncated.
TEXTS_A = ["The King was in the House.", "Élan, naïveté & café?", "",
           "he said that it was not to be, and that the man of the house was " * 3]
TEXTS_B = ["It was the king.", "the", "no one", "and the man was in it"]


def _model(num_labels, seed):
    """A tiny encoder and head with random weights (the head's bias too)."""
    tf.keras.utils.set_random_seed(seed)
    vocab_size = len(tokenization.load_vocab(VOCAB))
    config = BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=SEQ, type_vocab_size=2,
                        # Wide weights, so that different inputs get clearly
                        # different probabilities.
                        initializer_range=0.5)
    encoder = BertModel(config)
    head = ClassifierHead(config, num_labels)
    head.output_bias.assign(tf.random.normal(head.output_bias.shape))
    return encoder, head


def _export(export_dir, encoder, head, is_regression=False, sentence_pairs=False):
    """Exports the classification task's raw-text SavedModel."""
    task = ClassificationTask(head.num_labels, is_regression, sentence_pairs=sentence_pairs)
    return export.export_task(export_dir, task, encoder, {"classifier": head}, VOCAB, True, SEQ)


def _python_path(encoder, head, texts_a, texts_b, is_regression):
    """FullTokenizer + pack_ids + encoder + head, as run_classifier trains and predicts."""
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    packed = []
    for i, text_a in enumerate(texts_a):
        ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text_a))
        ids_b = None
        if texts_b is not None:
            ids_b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(texts_b[i]))
        packed.append(tokenization.pack_ids(
            ids_a, ids_b, max_seq_length=SEQ, cls_id=tokenizer.vocab["[CLS]"],
            sep_id=tokenizer.vocab["[SEP]"]))
    features = {k: np.array([p[k] for p in packed], np.int32) for k in packed[0]}
    logits = head(encoder(features, training=False)["pooled_output"], training=False)
    return logits.numpy() if is_regression else tf.nn.softmax(logits, axis=-1).numpy()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A 3-class pair model and its export."""
    encoder, head = _model(num_labels=3, seed=1)
    export_dir = str(tmp_path_factory.mktemp("export") / "model")
    assert _export(export_dir, encoder, head, sentence_pairs=True) == export_dir
    return encoder, head, export_dir


def test_export_leaves_only_the_saved_model(exported):
    _, _, export_dir = exported
    assert tf.saved_model.contains_saved_model(export_dir)
    assert os.listdir(os.path.dirname(export_dir)) == ["model"]


def test_signatures_give_the_python_paths_probabilities(exported):
    encoder, head, export_dir = exported
    model = tf.saved_model.load(export_dir)
    assert set(model.signatures) == {"single", "pair", "serving_default"}

    expected_pair = _python_path(encoder, head, TEXTS_A, TEXTS_B, False)
    expected_single = _python_path(encoder, head, TEXTS_A, None, False)
    # The inputs differ, and so do their probabilities: the comparison means something.
    assert np.abs(expected_pair - expected_single).max() > 1e-3
    assert np.abs(expected_pair[0] - expected_pair[1]).max() > 1e-3

    pair = model.signatures["pair"](text_a=tf.constant(TEXTS_A), text_b=tf.constant(TEXTS_B))
    np.testing.assert_allclose(pair["probabilities"].numpy(), expected_pair, atol=1e-5)
    np.testing.assert_array_equal(pair["predictions"].numpy(), expected_pair.argmax(-1))
    assert pair["predictions"].dtype == tf.int64

    single = model.signatures["single"](text_a=tf.constant(TEXTS_A))
    np.testing.assert_allclose(single["probabilities"].numpy(), expected_single, atol=1e-5)
    np.testing.assert_array_equal(single["predictions"].numpy(), expected_single.argmax(-1))

    # A sentence-pair export serves pairs by default.
    default = model.signatures["serving_default"](
        text_a=tf.constant(TEXTS_A), text_b=tf.constant(TEXTS_B))
    np.testing.assert_allclose(default["probabilities"].numpy(), expected_pair, atol=1e-5)
    # The tf.functions are there too, for callers that skip the signatures.
    np.testing.assert_allclose(model.single(tf.constant(TEXTS_A))["probabilities"].numpy(),
                               expected_single, atol=1e-5)


@pytest.mark.slow
def test_single_sentence_regression_export(tmp_path):
    encoder, head = _model(num_labels=1, seed=2)
    export_dir = str(tmp_path / "stsb")
    _export(export_dir, encoder, head, is_regression=True)
    model = tf.saved_model.load(export_dir)
    expected = _python_path(encoder, head, TEXTS_A, None, True)
    # serving_default is "single" here: it takes text_a only.
    outputs = model.signatures["serving_default"](text_a=tf.constant(TEXTS_A))
    np.testing.assert_allclose(outputs["probabilities"].numpy(), expected, atol=1e-5)
    np.testing.assert_allclose(outputs["predictions"].numpy(), expected[:, 0], atol=1e-5)


def test_a_pair_is_refused_by_a_single_sentence_model_and_taken_by_a_pair_one(exported,
                                                                                 tmp_path):
    encoder, head = _model(num_labels=2, seed=5)
    single = _export(str(tmp_path / "single"), encoder, head)
    # Its "pair" signature would join the texts as segments the model never saw.
    assert export_runner.trained_inputs(single) == ["text_a"]
    with pytest.raises(export_runner.ExportError, match=(
            f"^{single} was trained on text_a alone \\(its serving_default signature\\), "
            "not on text_b too: drop --pair$")):
        export_runner.check_trained_inputs(single, ["text_a", "text_b"], "drop --pair")
    export_runner.check_trained_inputs(single, ["text_a"], "drop --pair")
    _, _, pair = exported
    assert export_runner.trained_inputs(pair) == ["text_a", "text_b"]
    for names in (["text_a", "text_b"], ["text_a"]):
        export_runner.check_trained_inputs(pair, names, "drop --pair")
    # A folder without a SavedModel records nothing; check_task names it.
    assert export_runner.trained_inputs(str(tmp_path)) is None


def test_failed_export_leaves_no_folder_and_keeps_an_earlier_one(tmp_path, monkeypatch):
    encoder, head = _model(num_labels=2, seed=3)

    def failing_save(module, path, signatures):
        # Part of a SavedModel is written, then the disk is full.
        os.makedirs(os.path.join(path, "variables"))
        with open(os.path.join(path, "saved_model.pb"), "w") as f:
            f.write("partial")
        raise OSError("disk full")

    monkeypatch.setattr(tf.saved_model, "save", failing_save)
    export_dir = str(tmp_path / "model")
    with pytest.raises(OSError, match="disk full"):
        _export(export_dir, encoder, head)
    assert os.listdir(tmp_path) == []

    # An earlier export stays as it was.
    os.makedirs(export_dir)
    with open(os.path.join(export_dir, "saved_model.pb"), "w") as f:
        f.write("earlier")
    with pytest.raises(OSError, match="disk full"):
        _export(export_dir, encoder, head)
    assert os.listdir(tmp_path) == ["model"]
    assert open(os.path.join(export_dir, "saved_model.pb")).read() == "earlier"


def test_an_export_never_replaces_a_folder_of_a_users_files(tmp_path):
    module = tf.Module()
    module.serve = tf.function(lambda x: {"y": x},
                               input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    export_dir = tmp_path / "model"
    export_dir.mkdir()
    (export_dir / "notes.txt").write_text("mine")
    with pytest.raises(output_folders.OutputFolderError,
                       match=f"^{export_dir} holds files that are no part of an earlier "
                             "SavedModel \\(notes.txt\\)"):
        export.save_model(str(export_dir), module, {"serving_default": module.serve})
    assert os.listdir(tmp_path) == ["model"] and os.listdir(export_dir) == ["notes.txt"]
    # Without the user's file, the folder is the export's, and an export replaces it.
    os.remove(export_dir / "notes.txt")
    for _ in range(2):
        export.save_model(str(export_dir), module, {"serving_default": module.serve})
        assert tf.saved_model.contains_saved_model(str(export_dir))


@pytest.mark.slow
def test_a_bfloat16_export_takes_and_gives_the_same_types_and_close_values(tmp_path):
    encoder, head = _model(num_labels=3, seed=4)
    task = ClassificationTask(3)
    outputs = {}
    for policy in ("float32", "mixed_bfloat16"):
        export_dir = str(tmp_path / policy)
        export.export_task(export_dir, task, encoder, {"classifier": head}, VOCAB, True, SEQ,
                           policy=policy)
        served = tf.saved_model.load(export_dir).signatures["single"](
            text_a=tf.constant(TEXTS_A))
        assert served["probabilities"].dtype == tf.float32
        outputs[policy] = served["probabilities"].numpy()
    # bfloat16 keeps 8 bits of mantissa: close, not equal.
    np.testing.assert_allclose(outputs["mixed_bfloat16"], outputs["float32"], atol=0.05)
    assert not np.array_equal(outputs["mixed_bfloat16"], outputs["float32"])
    # The trained model itself is untouched.
    assert encoder.dtype_policy.name == "float32"

    # A model trained in bfloat16 exports in float32 by default: the float32
    # model's outputs, from the same weights.
    try:
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
        trained_encoder, trained_head = _model(num_labels=3, seed=4)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    for source, target in ((encoder, trained_encoder), (head, trained_head)):
        for a, b in zip(source.weights, target.weights, strict=True):
            b.assign(a)
    export_dir = str(tmp_path / "default")
    export.export_task(export_dir, task, trained_encoder, {"classifier": trained_head}, VOCAB,
                       True, SEQ)
    served = tf.saved_model.load(export_dir).signatures["single"](text_a=tf.constant(TEXTS_A))
    np.testing.assert_allclose(served["probabilities"].numpy(), outputs["float32"], atol=1e-6)


def test_export_says_which_shapes_it_wrote(exported, tmp_path):
    encoder, head, export_dir = exported
    info = export_runner.read_info(export_dir)
    assert info["task"] == "ClassificationTask"
    assert info["shapes"] == "dynamic" and info["precision"] == "float32"
    assert info["max_seq_length"] == SEQ and "no XLA" in info["shapes_description"]
    assert info["jit_compile"] is False
    assert info["signatures"]["pair"]["inputs"] == ["text_a", "text_b"]
    assert info["signatures"]["single"]["outputs"] == {"predictions": "int64",
                                                       "probabilities": "float32",
                                                       "truncated": "bool"}
    static_dir = str(tmp_path / "static")
    export.export_task(static_dir, ClassificationTask(3), encoder, {"classifier": head},
                       VOCAB, True, SEQ, shapes="static")
    assert export_runner.read_info(static_dir)["shapes"] == "static"
    assert export_runner.read_info(str(tmp_path)) is None


def test_an_xla_export_gives_the_same_probabilities(exported, tmp_path):
    encoder, head, export_dir = exported
    xla_dir = str(tmp_path / "xla")
    export.export_task(xla_dir, ClassificationTask(3, sentence_pairs=True), encoder,
                       {"classifier": head}, VOCAB, True, SEQ, jit_compile=True)
    info = export_runner.read_info(xla_dir)
    assert info["jit_compile"] is True and "XLA-compiled" in info["shapes_description"]
    served = tf.saved_model.load(xla_dir).signatures["pair"](
        text_a=tf.constant(TEXTS_A), text_b=tf.constant(TEXTS_B))["probabilities"].numpy()
    np.testing.assert_allclose(served, _python_path(encoder, head, TEXTS_A, TEXTS_B, False),
                               atol=1e-5)


@pytest.mark.parametrize("sort_window", [1, 3])
def test_run_batches_hands_back_each_inputs_outputs_in_input_order(exported, sort_window):
    """Run in order of length or not, each input gets its own probabilities, in input order."""
    encoder, head, export_dir = exported
    # Lengths in no order, so that the length order mixes the batches; 7
    # inputs in batches of 3 leave a short last batch.
    texts = [TEXTS_A[3], "the", TEXTS_A[0], TEXTS_B[3], "", TEXTS_A[1], TEXTS_A[3][:40]]
    batches = [{"text_a": texts[i:i + 3]} for i in range(0, len(texts), 3)]
    results = list(export_runner.run_batches(export_dir, "single", batches,
                                             "ClassificationTask", ["text_a"], sort_window))
    assert [inputs for inputs, _ in results] == batches
    probabilities = [row for _, outputs in results for row in outputs["probabilities"]]
    expected = _python_path(encoder, head, texts, None, False)
    np.testing.assert_allclose(np.stack(probabilities), expected, atol=1e-5)
    assert [bool(cut) for _, outputs in results for cut in outputs["truncated"]] == [
        True, False, False, False, False, False, False]


# Run in a fresh Python: the export needs TensorFlow and tensorflow_text only.
FRESH_PYTHON = """
import json, sys
import tensorflow as tf
import tensorflow_text
model = tf.saved_model.load(sys.argv[1])
outputs = model.signatures["pair"](text_a=tf.constant(json.loads(sys.argv[2])),
                                   text_b=tf.constant(json.loads(sys.argv[3])))
assert not [name for name in sys.modules if name.startswith("bert_tf")]
print(json.dumps(outputs["probabilities"].numpy().tolist()))
"""


def test_export_loads_in_a_python_with_only_tensorflow_and_tensorflow_text(exported,
                                                                              tmp_path):
    encoder, head, export_dir = exported
    result = subprocess.run(
        [sys.executable, "-c", FRESH_PYTHON, export_dir, json.dumps(TEXTS_A),
         json.dumps(TEXTS_B)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    served = np.array(json.loads(result.stdout.strip().splitlines()[-1]))
    expected = _python_path(encoder, head, TEXTS_A, TEXTS_B, False)
    np.testing.assert_allclose(served, expected, atol=1e-5)


def test_loading_an_export_logs_no_warning(exported):
    # Custom gradients in the exported functions made every load warn, once per
    # function, that their gradients were not saved.
    records = []
    handler = logging.Handler(level=logging.WARNING)
    handler.emit = records.append
    loggers = [logging.getLogger(name) for name in ("absl", "tensorflow")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        tf.saved_model.load(exported[2])
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert [record.getMessage() for record in records] == []


def test_a_task_is_served_by_its_familys_module_or_refused():
    class LabelledClassification(ClassificationTask):
        pass

    assert task_serving.for_task(LabelledClassification(2)) is classification
    assert classification.TOOL == "predict_text.py"
    with pytest.raises(NotImplementedError, match="PretrainingTask has no raw-text export"):
        task_serving.for_task(PretrainingTask())


def test_an_export_logs_no_long_or_repeated_line(exported, tmp_path):
    # TensorFlow logged each signature's captured weights as renamed inputs,
    # a line of about 1,000 characters per signature, the default one twice.
    encoder, head, _ = exported
    records = []
    handler = logging.Handler(level=logging.INFO)
    handler.emit = records.append
    absl_logger = absl_logging.get_absl_logger()
    # Through absl: tf.saved_model.save sets absl's verbosity, and sets it back.
    verbosity = absl_logging.get_verbosity()
    absl_logger.addHandler(handler)
    absl_logging.set_verbosity(absl_logging.INFO)
    try:
        _export(str(tmp_path / "model"), encoder, head, sentence_pairs=True)
    finally:
        absl_logger.removeHandler(handler)
        absl_logging.set_verbosity(verbosity)
    # One line per log call: a record that reaches the handler twice (a handler that
    # another test left on a logger further up may hand it back) is one line logged.
    logged = list({id(record): record for record in records}.values())
    # TensorFlow's saver times its sharding at each save, a line whose value varies
    # (two equal values would look like a repeated line).
    lines = [record.getMessage() for record in logged
             if not record.getMessage().startswith("Sharding callback duration")]
    assert any(line.startswith("Exported a raw-text SavedModel") for line in lines), lines
    assert [line for line in lines if len(line) > 300] == []
    assert len(set(lines)) == len(lines), [line for line in lines if lines.count(line) > 1]

