"""What the notebook tests share: reading a notebook, and running it in its tiny test mode.

A run executes every cell with nbclient on the CPU, with TINY_TEST_MODE=True and the
output folders injected after the parameters cell (as papermill does) and the working
directory at the repository root. The network is blocked inside the kernel (Python sockets
refuse every address but the local ones; HTTP proxies point at a closed local port), so a
cell that needs it fails.
"""

import ast
import os

import nbformat

from tests import helpers

ROOT = helpers.ROOT
NOTEBOOKS = os.path.join(ROOT, "notebooks")

# Injected after the parameters cell, before the test's own settings: no network for the
# rest of the run.
NO_NETWORK = """\
import socket as _socket

_connect = _socket.socket.connect


def _local_only(sock, address):
    host = address[0] if isinstance(address, tuple) else "unix"
    if sock.family != _socket.AF_UNIX and host not in ("127.0.0.1", "::1", "localhost"):
        raise OSError(f"TINY_TEST_MODE must not use the network (connect to {address})")
    return _connect(sock, address)


_socket.socket.connect = _local_only
"""


def read(name):
    """The notebook notebooks/<name>, as nbformat reads it."""
    return nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)


def parameters_index(notebook):
    """The index of the one cell tagged 'parameters'."""
    tagged = [i for i, cell in enumerate(notebook.cells)
              if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell must be tagged 'parameters'"
    return tagged[0]


def parameter_values(notebook):
    """{name: value} of the parameters cell, which must hold only literal assignments."""
    values = {}
    for node in ast.parse(notebook.cells[parameters_index(notebook)].source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, ast.dump(node)
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def assert_committed_clean(notebook):
    """The notebook is valid and committed without outputs or execution counts."""
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], "clear the outputs before committing"
            assert cell.execution_count is None, "clear the execution counts before committing"


def code_cell(source, tag):
    """A code cell to insert into a notebook under test, tagged so that it shows as such."""
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [tag]
    return cell


def inject_parameters(notebook, settings):
    """Inserts, after the parameters cell, TINY_TEST_MODE = True, settings and NO_NETWORK.

    Args:
      notebook: The notebook, changed in place.
      settings: {name: value} to assign as well (e.g. the output folders).
    """
    lines = ["TINY_TEST_MODE = True"] + [f"{name} = {value!r}" for name, value in
                                         settings.items()]
    source = "\n".join(lines) + "\n\n" + NO_NETWORK
    notebook.cells.insert(parameters_index(notebook) + 1,
                          code_cell(source, "injected-parameters"))


def execute(notebook, monkeypatch, timeout=900):
    """Runs every cell of the notebook in a fresh kernel on the CPU, at the repository root.

    The kernel inherits this environment: CPU only, HTTP(S) through a closed port, and
    matplotlib's inline backend (which an MPLBACKEND from outside would replace).

    Args:
      notebook: The notebook; its cells get their outputs.
      monkeypatch: pytest's, for the environment.
      timeout: Seconds each cell may take before the test fails as hung (generous:
        a loaded CI machine runs a training cell several times slower).
    """
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    for variable in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")
    for variable in ("no_proxy", "NO_PROXY", "MPLBACKEND", "TPU_NAME", "COLAB_TPU_ADDR",
                     "TF_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    import nbclient

    client = nbclient.NotebookClient(
        notebook, timeout=timeout, kernel_name="python3",
        resources={"metadata": {"path": ROOT}})
    client.execute()


def output_text(output):
    """What a cell output shows as text."""
    if output.output_type == "stream":
        return output.text
    if output.output_type in ("execute_result", "display_data"):
        return output.data.get("text/plain", "")
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return ""


def cell_text(cell):
    """All of a code cell's outputs as text."""
    return "\n".join(output_text(output) for output in cell.outputs)
