"""Capacity maths (kquota.plan.capacity): hand-checked sums over small clusters."""

from __future__ import annotations

import pytest

from kquota.model import Entity, QuotaState
from kquota.plan.capacity import (
    DISK_WRITE,
    MUTATION_NOTE,
    BrokerFacts,
    DeclaredCapacity,
    KeyCapacity,
    capacity_report,
    ceilings,
    key_sum,
    unbounded_defaults,
)
from kquota.plan.resolver import Principal

P = "producer_byte_rate"
C = "consumer_byte_rate"
Q = "request_percentage"
R = "connection_creation_rate"
M = "controller_mutation_rate"
MiB = 1024.0 * 1024


def E(**names: str | None) -> Entity:
    return Entity.of({k.replace("_", "-"): v for k, v in names.items()})


ALICE, BOB, CAROL = Principal("alice"), Principal("bob"), Principal("carol")
APP = Principal(None, "app")


# (state, principals, key) -> (known sum, limited, unlimited, unbounded by these defaults)
SUMS = [
    pytest.param({E(user="alice"): {P: 10.0}}, [ALICE, BOB], P, (10.0, 1, 1, ()), id="one-own"),
    pytest.param(
        # the default counts once for each principal falling back to it: bob and carol
        {E(user=None): {P: 100.0}, E(user="alice"): {P: 10.0}},
        [ALICE, BOB, CAROL],
        P,
        (210.0, 3, 0, (E(user=None),)),
        id="default-multiplies",
    ),
    pytest.param(
        # a user's own default client-id applies to client ids nobody can list, and (as in
        # the broker) not to a client with an empty client id
        {E(user="alice", client_id=None): {C: 7.0}},
        [ALICE, Principal("alice", "x"), Principal("alice", "y"), BOB],
        C,
        (14.0, 2, 2, (E(user="alice", client_id=None),)),
        id="user-default-client",
    ),
    pytest.param(
        # as in the broker: with a user default in force, a client without a user name gets
        # no quota for the key at all (its tags are empty), not its client-id's
        {E(user=None): {P: 100.0}, E(client_id="app"): {P: 3.0}},
        [APP, ALICE],
        P,
        (100.0, 1, 1, (E(user=None),)),
    ),
    pytest.param(
        {E(client_id=None): {P: 4.0}, E(client_id="app"): {P: 3.0}},
        [APP, Principal(None, "other")],
        P,
        (7.0, 2, 0, (E(client_id=None),)),
        id="client-id-own",
    ),
    pytest.param(
        {E(user="alice"): {P: 10.0}},
        [ALICE, Principal(ip="10.0.0.1")],
        P,
        (10.0, 1, 0, ()),
        id="ip-principal-no-client-key",
    ),
    pytest.param(
        {E(ip=None): {R: 5.0}, E(ip="10.0.0.1"): {R: 2.0}},
        [Principal(ip="10.0.0.1"), Principal(ip="10.0.0.2"), ALICE],
        R,
        (7.0, 2, 0, (E(ip=None),)),
        id="ip-default",
    ),
]


@pytest.mark.parametrize(("state", "principals", "key", "want"), SUMS)
def test_key_sums_by_hand(
    state: QuotaState,
    principals: list[Principal],
    key: str,
    want: tuple[float, int, int, tuple[Entity, ...]],
) -> None:
    s = key_sum(state, key, principals)
    assert (s.total, s.limited, s.unlimited, s.defaults) == want
    assert s.unbounded == bool(want[3])


def test_an_unbounded_sum_has_no_number_and_no_ratio() -> None:
    s = key_sum({E(user=None): {P: 100.0}}, P, [ALICE])
    assert s.unbounded and s.ratio(1000.0) is None
    assert s.to_data(1000.0)["sum"] is None
    assert s.to_data(1000.0)["known_sum"] == 100.0


def test_unbounded_defaults_names_each_default_that_sets_the_key() -> None:
    state: QuotaState = {
        E(user=None): {P: 1.0},
        E(user=None, client_id=None): {C: 1.0},
        E(client_id=None): {P: 1.0},
        E(user="a"): {P: 1.0},
    }
    assert unbounded_defaults(state, P) == (E(user=None), E(client_id=None))
    assert unbounded_defaults(state, C) == (E(user=None, client_id=None),)
    assert unbounded_defaults(state, Q) == ()


FACTS = BrokerFacts(brokers=3, leaders=2, io_threads=8, network_threads=3)
DECLARED = DeclaredCapacity(ingress=100.0, egress=200.0)


def _row(report_keys: tuple[KeyCapacity, ...], key: str) -> KeyCapacity:
    return next(k for k in report_keys if k.key == key)


def test_report_before_and_after_against_each_capacity() -> None:
    before: QuotaState = {E(user="alice"): {P: 60.0, C: 50.0, Q: 400.0}, E(user="bob"): {P: 60.0}}
    after: QuotaState = {E(user="alice"): {P: 60.0, C: 50.0, Q: 400.0}, E(user="bob"): {P: 150.0}}
    report = capacity_report(before, after, [ALICE, BOB], DECLARED, FACTS)
    p = _row(report.keys, P)
    assert (p.capacity, p.before.total, p.after.total) == (100.0, 120.0, 210.0)
    assert (p.before.ratio(p.capacity), p.after.ratio(p.capacity)) == (1.2, 2.1)
    # bob's 150 is above one broker's ingress: it can never throttle
    assert p.never_throttle == ((E(user="bob"), 150.0),)
    c = _row(report.keys, C)
    assert (c.capacity, c.after.total, c.after.unlimited) == (200.0, 50.0, 1)
    q = _row(report.keys, Q)
    assert q.capacity == (8 + 3) * 100  # request quota capacity: (io + network) x 100
    assert q.after.total == 400.0
    assert M not in {k.key for k in report.keys}
    assert MUTATION_NOTE in report.notes
    assert report.stopped == () and not report.stops


