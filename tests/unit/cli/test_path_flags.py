"""The rules every script follows, on every script's own flags: the path flags'
(bert_tf/cli/path_flags.py) and scoring's need of weights (bert_tf/training/run_checks.py).

The path rules run in cli.run before main(), on flag values alone, and the
weights rule first thing in main(): one subprocess (tests/helpers/script_rules.py)
checks every case of every script, then each script's test reads its results.
"""

import json
import os
import subprocess
import sys

import pytest
from absl import flags

from bert_tf import output_folders
from bert_tf.cli import path_flags
from tests import helpers

ROOT = helpers.ROOT
# Every top-level .py but the installers is a script; a new one is covered by itself.
SCRIPTS = sorted(name for name in os.listdir(ROOT)
                 if name.endswith(".py") and name not in ("setup.py", "install.py"))


def test_every_script_runs_through_cli_run():
    """cli.run applies the rules: a script that bypassed it would skip them."""
    for script in SCRIPTS:
        with open(os.path.join(ROOT, script), encoding="utf-8") as f:
            assert "cli.run(main)" in f.read(), script


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    work = tmp_path_factory.mktemp("rules")
    env = {**os.environ, "HOME": str(work / "home"), "PYTHONPATH": ROOT}
    script = os.path.join(ROOT, "tests", "helpers", "script_rules.py")
    done = subprocess.run([sys.executable, script, str(work / "cases"), *SCRIPTS], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return work, json.loads(done.stdout)


def _last_line(case):
    return case["stderr"].strip().splitlines()[-1]


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_has_input_and_output_path_flags(results, script):
    roles = set(results[1][script]["roles"].values())
    assert path_flags.INPUT in roles and roles - {path_flags.INPUT}, roles


@pytest.mark.parametrize("script", SCRIPTS)
def test_tilde_expands_in_every_path_flag(results, script):
    work, cases = results
    home = str(work / "home")
    for case in cases[script]["cases"]:
        if case["case"] == "tilde":
            assert case["code"] in (0, None), case["stderr"]
            assert case["values"] == {name: os.path.join(home, name)
                                      for name in cases[script]["roles"]}
        if case["case"] == "tilde parts":
            assert case["values"]["input_file"] == f"{home}/a*.txt, {home}/b.txt"


@pytest.mark.parametrize("script", SCRIPTS)
def test_no_output_flag_may_name_an_input(results, script):
    """Each output flag against each input flag: refused in one line naming both."""
    checked = 0
    for case in results[1][script]["cases"]:
        if " over " not in case["case"]:
            continue
        output, name = case["case"].split(" over ")
        line = _last_line(case)
        assert case["code"] == 1 and case["values"] is None, case
        assert line.startswith(f"{script}: error: --{output}="), line
        assert f"the input --{name}=" in line and "Traceback" not in case["stderr"], line
        checked += 1
    assert checked


@pytest.mark.parametrize("script", SCRIPTS)
def test_output_paths_that_cannot_be_written_are_refused_before_any_work(results, script):
    messages = {"is a folder": "is a folder; give the name of a file to write",
                "is a file": "is not a directory, but a file",
                "under a file": "is a file, not a folder"}
    checked = 0
    for case in results[1][script]["cases"]:
        kind = next((kind for kind in messages if case["case"].endswith(kind)), None)
        if kind is None:
            continue
        assert case["code"] == 1 and case["values"] is None, case
        assert messages[kind] in _last_line(case) and "Traceback" not in case["stderr"]
        checked += 1
    assert checked


def _flags(**values):
    """A FlagValues with path flags of these names, parsed from these values."""
    flag_values = flags.FlagValues()
    for name in values:
        flags.DEFINE_string(name, None, "", flag_values=flag_values)
    path_flags.expand_home(flag_values)
    flag_values(["prog", *(f"--{name}={value}" for name, value in values.items())])
    return flag_values


def test_a_glob_or_list_of_inputs_is_spared_part_by_part(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    with pytest.raises(path_flags.PathFlagError, match=(
            rf"--output_file={tmp_path}/b.txt would overwrite the input "
            rf"--input_file=x.txt,{tmp_path}/\*.txt \({tmp_path}/b.txt\)")):
        path_flags.check(_flags(input_file=f"x.txt,{tmp_path}/*.txt",
                                output_file=f"{tmp_path}/out.tfrecord,{tmp_path}/b.txt"))
    # A file of an input folder (a Hugging Face folder's weights) is an input too.
    with pytest.raises(path_flags.PathFlagError, match="would overwrite the input "
                       f"--init_checkpoint={tmp_path} "):
        path_flags.check(_flags(init_checkpoint=str(tmp_path),
                                output_file=str(tmp_path / "a.txt")))
    # Through another spelling of the same path.
    with pytest.raises(path_flags.PathFlagError, match="would overwrite"):
        path_flags.check(_flags(input_file=str(tmp_path / "a.txt"),
                                output_file=f"{tmp_path}/../{tmp_path.name}/a.txt"))
    path_flags.check(_flags(input_file=f"{tmp_path}/*.txt", output_file=f"{tmp_path}/c.txt",
                            output_dir=str(tmp_path / "run")))


def test_a_run_folder_may_be_its_own_init_checkpoint(tmp_path):
    """A run only adds to its --output_dir: naming it as an input folder loses nothing."""
    path_flags.check(_flags(init_checkpoint=str(tmp_path), output_dir=str(tmp_path)))


def test_an_export_may_not_replace_the_run_it_exports(tmp_path):
    with pytest.raises(path_flags.PathFlagError, match=(
            f"--export_dir={tmp_path} would delete --output_dir={tmp_path}/run")):
        path_flags.check(_flags(output_dir=str(tmp_path / "run"), export_dir=str(tmp_path)))
    path_flags.check(_flags(output_dir=str(tmp_path / "run"),
                            export_dir=str(tmp_path / "export")))


def test_an_export_replaces_only_an_earlier_saved_model(tmp_path):
    """--export_dir is replaced whole: a folder of a user's files is refused before any work."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(output_folders.OutputFolderError, match=(
            f"^--export_dir={mine} holds files that are no part of an earlier SavedModel "
            r"\(notes.txt\), which writing the SavedModel there would delete: give a new or "
            "empty folder$")):
        path_flags.check(_flags(export_dir=str(mine)))
    assert (mine / "notes.txt").read_text() == "mine"
    earlier = tmp_path / "earlier"
    (earlier / "variables").mkdir(parents=True)
    for name in ("saved_model.pb", "variables/variables.index"):
        (earlier / name).write_text("earlier")
    (tmp_path / "empty").mkdir()
    for folder in ("earlier", "empty", "missing"):
        path_flags.check(_flags(export_dir=str(tmp_path / folder)))


def test_remote_paths_are_compared_by_name_only():
    with pytest.raises(path_flags.PathFlagError, match="would overwrite"):
        path_flags.check(_flags(input_file="gs://b/x", output_file="gs://b/x"))
    path_flags.check(_flags(input_file="gs://b/x", output_file="gs://b/y"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_parent_is_refused(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o555)
    with pytest.raises(path_flags.PathFlagError, match="is not writable"):
        path_flags.check(_flags(output_file=str(tmp_path / "ro" / "new" / "out.txt")))


@pytest.mark.parametrize("script", SCRIPTS)
def test_scoring_random_weights_needs_asking_by_name(results, script):
    """Every script that evaluates refuses random weights before any work."""
    work, scripts = results
    if "do_eval" not in scripts[script]["flags"]:
        return
    assert "allow_random_weights" in scripts[script]["flags"]
    (case,) = [case for case in scripts[script]["cases"] if case["case"] == "random weights"]
    assert case["code"] == 1 and "Traceback" not in case["stderr"]
    assert _last_line(case) == (
        f"{script}: error: --do_eval would use random weights: --output_dir="
        f"{work}/cases/empty_run holds no checkpoint, and there is no --init_checkpoint or "
        "--do_train; give one of them, or --allow_random_weights to run on random weights "
        "anyway")
    assert not (work / "cases" / "empty_run").exists()
