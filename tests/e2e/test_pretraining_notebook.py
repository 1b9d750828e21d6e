"""The pretraining notebook: committed clean, and runs top to bottom in its tiny test mode.

The tiny run (notebook_helpers.py) builds records from data/sample_corpus.txt, pretrains a
2-layer BERT in two phases and fine-tunes it on data/sample_sentiment. Before the notebook's
phase-1 cell, the test starts the same command and kills it (SIGKILL, as a recycled runtime
ends it) after its second progress line; the notebook's cell must then resume from the
checkpoint that run left, not start again.
"""

import ast
import glob
import inspect
import json
import os
import re

import pytest

from bert_tf.checkpoints import model_cache, model_registry

pytest.importorskip("nbformat", reason="nbformat is not installed (pip install -e '.[test]')")
pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install -e '.[test]')")
pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[test]')")

from tests.helpers.notebook_helpers import (  # noqa: E402  (after the skips: it imports nbformat)
    assert_committed_clean,
    cell_text,
    code_cell,
    execute,
    inject_parameters,
    parameter_values,
    read,
)

NOTEBOOK = "bert_pretraining_with_cloud_tpus.ipynb"
FINETUNING_NOTEBOOK = "bert_finetuning_with_cloud_tpus.ipynb"

PARAMETERS = {"TEXT_SOURCE", "TFDS_SPLIT", "INPUT_FORMAT", "OUTPUT_DIR", "WORK_DIR",
              "VOCAB_FILE", "BERT_CONFIG", "DUPE_FACTOR", "RECORD_FILES", "PHASE1", "PHASE2",
              "SAVE_CHECKPOINTS_STEPS", "KEEP_CHECKPOINT_MAX", "ITERATIONS_PER_LOOP",
              "GLUE_TASK", "GLUE_DATA", "TINY_TEST_MODE", "BERT_TF_SOURCE"}

PHASE1_CELL = 'run_script("run_pretraining.py", pretraining_flags("phase1", PHASE1))'
PROGRESS = re.compile(r"step (\d+)/(\d+) +loss")

# Inserted before the phase-1 cell: the same command, killed after its second progress line.
KILLED_RUN = """\
import subprocess as _subprocess

_process = _subprocess.Popen(
    script_command("run_pretraining.py", pretraining_flags("phase1", PHASE1)),
    stdout=_subprocess.PIPE, stderr=_subprocess.STDOUT, text=True)
_progress_lines = 0
for _line in _process.stdout:
    print(_line, end="")
    if "loss" in _line and " step " in _line:
        _progress_lines += 1
        if _progress_lines == 2:
            _process.kill()
            break
print("KILLED", _process.wait())
"""

# Appended at the end: the kernel's own state.
PROBE = """\
import json as _json
import sys as _sys
print("PROBE " + _json.dumps({"tensorflow_imported": "tensorflow" in _sys.modules,
                             "phase1": PHASE1, "phase2": PHASE2, "glue": GLUE_OUTPUT}))
"""


def _index(notebook, text):
    return next(i for i, cell in enumerate(notebook.cells)
                if cell.cell_type == "code" and text in cell.source)


def _code_sources(notebook):
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_notebook_is_committed_clean():
    assert_committed_clean(read(NOTEBOOK))


def test_parameters_are_the_original_recipe_of_two_phases():
    values = parameter_values(read(NOTEBOOK))
    assert PARAMETERS <= set(values)
    assert values["TINY_TEST_MODE"] is False
    assert values["OUTPUT_DIR"].startswith("/content/drive/")
    for phase, length, predictions in (("PHASE1", 128, 20), ("PHASE2", 512, 80)):
        assert values[phase]["max_seq_length"] == length
        assert values[phase]["max_predictions_per_seq"] == predictions
    assert values["PHASE1"]["num_train_steps"] == 9 * values["PHASE2"]["num_train_steps"]