def test_connection_rate_against_the_brokers_limit_and_none_when_unlimited() -> None:
    state: QuotaState = {E(ip="10.0.0.1"): {R: 50.0}}
    who = [Principal(ip="10.0.0.1")]
    limited = BrokerFacts(brokers=1, max_connection_creation_rate=20.0)
    r = _row(capacity_report(state, state, who, DeclaredCapacity(), limited).keys, R)
    assert (r.capacity, r.after.total, r.never_throttle) == (
        20.0,
        50.0,
        ((E(ip="10.0.0.1"), 50.0),),
    )
    default = BrokerFacts(brokers=1, max_connection_creation_rate=float(2**31 - 1))
    r = _row(capacity_report(state, state, who, DeclaredCapacity(), default).keys, R)
    assert r.capacity is None and r.never_throttle == ()


def test_disk_write_row_only_when_declared() -> None:
    state: QuotaState = {E(user="alice"): {P: 30.0}}
    plain = capacity_report(state, state, [ALICE], DECLARED, FACTS)
    assert DISK_WRITE not in {k.key for k in plain.keys}
    disk = DeclaredCapacity(ingress=100.0, disk_write=20.0)
    row = _row(capacity_report(state, state, [ALICE], disk, FACTS).keys, DISK_WRITE)
    assert (row.capacity, row.after.total, row.quota_key) == (20.0, 30.0, P)
    assert row.never_throttle == ((E(user="alice"), 30.0),)


def test_protected_sum_over_capacity_is_a_warning_not_a_stop() -> None:
    state: QuotaState = {
        E(user="svc-a"): {P: 70.0},
        E(user="svc-b"): {P: 40.0},
        E(user="batch"): {P: 500.0},
        E(user=None): {P: 10.0},
    }
    who = [Principal("svc-a"), Principal("svc-b"), Principal("batch")]
    report = capacity_report(
        state,
        state,
        who,
        DECLARED,
        FACTS,
        protected=lambda p: (p.user or "").startswith("svc-"),
    )
    p = _row(report.keys, P)
    assert p.protected_after is not None
    # 70 + 40 = 110 > 100: a default elsewhere does not make the guarantees unbounded
    assert (p.protected_after.total, p.protected_after.unbounded) == (110.0, False)
    assert p.protected_over
    assert p.after.unbounded  # the whole key is: user=<default> applies to anyone new
    assert report.warnings == (
        "capacity: the protected principals' producer_byte_rate quotas add up to 110 per "
        "broker, over the capacity of 100: their guarantees cannot all hold",
    )
    assert not report.stops


def test_protected_within_capacity_warns_nothing() -> None:
    state: QuotaState = {E(user="svc-a"): {P: 70.0}}
    report = capacity_report(
        state, state, [Principal("svc-a")], DECLARED, FACTS, protected=lambda p: True
    )
    assert report.warnings == ()


def test_guard_stops_only_a_plan_that_raises_a_ratio_past_the_maximum() -> None:
    before: QuotaState = {E(user="alice"): {P: 200.0}, E(user="bob"): {P: 100.0}}
    after: QuotaState = {E(user="alice"): {P: 300.0}, E(user="bob"): {P: 100.0}}
    stop = capacity_report(before, after, [ALICE, BOB], DECLARED, FACTS, max_oversubscription=3.0)
    assert stop.stops
    assert stop.stopped == (
        "producer_byte_rate: known principals' quotas add up to 4.00x one broker's capacity "
        "(was 3.00x), over max_oversubscription=3",
    )
    # already past the maximum, and the plan lowers it: reported, not stopped
    lower = capacity_report(after, before, [ALICE, BOB], DECLARED, FACTS, max_oversubscription=2.0)
    assert not lower.stops
    # no policy: never stops
    assert not capacity_report(before, after, [ALICE, BOB], DECLARED, FACTS).stops
    allowed = capacity_report(
        before,
        after,
        [ALICE, BOB],
        DECLARED,
        FACTS,
        max_oversubscription=3.0,
        oversubscription_allowed=True,
    )
    assert allowed.stopped and not allowed.stops


def test_ceilings_multiply_by_leaders_and_brokers() -> None:
    state: QuotaState = {E(user=None): {P: 10.0}, E(user="alice"): {C: 5.0}}
    got = {
        (c.principal, c.key): (c.quota, c.leaders, c.brokers)
        for c in ceilings(state, [ALICE, BOB, Principal(ip="1.2.3.4")], FACTS)
    }
    assert got == {
        (ALICE, P): (10.0, 20.0, 30.0),
        (ALICE, C): (5.0, 10.0, 15.0),
        (BOB, P): (10.0, 20.0, 30.0),
    }
    unknown = ceilings(state, [BOB], BrokerFacts())
    assert [(c.leaders, c.brokers) for c in unknown] == [(None, None)]


def test_report_without_facts_has_no_request_capacity() -> None:
    state: QuotaState = {E(user="alice"): {Q: 100.0}}
    report = capacity_report(state, state, [ALICE], DeclaredCapacity(), BrokerFacts())
    q = _row(report.keys, Q)
    assert q.capacity is None and q.after.ratio(q.capacity) is None
    assert report.to_data()["keys"][0]["capacity"] is None
