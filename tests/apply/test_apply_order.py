"""The commit order that leaves no principal unthrottled between alterations (pure part;
the broker test is tests/integration/test_integration_impact.py::
test_a_quota_moving_between_entities_is_never_missing)."""

from __future__ import annotations

from kquota.apply.applier import commit_batches, commit_order, commit_phase
from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op

K, J = "producer_byte_rate", "consumer_byte_rate"


def _alt(name: str | None, *ops: Op) -> Alteration:
    return Alteration(Entity.of({"user": name}), ops, ChangeKind.UPDATE)


SET = Op(K, 2.0, False, 1.0)
NEW = Op(J, 2.0, False, None)
REMOVE = Op(K, None, True, 1.0)


def test_sets_commit_before_mixed_before_removes_in_plan_order() -> None:
    plan_order = [
        _alt(None, NEW),  # sorted first in a plan: <default>
        _alt("alice", REMOVE),
        _alt("bob", Op(J, None, True, 1.0), SET),
        _alt("carol", SET),
        _alt("dave", REMOVE),
    ]
    ordered = commit_order(plan_order)
    names = [a.entity.name("user") for a in ordered]
    assert names == [None, "carol", "bob", "alice", "dave"]
    assert [commit_phase(a) for a in ordered] == [0, 0, 1, 2, 2]


def test_batches_never_span_two_phases() -> None:
    ordered = commit_order(
        [_alt(f"s{i}", SET) for i in range(5)] + [_alt(f"r{i}", REMOVE) for i in range(3)]
    )
    assert commit_batches(ordered, 2) == [(0, 2), (2, 4), (4, 5), (5, 7), (7, 8)]
    assert commit_batches(ordered, 100) == [(0, 5), (5, 8)]
    assert commit_batches([], 10) == []


def test_batches_end_where_the_admins_requests_end_within_their_size() -> None:
    """A batch ends at the last request end within its size (so it sends the validate-only
    pass's very requests again), at its size when none is, and at its phase's end."""
    ordered = commit_order(
        [_alt(f"s{i}", SET) for i in range(9)] + [_alt(f"r{i}", REMOVE) for i in range(3)]
    )
    ends = [3, 6, 9, 12]  # requests of three entities, over both phases
    assert commit_batches(ordered, 4, ends) == [(0, 3), (3, 6), (6, 9), (9, 12)]
    assert commit_batches(ordered, 7, ends) == [(0, 6), (6, 9), (9, 12)]
    # Smaller than a request: a batch still ends at one when it can, the next starts there.
    assert commit_batches(ordered, 2, ends) == [
        *[(0, 2), (2, 3), (3, 5), (5, 6), (6, 8), (8, 9)],
        *[(9, 11), (11, 12)],
    ]
    assert commit_batches(ordered, 100, ends) == [(0, 9), (9, 12)]
    assert commit_batches(ordered, 4, [5, 12]) == [(0, 4), (4, 5), (5, 9), (9, 12)]


def test_more_entities_holding_a_key_never_unlimit_a_named_user() -> None:
    """The premise of the commit order (docs/apply-safety.md): for a principal with a user
    name (every connection has one, ANONYMOUS at least) and any client id, empty or not,
    adding a candidate entity that holds a key never leaves the key unlimited."""
    from itertools import combinations

    from kquota.plan.precedence import Level, candidate, choose

    for client in ("", "app"):
        possible = [
            level
            for level in Level
            if all(n != "" for _, n in candidate(level, "alice", client).parts)
        ]
        for size in range(len(possible) + 1):
            for present in combinations(possible, size):
                if choose(present, "alice", client) is None:
                    continue
                for extra in possible:
                    assert choose({*present, extra}, "alice", client) is not None, (
                        client,
                        present,
                        extra,
                    )
