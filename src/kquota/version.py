"""The one place kquota's version is written.

setuptools reads it for the package metadata (``[tool.setuptools.dynamic]`` in
pyproject.toml), ``kquota --version`` prints it, saved plans and audit events record it, and
CHANGELOG.md's newest heading and the release tag (``v`` + this) must agree with it
(tests/test_packaging.py).
"""

__version__ = "0.1.0"