def test_the_default_vocabulary_is_a_model_name_read_from_bert_tfs_cache(tmp_path,
                                                                        monkeypatch):
    """VOCAB_FILE names a model as --init_checkpoint does; the cell copies its cached vocab.txt."""
    notebook = read(NOTEBOOK)
    values = parameter_values(notebook)
    model = model_registry.find(values["VOCAB_FILE"])
    assert model is not None and model.do_lower_case == values["DO_LOWER_CASE"]
    # The model in bert_tf's cache, where a command that named it left it (offline: no request).
    folder = tmp_path / "google" / values["VOCAB_FILE"]
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("[PAD]\n")
    monkeypatch.setenv(model_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv(model_cache.OFFLINE_ENVS[0], "1")
    cell = notebook.cells[_index(notebook, "def vocab_source(")].source
    namespace = {}
    exec("import os\n" + cell[:cell.index("VOCAB = ")], namespace)
    vocab_source = namespace["vocab_source"]
    assert vocab_source(values["VOCAB_FILE"]) == str(folder / "vocab.txt")
    assert vocab_source("gs://bucket/vocab.txt") == "gs://bucket/vocab.txt"
    with pytest.raises(SystemExit, match="^VOCAB_FILE: uncased_L-4_H-256_A-4: not in the cache "):
        vocab_source("uncased_L-4_H-256_A-4")


def test_the_install_cell_is_the_finetuning_notebooks():
    """tests/e2e/test_notebook_install.py tests that cell; both notebooks install alike."""
    install = [s for s in _code_sources(read(FINETUNING_NOTEBOOK)) if "def bert_tf_importable" in s]
    assert len(install) == 1 and install[0] in _code_sources(read(NOTEBOOK))
    markdown = [cell.source for cell in read(NOTEBOOK).cells if cell.cell_type == "markdown"]
    section = next(text for text in markdown if text.startswith("## 3. Install"))
    assert "JAX" in section and "can then no longer use the TPU" in section


def test_the_kernel_never_imports_tensorflow():
    """The scripts need the TPU, which one process at a time can hold."""
    from IPython.core.inputtransformer2 import TransformerManager

    for source in _code_sources(read(NOTEBOOK)):
        # As IPython runs it: magics become calls.
        tree = ast.parse(TransformerManager().transform_cell(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module]
            else:
                continue
            assert not any(m.split(".")[0].startswith("tensorflow") for m in modules), modules


def test_notebook_runs_in_tiny_mode_and_a_killed_run_resumes(tmp_path, monkeypatch):
    out, work = tmp_path / "out", tmp_path / "work"
    notebook = read(NOTEBOOK)
    inject_parameters(notebook, {"OUTPUT_DIR": str(out), "WORK_DIR": str(work)})
    notebook.cells.insert(_index(notebook, PHASE1_CELL), code_cell(KILLED_RUN, "killed-run"))
    notebook.cells.append(code_cell(PROBE, "probe"))
    execute(notebook, monkeypatch)

    texts = {i: cell_text(cell) for i, cell in enumerate(notebook.cells)
             if cell.cell_type == "code"}
    probe = json.loads(texts[len(notebook.cells) - 1].split("PROBE ", 1)[1].splitlines()[0])
    assert probe["tensorflow_imported"] is False
    phase1, phase2 = probe["phase1"], probe["phase2"]
    every_save = 5  # the tiny mode's SAVE_CHECKPOINTS_STEPS and ITERATIONS_PER_LOOP

    # The text, read by create_pretraining_data.py in the original's format, and each phase's
    # records.
    records_text = texts[_index(notebook, "def build_records(")]
    assert records_text.count("--input_format=sentences") == 2
    for phase in ("phase1", "phase2"):
        records = glob.glob(str(work / "records" / phase / "part-*-of-00002.tfrecord"))
        assert len(records) == 2 and all(os.path.getsize(path) > 0 for path in records)

    # The killed run: two progress lines, then SIGKILL, with a checkpoint left behind.
    killed = texts[_index(notebook, "_process.kill()")]
    assert [int(m.group(1)) for m in PROGRESS.finditer(killed)] == [every_save, 2 * every_save]
    assert "KILLED -9" in killed

    # The notebook's phase-1 cell, the same command: it resumes at the killed run's last
    # checkpoint and goes on from there to the end, not from step 0.
    resumed = texts[_index(notebook, PHASE1_CELL)]
    step = int(re.search(r"Resumed from \S+ at step (\d+)", resumed).group(1))
    assert step in (every_save, 2 * every_save)
    steps = [int(m.group(1)) for m in PROGRESS.finditer(resumed)]
    assert steps[0] == step + every_save and steps[-1] == phase1["num_train_steps"]
    assert os.path.exists(out / "phase1" / f"ckpt-{phase1['num_train_steps']}.index")

    # Phase 2 starts from phase 1's last checkpoint, at its own step 0.
    phase2_text = texts[_index(notebook, 'pretraining_flags("phase2"')]
    assert f"--init_checkpoint={out}/phase1/ckpt-{phase1['num_train_steps']}" in phase2_text
    assert [int(m.group(1)) for m in PROGRESS.finditer(phase2_text)][-1] == \
        phase2["num_train_steps"]
    for phase, settings in (("phase1", phase1), ("phase2", phase2)):
        with open(out / phase / "eval_results.txt", encoding="utf-8") as f:
            results = dict(line.strip().split(" = ") for line in f)
        assert int(results["global_step"]) == settings["num_train_steps"]
        assert 0 <= float(results["masked_lm_accuracy"]) <= 1

    # The loss curves, and the fine-tuning's dev-set results from the new checkpoint.
    curves = notebook.cells[_index(notebook, "def scalars(")]
    assert any("image/png" in o.get("data", {}) for o in curves.outputs)
    finetuning = texts[_index(notebook, 'run_script("run_classifier.py"')]
    assert f"--init_checkpoint={out}/phase2/ckpt-{phase2['num_train_steps']}" in finetuning
    with open(os.path.join(probe["glue"], "eval_results.txt"), encoding="utf-8") as f:
        results = dict(line.strip().split(" = ") for line in f)
    assert 0 <= float(results["eval_accuracy"]) <= 1
    assert f"eval_accuracy = {float(results['eval_accuracy']):.4f}" in finetuning


def test_full_size_batches_split_into_micro_batches_that_suit_a_tpu():
    values = parameter_values(read(NOTEBOOK))
    for phase in (values["PHASE1"], values["PHASE2"]):
        micro_batch, rest = divmod(phase["train_batch_size"],
                                   phase["gradient_accumulation_steps"])
        assert rest == 0 and micro_batch % 8 == 0
        assert phase["max_predictions_per_seq"] <= phase["max_seq_length"]
    assert values["SAVE_CHECKPOINTS_STEPS"] % values["ITERATIONS_PER_LOOP"] == 0


def _run_text_cell(work, source, **settings):
    """Runs the text cell (section 5) on its own; returns the TEXT_FLAGS it made."""
    notebook = read(NOTEBOOK)
    cell = notebook.cells[_index(notebook, "def text_flags(")].source
    folders = notebook.cells[_index(notebook, "def copy_to_local(")].source
    # The folders cell's helpers, without its TINY_TEST_MODE settings or Drive and bucket.
    helpers = folders[folders.index("def on_gcs("):folders.index("locations = ")]
    namespace = {"__name__": "__main__", "TEXT_SOURCE": str(source), "WORK_DIR": str(work),
                 "INPUT_FORMAT": "paragraphs", "MAX_DOCUMENTS": None, "TFDS_SPLIT": "train",
                 "TFDS_TEXT_FEATURE": "text", **settings}
    exec("import glob, json, os, re, shutil, sys\n" + helpers + cell, namespace)
    return namespace["TEXT_FLAGS"]


def test_plain_text_is_shown_as_the_script_reads_it_and_old_records_go(tmp_path, capsys):
    source = tmp_path / "corpus.txt"
    source.write_text(
        "The first document starts here. It has two sentences!\nA second line? Yes.\n\n\n"
        "Document two is short. \"Quoted starts\" stay apart.\n", encoding="utf-8")
    work = tmp_path / "work"
    assert _run_text_cell(work, source) == {"input_file": str(source),
                                            "input_format": "paragraphs"}
    assert capsys.readouterr().out == (
        "The first document starts here.\nIt has two sentences!\nA second line?\nYes.\n\n"
        "Document two is short.\n\"Quoted starts\" stay apart.\n\n")
    # Records made from the same text are kept; from other text they go.
    (work / "records" / "phase1").mkdir()
    _run_text_cell(work, source)
    assert (work / "records" / "phase1").is_dir()
    assert _run_text_cell(work, source, MAX_DOCUMENTS=1)["max_documents"] == 1
    assert not (work / "records" / "phase1").exists()


def test_a_tfds_source_becomes_the_scripts_tfds_flags(tmp_path, capsys):
    flags = _run_text_cell(tmp_path / "work", "tfds:imdb_reviews/plain_text",
                           TFDS_SPLIT="unsupervised")
    assert flags == {"tfds_name": "imdb_reviews/plain_text", "tfds_split": "unsupervised",
                     "tfds_text_feature": "text",
                     "tfds_data_dir": str(tmp_path / "work" / "tensorflow_datasets")}
    assert "read by create_pretraining_data.py in section 7" in capsys.readouterr().out


def test_the_default_text_is_a_tfds_data_set_that_needs_no_beam_to_prepare(tmp_path):
    """TFDS prepares a data set on the runtime from its source (tensorflow-datasets 4.9.10
    takes no prepared copy from its bucket), so the default must not need Apache Beam or
    mwparserfromhell, as wikipedia and wiki40b do."""
    import tensorflow_datasets as tfds

    values = parameter_values(read(NOTEBOOK))
    assert values["TEXT_SOURCE"].startswith("tfds:")
    builder = tfds.builder(values["TEXT_SOURCE"][len("tfds:"):], data_dir=str(tmp_path))
    assert isinstance(builder.info.features[values["TFDS_TEXT_FEATURE"]], tfds.features.Text)
    code = inspect.getsource(inspect.getmodule(type(builder)))
    assert "apache_beam" not in code and "mwparserfromhell" not in code
    wikipedia = tfds.builder("wikipedia/20230601.simple", data_dir=str(tmp_path))
    assert "apache_beam" in inspect.getsource(inspect.getmodule(type(wikipedia)))
