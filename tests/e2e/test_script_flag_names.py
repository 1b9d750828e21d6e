"""Every script's flags keep their names, types and defaults, whatever the configs look like.

The training scripts' flags are generated from the configs (bert_tf/configs/);
the users' command lines are the original's. tests/fixtures/script_flags.json
records each script's flags (tools/script_flags_snapshot.py wrote it); a
flag renamed, dropped, added or given another default fails here.
"""

import json
import os

from tests import helpers
from tools import script_flags_snapshot


def test_each_scripts_flags_are_the_recorded_ones():
    with open(os.path.join(helpers.ROOT, script_flags_snapshot.FIXTURE), encoding="utf-8") as f:
        recorded = json.load(f)
    # Through JSON, as recorded: tuples become lists.
    now = json.loads(json.dumps(script_flags_snapshot.script_flags(helpers.ROOT)))
    assert sorted(now) == sorted(recorded)
    for script, script_flags in recorded.items():
        assert now[script] == script_flags, script
