"""Runs cli.run's path-flag rules on every script's own flags, in one process.

tests/unit/cli/test_path_flags.py starts this once (one TensorFlow import for all
scripts, not one per case): for each script it loads the script's flag
definitions into absl's FLAGS (emptied of the previous script's), builds the
cases from the script's path flags, and runs each through cli.run with a main
that only records the flags' values. A script that evaluates (--do_eval) also
runs its own main on --do_eval with an empty --output_dir, which must stop
before any work. It prints {script: {"roles", "flags", "cases"}} as JSON.

  python tests/helpers/script_rules.py WORK_DIR SCRIPT...

WORK_DIR is an empty folder for the cases' files; HOME should point into it.
"""

import contextlib
import io
import json
import os
import runpy
import sys

from absl import flags

from bert_tf import cli
from bert_tf.cli import path_flags

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Required flags that are no path, with a value each.
REQUIRED = {"run_classifier.py": ["--task_name=SST-2"],
            "convert_checkpoint.py": ["--output_format=tf2"]}
OUTPUT_ROLES = (path_flags.OUTPUT_FILE, path_flags.OUTPUT_DIR, path_flags.REPLACED_DIR,
                path_flags.OUTPUT_PATH)


def _load(script, builtin):
    """Replaces the previous script's flags in FLAGS by this one's."""
    for name in list(flags.FLAGS):
        if name not in builtin and name in flags.FLAGS:
            delattr(flags.FLAGS, name)
    return runpy.run_path(os.path.join(ROOT, script), run_name="script_rules")


def _run(script, argv, script_main=None):
    """cli.run of a main that records the path flags' values, then runs script_main if
    given; {"code", "stderr", "values"}."""
    flags.FLAGS.unparse_flags()
    values = {}

    def main(args):
        values.update({name: flags.FLAGS[name].value
                       for name in path_flags.path_flags(flags.FLAGS)})
        if script_main is not None:
            script_main(args)

    stderr = io.StringIO()
    code = 0
    with contextlib.redirect_stderr(stderr):
        try:
            cli.run(main, [script, *argv])
        except SystemExit as e:
            code = e.code
    return {"code": code, "stderr": stderr.getvalue(), "values": values or None}


def _cases(script, roles, work):
    """(name, argv) of each case for a script whose path flags have these roles."""
    base = REQUIRED.get(script, [])
    fresh = {name: f"--{name}={os.path.join(work, 'fresh', name)}" for name in roles}
    an_input = os.path.join(work, "inputs", "data.txt")
    a_file = os.path.join(work, "a_file")
    cases = [("tilde", base + [f"--{name}=~/{name}" for name in roles])]
    if "input_file" in roles and roles["input_file"] == path_flags.INPUT:
        # Globs and comma-separated parts expand too.
        others = [fresh[name] for name in roles if name != "input_file"]
        cases.append(("tilde parts", base + others + ["--input_file=~/a*.txt, ~/b.txt"]))
    outputs = [name for name, role in roles.items() if role in OUTPUT_ROLES]
    inputs = [name for name, role in roles.items() if role == path_flags.INPUT]
    for output in outputs:
        others = [fresh[name] for name in roles if name != output]
        for name in inputs:
            target = (os.path.dirname(an_input) if roles[output] == path_flags.REPLACED_DIR
                      else an_input)
            argv = [arg for arg in others if not arg.startswith(f"--{name}=")]
            cases.append((f"{output} over {name}",
                          base + argv + [f"--{name}={an_input}", f"--{output}={target}"]))
        if roles[output] == path_flags.OUTPUT_FILE:
            cases.append((f"{output} is a folder", base + others + [f"--{output}={work}"]))
        if roles[output] in (path_flags.OUTPUT_DIR, path_flags.REPLACED_DIR):
            cases.append((f"{output} is a file", base + others + [f"--{output}={a_file}"]))
        cases.append((f"{output} under a file",
                      base + others + [f"--{output}={os.path.join(a_file, 'x')}"]))
    return cases


def main(work, scripts):
    os.makedirs(os.path.join(work, "inputs"))
    with open(os.path.join(work, "inputs", "data.txt"), "w", encoding="utf-8") as f:
        f.write("text\n")
    with open(os.path.join(work, "a_file"), "w", encoding="utf-8") as f:
        f.write("a file\n")
    builtin = set(flags.FLAGS)
    results = {}
    for script in scripts:
        script_main = _load(script, builtin)["main"]
        roles = path_flags.path_flags(flags.FLAGS)
        cases = [{"case": name, "argv": argv, **_run(script, argv)}
                 for name, argv in _cases(script, roles, work)]
        if "do_eval" in flags.FLAGS:
            argv = REQUIRED.get(script, []) + [
                "--do_eval", f"--output_dir={os.path.join(work, 'empty_run')}",
                f"--bert_config_file={os.path.join(work, 'bert_config.json')}",
                f"--input_file={os.path.join(work, 'records')}"]
            argv = [arg for arg in argv if arg.split("=")[0][2:] in flags.FLAGS]
            cases.append({"case": "random weights", "argv": argv,
                          **_run(script, argv, script_main)})
        results[script] = {"roles": roles, "flags": sorted(flags.FLAGS), "cases": cases}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
