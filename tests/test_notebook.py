"""The Colab notebook: committed clean, and runs top to bottom in its tiny test mode.

The run executes every cell with nbclient on the CPU, with TINY_TEST_MODE=True injected
after the parameters cell (as papermill does) and the working directory at the repository
root. The network is blocked inside the kernel (Python sockets refuse every address but
the local ones; HTTP proxies point at a closed local port), so a cell that needs it fails.
"""

import ast
import json
import os

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat is not installed (pip install -e '.[test]')")
nbclient = pytest.importorskip(
    "nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install -e '.[test]')")
pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[test]')")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "notebooks", "bert_finetuning_with_cloud_tpus.ipynb")

PARAMETERS = {"TASK", "DATA_SOURCE", "INIT_CHECKPOINT", "MAX_SEQ_LENGTH", "TRAIN_BATCH_SIZE",
              "LEARNING_RATE", "NUM_TRAIN_EPOCHS", "OUTPUT_DIR", "TINY_TEST_MODE",
              "BERT_TF_SOURCE", "INSTALL_ACCELERATOR"}

# Injected after the parameters cell: the test mode, and no network for the rest of the run.
INJECTED = """\
TINY_TEST_MODE = True
OUTPUT_DIR = {output_dir!r}

import socket as _socket

_connect = _socket.socket.connect


def _local_only(sock, address):
    host = address[0] if isinstance(address, tuple) else "unix"
    if sock.family != _socket.AF_UNIX and host not in ("127.0.0.1", "::1", "localhost"):
        raise OSError(f"TINY_TEST_MODE must not use the network (connect to {{address}})")
    return _connect(sock, address)


_socket.socket.connect = _local_only
"""

# Appended at the end: what the assertions need to know of the run's state.
PROBE = """\
import json as _json
print("PROBE " + _json.dumps({"export_dir": EXPORT_DIR, "sentences": SENTENCES,
                             "task": processor.name, "model_dir": MODEL_DIR}))
"""


def _read():
    return nbformat.read(NOTEBOOK, as_version=4)


def _parameters_index(notebook):
    tagged = [i for i, cell in enumerate(notebook.cells)
              if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell must be tagged 'parameters'"
    return tagged[0]


def test_notebook_is_committed_clean():
    notebook = _read()
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], "clear the outputs before committing"
            assert cell.execution_count is None, "clear the execution counts before committing"


def test_parameters_cell_holds_only_literal_assignments():
    notebook = _read()
    source = notebook.cells[_parameters_index(notebook)].source
    values = {}
    for node in ast.parse(source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, ast.dump(node)
        values[node.targets[0].id] = ast.literal_eval(node.value)
    assert PARAMETERS <= set(values)
    assert values["TINY_TEST_MODE"] is False
    assert values["INIT_CHECKPOINT"].startswith("gs://cloud-tpu-checkpoints/bert/")


def test_bert_tf_is_installed_then_imported_before_tensorflow():
    """PJRT must be in the environment before TensorFlow loads (bert_tf/tpu_runtime.py)."""
    sources = [cell.source for cell in _read().cells if cell.cell_type == "code"]

    def first(pattern):
        return next(i for i, source in enumerate(sources)
                    if any(line.startswith(pattern) for line in source.splitlines()))

    assert first("def bert_tf_importable") < first("import bert_tf") < first("import tensorflow")
    # The install is install.py's (tests/test_install.py, tests/test_notebook_install.py).
    assert '"install.py"' in sources[first("def bert_tf_importable")]


def _text(output):
    if output.output_type == "stream":
        return output.text
    if output.output_type in ("execute_result", "display_data"):
        return output.data.get("text/plain", "")
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return ""


def test_notebook_runs_in_tiny_mode(tmp_path, monkeypatch):
    notebook = _read()
    index = _parameters_index(notebook)
    injected = nbformat.v4.new_code_cell(INJECTED.format(output_dir=str(tmp_path / "out")))
    injected.metadata["tags"] = ["injected-parameters"]
    notebook.cells.insert(index + 1, injected)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))

    # The kernel inherits this environment: CPU only, HTTP(S) through a closed port, and
    # matplotlib's inline backend (which an MPLBACKEND from outside would replace).
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    for variable in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")
    for variable in ("no_proxy", "NO_PROXY", "MPLBACKEND", "TPU_NAME", "COLAB_TPU_ADDR",
                     "TF_CONFIG"):
        monkeypatch.delenv(variable, raising=False)

    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": ROOT}})
    client.execute()

    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    text = "\n".join(_text(output) for output in outputs)
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
