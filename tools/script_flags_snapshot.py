"""Records each script's flags (name, type, default), to keep them as the original's.

The scripts' flags are generated from the library's configs; the users' command
lines must keep working whatever the configs look like. This writes what every
script defines today to tests/fixtures/script_flags.json, which
tests/e2e/test_script_flag_names.py compares with the scripts as they are:

  python -m tools.script_flags_snapshot

Only the flags that bert_tf and the script define are recorded, not those that
absl, TensorFlow or TensorFlow Datasets add to every program.
"""

import argparse
import importlib.util
import json
import multiprocessing
import os
import sys

from absl import flags

SCRIPTS = ("run_pretraining.py", "run_classifier.py", "run_squad.py", "run_ner.py",
           "run_swag.py", "extract_features.py", "convert_checkpoint.py",
           "create_pretraining_data.py", "learn_vocab.py", "predict_text.py",
           "predict_entities.py", "predict_choices.py", "predict_answers.py")
FIXTURE = os.path.join("tests", "fixtures", "script_flags.json")
# The module name a script is loaded under, so that its own flags can be told
# apart from those its imports define.
_SCRIPT_MODULE = "script_under_test"


def _own_flags(path):
    """{flag name: [type, default]} of the flags a script and bert_tf define.

    Runs in a child process of its own: a script defines its flags in the
    process-wide flags.FLAGS when it is loaded.

    Args:
      path: The script's path.

    Returns:
      The flags, by name.
    """
    spec = importlib.util.spec_from_file_location(_SCRIPT_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    # absl names a flag's module from sys.modules.
    sys.modules[_SCRIPT_MODULE] = module
    spec.loader.exec_module(module)
    result = {}
    for module_name, defined in flags.FLAGS.flags_by_module_dict().items():
        if module_name != _SCRIPT_MODULE and not module_name.startswith("bert_tf"):
            continue
        for flag in defined:
            result[flag.name] = [flag.flag_type(), flag.default]
    return dict(sorted(result.items()))


def script_flags(root="."):
    """{script: {flag name: [type, default]}} of every script in SCRIPTS.

    Args:
      root: The repository's root.

    Returns:
      The scripts' flags, each script loaded in a process of its own.
    """
    # Each script in a process forked from a fresh server that has imported
    # what the scripts share: TensorFlow loads once, and no script finds the
    # flags of another (or of the caller's imports) already defined.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["bert_tf.cli.config_flags", "bert_tf.configs"])
    with context.Pool(1, maxtasksperchild=1) as pool:
        found = pool.map(_own_flags, [os.path.join(root, script) for script in SCRIPTS],
                         chunksize=1)
    return dict(zip(SCRIPTS, found, strict=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=FIXTURE)
    args = parser.parse_args()
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(script_flags(), f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
