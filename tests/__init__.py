"""The test suite, a package: test files of one name in different folders (such as
unit/data/glue/test_reading.py and unit/data/squad/test_reading.py) get module names of
their own, and every folder imports the shared helpers as tests.helpers."""
