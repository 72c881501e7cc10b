"""SourceLocation and Problem: where a desired-state problem is, as messages show it."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from kquota.desired.problems import Problem, SourceLocation


def test_a_location_is_a_frozen_ordered_dataclass_whose_init_is_written_by_hand() -> None:
    # Its __init__ sets the slots through their own setters (faster than a frozen
    # dataclass's own): equality, order, hashing, repr and freezing stay a dataclass's.
    at = SourceLocation("quotas/a.yaml", 3, 5)
    assert (at.file, at.line, at.column) == ("quotas/a.yaml", 3, 5)
    assert str(at) == "quotas/a.yaml:3:5"
    assert repr(at) == "SourceLocation(file='quotas/a.yaml', line=3, column=5)"
    assert at == SourceLocation("quotas/a.yaml", 3, 5)
    assert hash(at) == hash(SourceLocation("quotas/a.yaml", 3, 5))
    assert at < SourceLocation("quotas/a.yaml", 3, 6) < SourceLocation("quotas/b.yaml", 1, 1)
    assert at != ("quotas/a.yaml", 3, 5)  # type: ignore[comparison-overlap]  # no tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        at.line = 4  # type: ignore[misc]
    assert dataclasses.replace(at, line=4) == SourceLocation("quotas/a.yaml", 4, 5)
    assert pickle.loads(pickle.dumps(at)) == at
    assert Problem("quotas/a.yaml", 3, 5, "wrong").location == at
