"""What the tests share: tiny models, dataset readers, cluster and notebook runners, and
the repository's paths.

The tests import these as `tests.helpers.<module>` (tests/ is a package, found from the
repository's root, which pytest.ini puts on sys.path). script_rules.py and
hub_keras_layer_check.py also run as scripts, in processes of their own.
"""

import os

# The repository's root, and the fixture files the tests ship.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
