"""Helper modules for the tests (importable as ``helpers``: pytest puts ``tests/`` on ``sys.path``)."""
