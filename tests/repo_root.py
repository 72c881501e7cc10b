"""The repository's root, for the tests that read its own files (docs, scripts, workflows,
examples, the lock): one definition, wherever the test file sits."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
