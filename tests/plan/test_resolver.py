"""Resolution against Kafka's own precedence vectors (KAFKA-QUOTA-SEMANTICS.md §5)."""

from __future__ import annotations

import pytest

from kquota.model import Entity, QuotaState
from kquota.plan.resolver import Principal, ResolvedQuota, resolution_changes, resolve

P = "producer_byte_rate"


def ent(user: str | None | bool = False, client: str | None | bool = False) -> Entity:
    """ent builds an entity; False = type absent, None = default entity."""
    parts: dict[str, str | None] = {}
    if user is not False:
        parts["user"] = user  # type: ignore[assignment]
    if client is not False:
        parts["client-id"] = client  # type: ignore[assignment]
    return Entity.of(parts)


# testQuotaConfigPrecedence, ClientQuotaManagerTest.scala: the configured produce quotas.
BASE: QuotaState = {
    ent(user=None): {P: 1000.0},
    ent(client=None): {P: 2000.0},
    ent(user=None, client=None): {P: 3000.0},
    ent(user="userA"): {P: 4000.0},
    ent(user="userA", client="client1"): {P: 5000.0},
    ent(user="userB"): {P: 6000.0},
    ent(user="userB", client="client1"): {P: 7000.0},
    ent(user="userB", client=None): {P: 8000.0},
    ent(user="userC"): {P: 10000.0},
    ent(client="client1"): {P: 9000.0},
}


def _without(state: QuotaState, *entities: Entity) -> QuotaState:
    return {e: v for e, v in state.items() if e not in entities}


STEP2 = _without(BASE, ent(user=None, client=None))
STEP3 = _without(STEP2, ent(user=None))
STEP4 = {**STEP3, ent(user="userA"): {P: 8000.0}, ent(user="userA", client="client1"): {P: 10000.0}}
STEP5 = _without(STEP4, ent(user="userA", client="client1"))
STEP6 = {**STEP5, ent(user="userA", client="client6"): {P: 11000.0}}
STEP7 = {
    **_without(STEP6, ent(user="userA", client="client6")),
    ent(user="userA", client=None): {P: 12000.0},
}

VECTORS = [
    # (state, user, client, expected bound, expected source)
    (BASE, "userA", "client1", 5000, ent("userA", "client1")),
    (BASE, "userA", "client2", 4000, ent("userA")),
    (BASE, "userA", "client3", 4000, ent("userA")),
    (BASE, "userB", "client1", 7000, ent("userB", "client1")),
    (BASE, "userB", "client2", 8000, ent("userB", None)),
    (BASE, "userB", "client3", 8000, ent("userB", None)),
    (BASE, "userD", "client1", 3000, ent(None, None)),
    (BASE, "userD", "client2", 3000, ent(None, None)),
    (BASE, "userE", "client1", 3000, ent(None, None)),
    (STEP2, "userD", "client1", 1000, ent(None)),
    (STEP2, "userE", "client4", 1000, ent(None)),
    (STEP2, "userF", "client4", 1000, ent(None)),
    (STEP3, "userF", "client4", 2000, ent(client=None)),
    (STEP3, "userF", "client5", 2000, ent(client=None)),
    (STEP3, "userG", "client5", 2000, ent(client=None)),
    (STEP4, "userA", "client2", 8000, ent("userA")),
    (STEP4, "userA", "client1", 10000, ent("userA", "client1")),
    (STEP5, "userA", "client6", 8000, ent("userA")),
    (STEP6, "userA", "client6", 11000, ent("userA", "client6")),
    (STEP7, "userA", "client6", 12000, ent("userA", None)),
]


@pytest.mark.parametrize(("state", "user", "client", "bound", "source"), VECTORS)
def test_quota_config_precedence(
    state: QuotaState, user: str, client: str, bound: int, source: Entity
) -> None:
    got = resolve(state, user, client).get(P)
    assert got == ResolvedQuota(P, float(bound), source)


def test_nothing_configured_is_unlimited() -> None:
    r = resolve({}, "userA", "client1")
    assert r.quotas == ()
    assert r.keys[:2] == ("producer_byte_rate", "consumer_byte_rate")


def test_set_and_remove_default_user_quota() -> None:
    assert resolve({ent(user=None): {P: 10.0}}, "userA", "client1").get(P) is not None
    assert resolve({}, "userA", "client1").get(P) is None


