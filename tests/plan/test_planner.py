"""Planner: worked examples, then hypothesis properties over generated states and policies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.model import Entity, QuotaState
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.planner import plan
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import ChangeKind, IgnoreReason, Op
from kquota.policy import Policy, ScopeMatch

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob", "client-id": None})
IP1 = Entity.of({"ip": "10.0.0.1"})


def test_set_update_remove_in_place() -> None:
    desired = {ALICE: {"producer_byte_rate": 2.0, "consumer_byte_rate": 3.0}}
    snapshot = {ALICE: {"producer_byte_rate": 1.0, "request_percentage": 50.0}}
    p = plan(desired, snapshot, Policy())
    (alt,) = p.alterations
    assert alt.kind is ChangeKind.UPDATE
    assert alt.ops == (
        Op("consumer_byte_rate", 3.0, False, None),
        Op("producer_byte_rate", 2.0, False, 1.0),
        Op("request_percentage", None, True, 50.0),
    )
    assert p.removals.quotas == 1 and p.removals.entities == 0


def test_create_and_delete_kinds() -> None:
    p = plan(
        {ALICE: {"producer_byte_rate": 1.0}}, {BOB: {"producer_byte_rate": 1.0}}, Policy(prune=True)
    )
    assert [(a.entity, a.kind) for a in p.alterations] == [
        (ALICE, ChangeKind.CREATE),
        (BOB, ChangeKind.DELETE),
    ]
    assert p.removals.entities == 1


def test_declared_entity_losing_all_keys_is_a_delete() -> None:
    p = plan({ALICE: {"producer_byte_rate": 1.0}}, {ALICE: {"consumer_byte_rate": 1.0}}, Policy())
    assert p.alterations[0].kind is ChangeKind.UPDATE
    p = plan({ALICE: {}}, {ALICE: {"consumer_byte_rate": 1.0}}, Policy())
    assert p.alterations[0].kind is ChangeKind.DELETE


def test_prune_off_leaves_undeclared_alone() -> None:
    p = plan({}, {BOB: {"producer_byte_rate": 1.0}}, Policy(prune=False))
    assert p.empty and p.guard_violation is None
    assert p.ignored_count(IgnoreReason.NOT_DECLARED) == 1


def test_out_of_scope_never_touched_even_if_declared() -> None:
    policy = Policy(scope=(ScopeMatch.of({"ip": "*"}),), prune=True)
    p = plan({ALICE: {"producer_byte_rate": 9.0}}, {BOB: {"producer_byte_rate": 1.0}}, policy)
    assert p.empty
    assert p.ignored_count(IgnoreReason.DECLARED_OUT_OF_SCOPE) == 1
    assert p.ignored_count(IgnoreReason.OUT_OF_SCOPE) == 1


def test_exact_double_comparison() -> None:
    p = plan(
        {ALICE: {"request_percentage": 0.3}}, {ALICE: {"request_percentage": 0.1 + 0.2}}, Policy()
    )
    assert p.alterations[0].ops == (Op("request_percentage", 0.3, False, 0.1 + 0.2),)
    assert plan(
        {ALICE: {"request_percentage": 0.3}}, {ALICE: {"request_percentage": 0.3}}, Policy()
    ).empty


def test_empty_desired_with_prune_is_a_guard_violation() -> None:
    snapshot = {BOB: {"producer_byte_rate": 1.0}}
    p = plan({}, snapshot, Policy(prune=True))
    assert p.guard_violation is not None and not p.applyable
    allowed = plan({}, snapshot, Policy(prune=True, allow_mass_removal=True))
    assert (
        allowed.guard_violation is not None and allowed.applyable and allowed.mass_removal_allowed
    )


def test_fingerprint_covers_altered_entities() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1.0}, BOB: {"producer_byte_rate": 1.0}}
    desired = {ALICE: {"producer_byte_rate": 2.0}}
    p1 = plan(desired, snapshot, Policy())
    p2 = plan(desired, {**snapshot, BOB: {"producer_byte_rate": 5.0}}, Policy())
    p3 = plan(desired, {**snapshot, ALICE: {"producer_byte_rate": 1.5}}, Policy())
    assert p1.snapshot_fingerprint == p2.snapshot_fingerprint  # bob is not touched
    assert p1.snapshot_fingerprint != p3.snapshot_fingerprint
    assert p1.snapshot_fingerprint is not None and p1.snapshot_fingerprint.startswith("sha256:")


# --- properties -------------------------------------------------------------------------

NAMES = st.sampled_from([None, "a", "b", "team-x", "team-y"])
CLIENT_KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]
VALUES = st.sampled_from([1.0, 2.0, 1048576.0, 0.1 + 0.2, 0.3, 1e300, 5e-324])


@st.composite
def entities(draw: st.DrawFn) -> tuple[Entity, list[str]]:
    kind = draw(st.sampled_from(["user", "client-id", "both", "ip"]))
    if kind == "ip":
        name = draw(st.sampled_from([None, "10.0.0.1", "10.0.0.2"]))
        return Entity.of({"ip": name}), ["connection_creation_rate"]
    parts: dict[str, str | None] = {}
    if kind in ("user", "both"):
        parts["user"] = draw(NAMES)
    if kind in ("client-id", "both"):
        parts["client-id"] = draw(NAMES)
    return Entity.of(parts), CLIENT_KEYS


@st.composite
def states(draw: st.DrawFn) -> QuotaState:
    state: QuotaState = {}
    for _ in range(draw(st.integers(0, 12))):
        entity, keys = draw(entities())
        chosen = draw(st.lists(st.sampled_from(keys), min_size=1, unique=True))
        state[entity] = {k: draw(VALUES) for k in chosen}
    return state


SCOPES = st.sampled_from(
    [
        None,
        (ScopeMatch.of({"user": "team-*"}), ScopeMatch.of({"ip": "*"})),
        (ScopeMatch.of({"user": "*", "client-id": "*"}),),
        (ScopeMatch.of({"client-id": "<default>"}), ScopeMatch.of({"user": "a"})),
    ]
)
POLICIES = st.builds(
    Policy,
    scope=SCOPES,
    prune=st.booleans(),
    max_removals=st.integers(0, 20),
    max_removal_fraction=st.sampled_from([0.0, 0.3, 1.0]),
    allow_mass_removal=st.booleans(),
)


def expected_after(desired: QuotaState, snapshot: QuotaState, policy: Policy) -> QuotaState:
    """The specification, stated entity by entity, independently of the rules table."""
    result: QuotaState = {}
    for entity in desired.keys() | snapshot.keys():
        if not policy.in_scope(entity):
            if entity in snapshot:
                result[entity] = snapshot[entity]
        elif entity in desired:
            if desired[entity]:
                result[entity] = desired[entity]
        elif not policy.prune:
            result[entity] = snapshot[entity]
    return result


@settings(max_examples=300, deadline=None)
@given(states(), states(), POLICIES)
def test_plan_properties(desired: QuotaState, snapshot: QuotaState, policy: Policy) -> None:
    p = plan(desired, snapshot, policy)
    after = simulate_plan(snapshot, p)

    # Applying the plan gives the desired state within scope; the rest is untouched.
    assert after == expected_after(desired, snapshot, policy)
    # Planning again against the result is empty.
    assert plan(desired, after, policy).empty
    for a in p.alterations:
        assert policy.in_scope(a.entity)  # out-of-scope entities never touched
        if not policy.prune:
            assert a.entity in desired  # prune off never removes an undeclared entity
        keys = [op.key for op in a.ops]
        assert keys == sorted(set(keys))  # one op per key (updates in place), sorted
        assert a.ops
    assert [a.entity.sort_key() for a in p.alterations] == sorted(
        a.entity.sort_key() for a in p.alterations
    )
    # The fingerprint trusts the plan's order (not sorted again): it is the sorted one's.
    shuffled = [a.entity for a in reversed(p.alterations)]
    assert p.snapshot_fingerprint == snapshot_fingerprint(snapshot, shuffled)
    # The guard.
    if p.guard_violation is None:
        assert p.remove_ops <= policy.max_removals
        if not any(policy.in_scope(e) for e in desired):
            assert p.remove_ops == 0
    assert p.applyable == (p.guard_violation is None or policy.allow_mass_removal)
    assert p.removals.quotas == p.remove_ops


@settings(max_examples=100, deadline=None)
@given(states(), POLICIES)
def test_empty_desired_never_silently_removes_everything(
    snapshot: QuotaState, policy: Policy
) -> None:
    p = plan({}, snapshot, policy)
    if p.remove_ops:
        assert p.guard_violation is not None
        assert "desired state is empty" in p.guard_violation
