"""A plan's blast radius and the protected principals' verdict (kquota.plan.impact)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.model import Entity, QuotaState
from kquota.plan.impact import plan_impact, protected_violations, tightens
from kquota.plan.planner import plan as make
from kquota.plan.resolver import Principal, resolution_changes
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Plan
from kquota.policy import Policy, ProtectMatch

P = "producer_byte_rate"
C = "consumer_byte_rate"
R = "connection_creation_rate"


def E(**names: str | None) -> Entity:
    return Entity.of({k.replace("_", "-"): v for k, v in names.items()})


def _plan(state: QuotaState, desired: QuotaState, *, prune: bool = True) -> Plan:
    policy = Policy(prune=prune, allow_mass_removal=True)
    return make(desired, state, policy, cluster="c")


def test_a_default_moves_every_user_without_its_own_quota() -> None:
    state: QuotaState = {E(user=None): {P: 100.0}, E(user="alice"): {P: 5.0}}
    desired: QuotaState = {E(user=None): {P: 200.0}, E(user="alice"): {P: 5.0}}
    who = [Principal("alice"), Principal("bob"), Principal("carol", "app"), Principal(None, "x")]
    impact = plan_impact(state, _plan(state, desired), who, Policy())
    changed = {(c.principal, c.key): (c.before, c.after) for c in impact.changes}
    assert set(changed) == {(Principal("bob"), P), (Principal("carol", "app"), P)}
    before, after = changed[(Principal("bob"), P)]
    assert before is not None and after is not None
    assert (before.value, after.value, after.source) == (100.0, 200.0, E(user=None))
    assert impact.principals == 4


def test_user_client_pairs_and_default_client_ids() -> None:
    # user+<default> client-id is above <default> user+client-id in the broker's order.
    state: QuotaState = {E(user=None, client_id="etl"): {C: 10.0}}
    desired: QuotaState = {
        E(user=None, client_id="etl"): {C: 10.0},
        E(user="ann", client_id=None): {C: 3.0},
    }
    who = [Principal("ann", "etl"), Principal("bo", "etl"), Principal("ann", None)]
    changes = plan_impact(state, _plan(state, desired), who, Policy()).changes
    assert [(c.principal, c.key) for c in changes] == [(Principal("ann", "etl"), C)]
    assert changes[0].after is not None and changes[0].after.source == E(user="ann", client_id=None)
    # ann without a client-id: her tags are (ann, ""), and user+<default> client-id does not
    # apply to an empty client-id (the broker's quotaMetricTags), so she is not moved.


def test_ip_default_and_other_spellings_of_an_address() -> None:
    state: QuotaState = {E(ip="::ffff:10.0.0.1"): {R: 5.0}}
    desired: QuotaState = {E(ip="::ffff:10.0.0.1"): {R: 5.0}, E(ip=None): {R: 50.0}}
    who = [Principal(ip="10.0.0.1"), Principal(ip="10.0.0.2")]
    changes = plan_impact(state, _plan(state, desired), who, Policy()).changes
    # 10.0.0.1 keeps the quota its other spelling gives it; only 10.0.0.2 moves.
    assert [(c.principal.ip, c.before, c.after and c.after.value) for c in changes] == [
        ("10.0.0.2", None, 50.0)
    ]


def test_a_quota_moving_from_a_user_to_the_default_is_a_source_change() -> None:
    state: QuotaState = {E(user="alice"): {P: 5.0}}
    desired: QuotaState = {E(user=None): {P: 5.0}}
    changes = plan_impact(state, _plan(state, desired), [Principal("alice")], Policy()).changes
    assert len(changes) == 1
    c = changes[0]
    assert c.before is not None and c.after is not None
    assert (c.before.source, c.after.source, c.after.value) == (E(user="alice"), E(user=None), 5.0)
    assert not tightens(c)


def test_protected_exact_names_are_resolved_without_discovery() -> None:
    state: QuotaState = {}
    desired: QuotaState = {E(user=None): {P: 100.0}}
    policy = Policy(protect=(ProtectMatch.of({"user": "svc-etl"}),))
    impact = plan_impact(state, _plan(state, desired), [], policy)
    assert impact.principals == 1 and impact.stops
    assert impact.protected == (
        "{user=svc-etl} producer_byte_rate: unlimited -> 100 (100 B/s) from {user=<default>}",
    )


def test_protected_globs_match_found_principals_and_only_tightening_stops() -> None:
    state: QuotaState = {E(user=None): {P: 100.0, C: 100.0}}
    desired: QuotaState = {E(user=None): {P: 50.0, C: 500.0}}
    policy = Policy(protect=(ProtectMatch.of({"user": "svc-*"}),))
    who = [Principal("svc-a", "loader"), Principal("team-b")]
    impact = plan_impact(state, _plan(state, desired), who, policy)
    assert len(impact.changes) == 4  # both principals, both keys
    assert impact.protected == (
        "{user=svc-a, client-id=loader} producer_byte_rate: 100 (100 B/s) from {user=<default>} "
        "-> 50 (50 B/s) from {user=<default>}",
    )
    allowed = plan_impact(
        state,
        _plan(state, desired),
        who,
        Policy(protect=policy.protect, allow_protected_change=True),
    )
    assert allowed.protected == impact.protected and not allowed.stops


def test_the_protected_verdict_reads_in_the_plans_units() -> None:
    """A byte rate reads as the rendered plan shows it, the raw value first; a key whose
    name says its unit stays a bare number."""
    pct = "request_percentage"
    state: QuotaState = {E(user="svc"): {P: 8388608.0, pct: 20.0}}
    desired: QuotaState = {E(user="svc"): {P: 1572864.0, pct: 5.0}}
    policy = Policy(protect=(ProtectMatch.of({"user": "svc"}),))
    impact = plan_impact(state, _plan(state, desired), [Principal("svc")], policy)
    assert sorted(impact.protected) == [
        "{user=svc} producer_byte_rate: 8388608 (8 MiB/s) from {user=svc} -> "
        "1572864 (1.5 MiB/s) from {user=svc}",
        "{user=svc} request_percentage: 20 from {user=svc} -> 5 from {user=svc}",
    ]


def test_protect_match_rules() -> None:
    m = ProtectMatch.of({"client-id": "loader-?", "user": "svc"})
    assert m.matches(Principal("svc", "loader-1"))
    assert not m.matches(Principal("svc"))  # no client-id: the match names one
    assert not m.matches(Principal("svc", "loader-10"))
    assert m.exact() is None
    assert ProtectMatch.of({"user": "svc"}).exact() == Principal("svc")
    for bad in ({}, {"group": "x"}, {"user": ""}, {"user": "<default>"}):
        try:
            ProtectMatch.of(bad)
        except ValueError as e:
            assert "allowed" in str(e) or "principal" in str(e) or "glob" in str(e)
        else:
            raise AssertionError(f"{bad} accepted")


def test_no_protect_rules_no_verdict() -> None:
    state: QuotaState = {E(user="a"): {P: 100.0}}
    changes = resolution_changes(state, {E(user="a"): {P: 1.0}}, [Principal("a")])
    assert changes and protected_violations(changes, Policy()) == ()


_users = st.sampled_from(["a", "b", None])
_clients = st.sampled_from(["x", "y", None])
_ips = st.sampled_from(["10.0.0.1", "::ffff:10.0.0.1", "10.0.0.2", None])
_keys = st.sampled_from([P, C])


@st.composite
def _states(draw: st.DrawFn) -> QuotaState:
    out: QuotaState = {}
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            ip = draw(_ips)
            out.setdefault(E(ip=ip), {})[R] = float(draw(st.integers(1, 4)))
            continue
        u, c = draw(_users), draw(_clients)
        kind = draw(st.sampled_from(["u", "c", "uc"]))
        e = E(user=u) if kind == "u" else E(client_id=c) if kind == "c" else E(user=u, client_id=c)
        out.setdefault(e, {})[draw(_keys)] = float(draw(st.integers(1, 4)))
    return out


@settings(max_examples=200, deadline=None)
@given(before=_states(), desired=_states())
def test_skipping_unaltered_principals_changes_nothing(
    before: QuotaState, desired: QuotaState
) -> None:
    """The fast path (only principals one of whose entities is altered) equals resolving
    every principal: the optimisation can never hide a change."""
    plan = _plan(before, desired)
    after = simulate_plan(before, plan)
    who = [
        Principal(u, c, ip)
        for u in ("a", "b", "z")
        for c in ("x", "y", None)
        for ip in ("10.0.0.1", "10.0.0.2", None)
    ]
    altered = [a.entity for a in plan.alterations]
    assert resolution_changes(before, after, who, altered=altered) == resolution_changes(
        before, after, who
    )