# Precedence levels 1-8 as the docs list them, each winning when alone with those below it.
LEVELS = [
    ent("u", "c"),
    ent("u", None),
    ent("u"),
    ent(None, "c"),
    ent(None, None),
    ent(None),
    ent(client="c"),
    ent(client=None),
]


@pytest.mark.parametrize("level", range(8))
def test_each_level_wins_over_those_below(level: int) -> None:
    state: QuotaState = {e: {P: float(i + 1)} for i, e in enumerate(LEVELS) if i >= level}
    assert resolve(state, "u", "c").get(P) == ResolvedQuota(P, float(level + 1), LEVELS[level])


def test_resolution_is_per_key() -> None:
    state: QuotaState = {
        ent("u"): {P: 1.0},
        ent(None): {"consumer_byte_rate": 2.0},
    }
    r = resolve(state, "u", "c")
    assert r.get(P) == ResolvedQuota(P, 1.0, ent("u"))
    assert r.get("consumer_byte_rate") == ResolvedQuota("consumer_byte_rate", 2.0, ent(None))


def test_empty_client_id_skips_user_default_client_entity() -> None:
    # findQuota: with an empty client-id the user chain is (user, default user) only.
    state: QuotaState = {ent("u", None): {P: 1.0}, ent(None): {P: 2.0}}
    assert resolve(state, "u", None).get(P) == ResolvedQuota(P, 2.0, ent(None))
    assert resolve(state, "u", "").get(P) == ResolvedQuota(P, 2.0, ent(None))


def test_no_user_name_follows_the_broker_literally() -> None:
    # quotaMetricTags picks (user="", client-id="") when a default-user quota exists, and
    # findQuota then finds nothing: unlimited, although a default client-id quota exists.
    state: QuotaState = {ent(None): {P: 1.0}, ent(client=None): {P: 2.0}}
    assert resolve(state, None, "c").get(P) is None
    only_client: QuotaState = {ent(client=None): {P: 2.0}}
    assert resolve(only_client, None, "c").get(P) == ResolvedQuota(P, 2.0, ent(client=None))


IP_STATE: QuotaState = {
    Entity.of({"ip": "203.0.113.7"}): {"connection_creation_rate": 10.0},
    Entity.of({"ip": "2001:db8::1"}): {"connection_creation_rate": 20.0},
    Entity.of({"ip": None}): {"connection_creation_rate": 5.0},
}


@pytest.mark.parametrize(
    ("ip", "value", "source"),
    [
        ("203.0.113.7", 10.0, "203.0.113.7"),
        ("2001:0db8:0000::1", 20.0, "2001:db8::1"),  # same address, another spelling
        ("198.51.100.1", 5.0, None),
    ],
)
def test_ip_precedence(ip: str, value: float, source: str | None) -> None:
    got = resolve(IP_STATE, None, None, ip).get("connection_creation_rate")
    assert got == ResolvedQuota("connection_creation_rate", value, Entity.of({"ip": source}))


def test_ip_without_default_is_unlimited() -> None:
    state = {Entity.of({"ip": "203.0.113.7"}): {"connection_creation_rate": 10.0}}
    assert resolve(state, None, None, "198.51.100.1").quotas == ()


def test_to_data_shape() -> None:
    state: QuotaState = {ent(None, "my-client"): {P: 500000.0}}
    assert resolve(state, "alice", "my-client").to_data() == {
        "entity": {"user": "alice", "client-id": "my-client"},
        "quotas": {P: {"value": 500000.0, "source": {"user": None, "client-id": "my-client"}}},
    }


def test_resolution_changes() -> None:
    before: QuotaState = {ent("alice"): {P: 1.0}}
    after: QuotaState = {ent("alice", "etl"): {P: 2.0}, ent(None): {"consumer_byte_rate": 3.0}}
    changes = resolution_changes(before, after, [Principal("alice", "etl"), Principal("bob", "x")])
    assert [(c.principal.user, c.key, c.before, c.after) for c in changes] == [
        (
            "alice",
            P,
            ResolvedQuota(P, 1.0, ent("alice")),
            ResolvedQuota(P, 2.0, ent("alice", "etl")),
        ),
        ("alice", "consumer_byte_rate", None, ResolvedQuota("consumer_byte_rate", 3.0, ent(None))),
        ("bob", "consumer_byte_rate", None, ResolvedQuota("consumer_byte_rate", 3.0, ent(None))),
    ]
