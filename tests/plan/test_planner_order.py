"""The planner's sorted walk (``plan(order=)``) and its new-entity path make the plan the
plain walk makes, field for field.

``order`` is desired's entities sorted once (the loader sorts them for the digest); the
planner checks that they are exactly desired's and then walks them, so a plan of declared
entities comes out in order without a second sort. Names here are the hostile ones (NUL,
which sorts by the tuple key, controls, bidi and zero-width characters, non-ASCII, very long
names), default entities, ip entities the cluster spells another way, unknown types.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile_names import HOSTILE

from kquota.model import Entity, QuotaState, sorted_entities
from kquota.plan.planner import _declared_ops, _declared_walk, alteration_of, plan
from kquota.plan.types import ChangeKind, IgnoreReason
from kquota.policy import Policy, ScopeMatch

NAMES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "a",
            "team-x",
            "",
            "nul\x00name",
            "\x00",
            "\x01\x1f\x7f",
            "ünï",
            "\u202eevil",
            "pay\u200bments",
            "emoji\U0001f600",
            "x" * 5000,
            *HOSTILE[:12],
        ]
    ),
    st.text(max_size=4),
)
IPS = st.sampled_from([None, "10.0.0.1", "2001:db8::1", "2001:DB8::1", "2001:db8:0::1", "::1"])
KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]
VALUES = st.sampled_from([0.0, -0.0, 1.0, 1e-05, 5e-324, 1048576.0, 1e300, math.inf])


@st.composite
def entities(draw: st.DrawFn) -> tuple[Entity, list[str]]:
    kind = draw(st.sampled_from(["user", "client-id", "both", "ip", "other"]))
    if kind == "ip":
        return Entity.of({"ip": draw(IPS)}), ["connection_creation_rate"]
    if kind == "other":
        return Entity.of({"group": draw(NAMES), "user": draw(NAMES)}), ["custom_rate"]
    parts: dict[str, str | None] = {}
    if kind in ("user", "both"):
        parts["user"] = draw(NAMES)
    if kind in ("client-id", "both"):
        parts["client-id"] = draw(NAMES)
    return Entity.of(parts), KEYS


@st.composite
def states(draw: st.DrawFn) -> QuotaState:
    state: QuotaState = {}
    for _ in range(draw(st.integers(0, 10))):
        entity, keys = draw(entities())
        chosen = draw(st.lists(st.sampled_from(keys), unique=True))  # may be empty
        state[entity] = {k: draw(VALUES) for k in chosen}
    return state


POLICIES = st.builds(
    Policy,
    scope=st.sampled_from(
        [
            None,
            (ScopeMatch.of({"user": "team-*"}), ScopeMatch.of({"ip": "*"})),
            (ScopeMatch.of({"user": "*", "client-id": "*"}),),
            (ScopeMatch.of({"client-id": "<default>"}), ScopeMatch.of({"user": "a"})),
        ]
    ),
    prune=st.booleans(),
    allow_mass_removal=st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(states(), states(), POLICIES)
def test_sorted_walk_makes_the_same_plan(
    desired: QuotaState, snapshot: QuotaState, policy: Policy
) -> None:
    order = tuple(sorted_entities(desired))
    assert plan(desired, snapshot, policy, order=order) == plan(desired, snapshot, policy)
    assert plan(desired, {}, policy, order=order) == plan(desired, {}, policy)


@settings(max_examples=200, deadline=None)
@given(states(), states(), POLICIES)
def test_an_order_of_other_entities_is_not_walked(
    desired: QuotaState, other: QuotaState, policy: Policy
) -> None:
    # The caller's desired state changed after it was sorted: the plan is still desired's.
    for order in (sorted_entities(other), sorted_entities({**desired, **other}), []):
        if set(order) != set(desired):
            assert _declared_walk(desired, order) == (None, False)
            assert plan(desired, {}, policy, order=order) == plan(desired, {}, policy)


def test_exact_order_is_walked_and_needs_no_sort() -> None:
    desired: QuotaState = {
        Entity.of({"user": "b"}): {"producer_byte_rate": 1.0},
        Entity.of({"client-id": "a"}): {"producer_byte_rate": 2.0},
        Entity.of({"user": "a"}): {"producer_byte_rate": 3.0},
    }
    order = tuple(sorted_entities(desired))
    walk, in_order = _declared_walk(desired, order)
    assert in_order
    assert walk is not None and [e for e, _ in walk] == list(order)
    p = plan(desired, {}, Policy(), order=order)
    assert [a.entity for a in p.alterations] == list(order)
    assert [a.entity for a in p.alterations] == [
        Entity.of({"user": "a"}),
        Entity.of({"user": "b"}),
        Entity.of({"client-id": "a"}),
    ]


def test_declared_out_of_scope_keep_desireds_order() -> None:
    names = ["zeta", "alpha", "mid", "beta"]
    desired: QuotaState = {Entity.of({"user": n}): {"producer_byte_rate": 1.0} for n in names}
    desired[Entity.of({"user": "team-a"})] = {"producer_byte_rate": 2.0}
    policy = Policy(scope=(ScopeMatch.of({"user": "team-*"}),))
    p = plan(desired, {}, policy, order=sorted_entities(desired))
    (group,) = [g for g in p.ignored if g.reason is IgnoreReason.DECLARED_OUT_OF_SCOPE]
    assert [e.name("user") for e in group.entities] == names
    assert p == plan(desired, {}, policy)


@settings(max_examples=300, deadline=None)
@given(states(), st.booleans())
def test_new_entities_are_what_declared_ops_and_alteration_of_make(
    desired: QuotaState, prune: bool
) -> None:
    p = plan(desired, {}, Policy(prune=prune), order=sorted_entities(desired))
    made = {a.entity: a for a in p.alterations}
    for entity, want in desired.items():
        ops = _declared_ops(want, {}, prune)
        if ops:
            assert made[entity] == alteration_of(entity, ops, None)
            assert made[entity].kind is ChangeKind.CREATE
        else:
            assert entity not in made
    assert p.unchanged == sum(1 for want in desired.values() if not want)


def test_shared_values_dicts_give_each_entity_its_own_values() -> None:
    # The loader shares equal values dicts; the planner makes their ops once a dict. Dicts
    # that are equal but distinct (0.0 and -0.0 compare equal) keep their own ops.
    tier = {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2.0}
    zero, minus_zero = {"request_percentage": 0.0}, {"request_percentage": -0.0}
    desired: QuotaState = {}
    for i in range(30):
        values = [tier, zero, minus_zero, {"producer_byte_rate": float(i)}][i % 4]
        desired[Entity.of({"user": f"u{i:02d}"})] = values
    p = plan(desired, {}, Policy(), order=sorted_entities(desired))
    assert len(p.alterations) == 30
    for a in p.alterations:
        want = desired[a.entity]
        assert a == alteration_of(a.entity, _declared_ops(want, {}, False), None)
        assert [(op.key, str(op.value)) for op in a.ops] == [
            (k, str(want[k])) for k in sorted(want)
        ]
    assert p == plan(desired, {}, Policy())
