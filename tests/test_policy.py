"""Ownership scope matching and the mass-removal guard."""

import pytest

from kquota.model import Entity
from kquota.policy import Policy, Removals, ScopeMatch


def e(**parts: str | None) -> Entity:
    return Entity.of({k.replace("_", "-"): v for k, v in parts.items()})


@pytest.mark.parametrize(
    ("match", "entity", "expected"),
    [
        ({"user": "team-*"}, e(user="team-a"), True),
        ({"user": "team-*"}, e(user="other"), False),
        ({"user": "team-*"}, e(user=None), False),
        ({"user": "team-*"}, e(user="team-a", client_id="x"), False),  # exact type set
        ({"user": "team-*", "client-id": "*"}, e(user="team-a", client_id="x"), True),
        ({"user": "team-*", "client-id": "*"}, e(user="team-a", client_id=None), True),
        ({"user": "<default>"}, e(user=None), True),
        ({"user": "<default>"}, e(user="<default>"), False),  # a literal name is not default
        ({"user": "*"}, e(user="<default>"), True),
        ({"ip": "*"}, e(ip=None), True),
        ({"ip": "10.0.*"}, e(ip="10.0.0.1"), True),
        ({"user": "Team-*"}, e(user="team-a"), False),  # case-sensitive
        ({"client-id": "etl-?"}, e(client_id="etl-1"), True),
    ],
)
def test_scope_match(match: dict[str, str], entity: Entity, expected: bool) -> None:
    assert ScopeMatch.of(match).matches(entity) is expected
    assert Policy(scope=(ScopeMatch.of(match),)).in_scope(entity) is expected


def test_scope_all() -> None:
    assert Policy().in_scope(e(user="x", client_id=None))
    assert Policy.build("all").scope is None
    assert not Policy.build([{"ip": "*"}]).in_scope(e(user="x"))


def test_defaults() -> None:
    p = Policy()
    assert (p.prune, p.max_removals, p.max_removal_fraction) == (False, 10, 0.3)


def test_guard_thresholds() -> None:
    p = Policy()
    assert p.guard(Removals(0, 0, 100, 50), desired_empty=True) is None
    assert p.guard(Removals(10, 5, 100, 50), desired_empty=False) is None
    msg = p.guard(Removals(11, 5, 100, 50), desired_empty=False)
    assert msg is not None and "max_removals=10" in msg
    msg = p.guard(Removals(4, 4, 10, 10), desired_empty=False)
    assert msg is not None and "40%" in msg
    assert p.guard(Removals(3, 3, 10, 10), desired_empty=False) is None
    # Small clusters: the share test needs at least 10 managed values.
    assert p.guard(Removals(3, 3, 5, 5), desired_empty=False) is None


def test_guard_empty_desired_always_trips() -> None:
    p = Policy(max_removals=1000, max_removal_fraction=1.0)
    msg = p.guard(Removals(1, 1, 1, 1), desired_empty=True)
    assert msg is not None and "desired state is empty" in msg


def test_observed_in_each_mode() -> None:
    entities = [e(user="team-a"), e(user="other"), e(client_id="team-b"), e(user=None)]
    assert Policy().observed_in(iter(entities)) == []
    assert Policy(observe=True).observed_in(iter(entities)) == entities
    observed = Policy(observed=(ScopeMatch.of({"user": "team-*"}), ScopeMatch.of({"user": "*"})))
    assert observed.observed_in(iter(entities)) == [e(user="team-a"), e(user="other"), e(user=None)]
