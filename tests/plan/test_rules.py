"""The classify table is total, unambiguous, and says what the design says."""

from itertools import product

import pytest

from kquota.plan.rules import RULES, TABLE, Outcome, classify, entity_outcome, possible, same_value


def test_every_possible_combination_matches_exactly_one_rule() -> None:
    for facts in product((False, True), repeat=6):
        if possible(facts):  # type: ignore[arg-type]
            hits = [r for r in RULES if r.matches(facts)]  # type: ignore[arg-type]
            assert len(hits) == 1, facts
            assert TABLE[facts] is hits[0].outcome  # type: ignore[index]


@pytest.mark.parametrize(
    ("in_scope", "declared", "prune", "desired", "current", "expected"),
    [
        (False, True, True, 1.0, 2.0, Outcome.IGNORED),
        (False, False, True, None, 2.0, Outcome.IGNORED),
        (True, True, False, 1.0, None, Outcome.SET),
        (True, True, False, 1.0, 2.0, Outcome.SET),
        (True, True, False, 2.0, 2.0, Outcome.UNCHANGED),
        (True, True, False, None, 2.0, Outcome.REMOVE),  # owned whole, prune irrelevant
        (True, False, True, None, 2.0, Outcome.REMOVE),
        (True, False, False, None, 2.0, Outcome.UNCHANGED),
    ],
)
def test_classify(
    in_scope: bool,
    declared: bool,
    prune: bool,
    desired: float | None,
    current: float | None,
    expected: Outcome,
) -> None:
    got = classify(
        in_scope=in_scope, declared=declared, prune=prune, desired=desired, current=current
    )
    assert got is expected


def test_entity_outcome_shortcuts_derive_from_the_table() -> None:
    assert entity_outcome(in_scope=False, declared=True, prune=True) is Outcome.IGNORED
    assert entity_outcome(in_scope=False, declared=False, prune=False) is Outcome.IGNORED
    assert entity_outcome(in_scope=True, declared=False, prune=True) is Outcome.REMOVE
    assert entity_outcome(in_scope=True, declared=False, prune=False) is Outcome.UNCHANGED
    assert entity_outcome(in_scope=True, declared=True, prune=False) is None


def test_same_value_is_bitwise() -> None:
    assert same_value(1048576.0, 1048576.0)
    assert not same_value(0.1 + 0.2, 0.3)
    assert not same_value(1.0, 1.0000000000000002)
    assert not same_value(0.0, -0.0)
    assert same_value(-0.0, -0.0)
    assert same_value(float("inf"), float("inf"))
    assert same_value(float("nan"), float("nan"))
    assert not same_value(float("nan"), 1.0)
