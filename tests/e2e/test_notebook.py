"""The fine-tuning notebook: committed clean, and runs top to bottom in its tiny test mode.

How the tiny run is made (injected settings, no network, CPU only) is in notebook_helpers.py.
"""

import json
import os

import pytest

pytest.importorskip("nbformat", reason="nbformat is not installed (pip install -e '.[test]')")
pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install -e '.[test]')")
pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[test]')")

from tests.helpers.notebook_helpers import (  # noqa: E402  (after the skips: it imports nbformat)
    assert_committed_clean,
    code_cell,
    execute,
    inject_parameters,
    output_text,
    parameter_values,
    read,
)

NOTEBOOK = "bert_finetuning_with_cloud_tpus.ipynb"

PARAMETERS = {"TASK", "DATA_SOURCE", "INIT_CHECKPOINT", "MAX_SEQ_LENGTH", "TRAIN_BATCH_SIZE",
              "LEARNING_RATE", "NUM_TRAIN_EPOCHS", "OUTPUT_DIR", "TINY_TEST_MODE",
              "BERT_TF_SOURCE", "INSTALL_ACCELERATOR"}

# Appended at the end: what the assertions need to know of the run's state.
PROBE = """\
import json as _json
print("PROBE " + _json.dumps({"export_dir": EXPORT_DIR, "sentences": SENTENCES,
                             "task": processor.name, "model_dir": MODEL_DIR}))
"""


def test_notebook_is_committed_clean():
    assert_committed_clean(read(NOTEBOOK))


def test_parameters_cell_holds_only_literal_assignments():
    values = parameter_values(read(NOTEBOOK))
    assert PARAMETERS <= set(values)
    assert values["TINY_TEST_MODE"] is False
    assert values["INIT_CHECKPOINT"] == "uncased_L-12_H-768_A-12"


def test_bert_tf_is_installed_then_imported_before_tensorflow():
    """PJRT must be in the environment before TensorFlow loads (bert_tf/runtime/tpu_runtime.py)."""
    sources = [cell.source for cell in read(NOTEBOOK).cells if cell.cell_type == "code"]

    def first(pattern):
        return next(i for i, source in enumerate(sources)
                    if any(line.startswith(pattern) for line in source.splitlines()))

    assert first("def bert_tf_importable") < first("import bert_tf") < first("import tensorflow")
    # The install is install.py's (tests/unit/test_install.py, tests/e2e/test_notebook_install.py).
    assert '"install.py"' in sources[first("def bert_tf_importable")]


def test_notebook_runs_in_tiny_mode(tmp_path, monkeypatch):
    notebook = read(NOTEBOOK)
    inject_parameters(notebook, {"OUTPUT_DIR": str(tmp_path / "out")})
    notebook.cells.append(code_cell(PROBE, "probe"))
    execute(notebook, monkeypatch)

    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    text = "\n".join(output_text(output) for output in outputs)
    probe = json.loads(text.split("PROBE ", 1)[1].splitlines()[0])
    assert probe["task"] == "sst-2"

    # Accelerator detection ran and named the CPU; the TPU runtime said why there is no TPU.
    assert "Accelerator: CPU" in text and "Replicas:    1" in text
    assert "TPU runtime: tensorflow-tpu is not installed" in text
    # The checkpoint was loaded with its report: the encoder loaded, the new head initialized.
    assert "Loaded " in text and "Left at initial values (2): output_weights, output_bias" in text
    # Training ran with a progress bar and the GLUE metrics were printed.
    assert "fine-tuning" in text
    assert "\neval_accuracy = " in "\n" + text and "\neval_loss = " in "\n" + text
    assert os.path.exists(os.path.join(probe["model_dir"], "eval_results.txt"))
    # The loss / learning-rate, metric and confusion-matrix figures.
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(images) >= 3
    # The SavedModel, and a prediction with probabilities for every sentence typed in.
    assert os.path.exists(os.path.join(probe["export_dir"], "saved_model.pb"))
    for sentence in probe["sentences"]:
        line = next(line for line in text.splitlines() if line.endswith(sentence))
        assert "negative" in line and "positive" in line
    # Your own data: the shipped tickets' predictions, by label name.
    assert "id,text,label,account,billing,bug,feature,praise\n201,I was charged twice" in text
