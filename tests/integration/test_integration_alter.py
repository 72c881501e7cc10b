"""AlterClientQuotas against the real broker: round trips and Kafka's own cases (§6.1, §6.2).

Entity names carry a per-session token: the broker is shared by the whole session. Describe
trails alter (the broker reads its metadata image), so reads poll for up to 5 s as Kafka's own
tests do. Messages are compared exactly only for single-fault inputs.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import FilterComponent, QuotaAlteration, QuotaOp, WireAdmin, match_filter
from kquota.kafka.config import ClientConfig
from kquota.kafka.conn import connect_any
from kquota.kafka.quotawire import ALL_ACCEPTED, AlterExchange
from kquota.model import Entity, QuotaState, QuotaValues
from polling import eventually

pytestmark = pytest.mark.integration

TOKEN = secrets.token_hex(3)
PBR, CBR, RP, CMR, CCR = (
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
    "connection_creation_rate",
)


def uname(name: str) -> str:
    return f"{name}-{TOKEN}"


@pytest.fixture(scope="module")
def admin(kafka_broker: BrokerInfo) -> Iterator[WireAdmin]:
    with WireAdmin([kafka_broker.bootstrap_servers], ClientConfig()) as a:
        yield a


def E(**parts: str | None) -> Entity:
    return Entity.of({k.replace("_", "-"): v for k, v in parts.items()})


def quotas_of(admin: WireAdmin, entity: Entity, expect: Mapping[str, float] | None) -> QuotaValues:
    """quotas_of polls a strict exact describe until it shows ``expect`` (None = absent)."""
    want: QuotaState = {} if expect is None else {entity: dict(expect)}
    got: QuotaState = eventually(
        lambda: admin.describe(match_filter(entity.parts), strict=True), lambda s: s == want
    )
    assert got == want
    return got.get(entity, {})


def alter1(admin: WireAdmin, entity: Entity, *ops: QuotaOp, validate_only: bool = False) -> Any:
    (result,) = admin.alter([QuotaAlteration(entity, tuple(ops))], validate_only=validate_only)
    return result


def S(key: str, value: float) -> QuotaOp:
    return QuotaOp.set(key, value)


def R(key: str) -> QuotaOp:
    return QuotaOp.delete(key)


def raw_alter(broker: BrokerInfo, entries: list[dict[str, Any]], validate_only: bool) -> Any:
    """raw_alter sends an AlterClientQuotas exactly as given (duplicates included)."""

    async def main() -> Any:
        conn = await connect_any([broker.bootstrap_servers], ClientConfig())
        try:
            return await conn.request(49, {"Entries": entries, "ValidateOnly": validate_only})
        finally:
            await conn.close()

    return asyncio.run(main())


def wire_entry(entity: Entity, *ops: QuotaOp) -> dict[str, Any]:
    return {
        "Entity": [{"EntityType": t, "EntityName": n} for t, n in entity.parts],
        "Ops": [{"Key": o.key, "Value": o.value or 0.0, "Remove": o.remove} for o in ops],
    }


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entity",
    [
        E(user=uname("rt-user")),
        E(client_id=uname("rt-client")),
        E(user=uname("rt-pair"), client_id=uname("rt-app")),
        E(user=None, client_id=uname("rt-defuser")),
        E(user=uname("rt-defclient"), client_id=None),
        E(user=uname("with spaces and ünïcode")),
    ],
    ids=["user", "client-id", "pair", "default-user+client", "user+default-client", "unicode"],
)
def test_round_trip(admin: WireAdmin, entity: Entity) -> None:
    values = {PBR: 1048576.0, CBR: 2097152.0, RP: 12.34, CMR: 0.5}
    assert alter1(admin, entity, *(S(k, v) for k, v in values.items())).ok
    assert quotas_of(admin, entity, values) == values
    assert alter1(admin, entity, R(PBR), R(RP)).ok
    quotas_of(admin, entity, {CBR: 2097152.0, CMR: 0.5})
    assert alter1(admin, entity, R(CBR), R(CMR)).ok
    quotas_of(admin, entity, None)


def test_float_values_survive_exactly(admin: WireAdmin) -> None:
    entity = E(user=uname("floats"))
    values = {RP: 0.1 + 0.2, CMR: 5e-324, PBR: 9223372036854775808.0}
    assert alter1(admin, entity, *(S(k, v) for k, v in values.items())).ok
    assert quotas_of(admin, entity, values) == values


def test_ip_round_trip_case_31(admin: WireAdmin) -> None:
    ip, default = E(ip="10.31.0.1"), E(ip=None)
    spec = [FilterComponent.specified("ip")]

    def ips() -> QuotaState:
        return {e: v for e, v in admin.describe(spec, strict=True).items() if e in (ip, default)}

    assert alter1(admin, ip, S(CCR, 100)).ok
    quotas_of(admin, ip, {CCR: 100.0})
    assert alter1(admin, ip, S(CCR, 150)).ok
    quotas_of(admin, ip, {CCR: 150.0})
    assert alter1(admin, default, S(CCR, 200)).ok
    quotas_of(admin, default, {CCR: 200.0})
    # "specified" includes the default entity
    assert eventually(ips, lambda s: len(s) == 2) == {ip: {CCR: 150.0}, default: {CCR: 200.0}}
    assert alter1(admin, ip, R(CCR)).ok
    quotas_of(admin, ip, None)
    assert alter1(admin, default, R(CCR)).ok
    quotas_of(admin, default, None)
    assert eventually(ips, lambda s: s == {}) == {}


def test_ipv6_and_localhost_ip_entities(admin: WireAdmin) -> None:
    for name in ("2001:db8::31", "localhost"):
        entity = E(ip=name)
        assert alter1(admin, entity, S(CCR, 7)).ok
        quotas_of(admin, entity, {CCR: 7.0})  # stored as given, not resolved
        assert alter1(admin, entity, R(CCR)).ok


def test_validate_only_leaves_nothing_behind(admin: WireAdmin) -> None:
    fresh = E(user=uname("vo-fresh"), client_id=uname("vo-app"))
    assert alter1(admin, fresh, S(PBR, 1000), S(RP, 5.5), validate_only=True).ok
    time.sleep(0.5)
    assert admin.describe(match_filter(fresh.parts), strict=True) == {}


def test_validate_only_case_27(admin: WireAdmin) -> None:
    entity = E(user=uname("vo-27"))
    assert alter1(admin, entity, S(PBR, 20000), S(RP, 23.45)).ok
    quotas_of(admin, entity, {PBR: 20000.0, RP: 23.45})
    for ops in (
        [S(CBR, 50000)],
        [S(PBR, 10000)],
        [R(RP)],
        [S(PBR, 10000), S(CBR, 50000), R(RP)],
    ):
        assert alter1(admin, entity, *ops, validate_only=True).ok
    time.sleep(0.3)
    quotas_of(admin, entity, {PBR: 20000.0, RP: 23.45})


def test_validate_only_reports_the_same_errors(admin: WireAdmin) -> None:
    result = alter1(admin, E(user=uname("vo-bad")), S(PBR, 1.5), validate_only=True)
    assert (result.error_code, result.error_message) == (
        42,
        "producer_byte_rate cannot be a fractional value.",
    )


def exchange_with(broker: BrokerInfo, exchange: AlterExchange) -> Any:
    """exchange_with sends one AlterClientQuotas through ``exchange`` and reads its answer."""

    async def main() -> Any:
        conn = await connect_any([broker.bootstrap_servers], ClientConfig())
        try:
            return await conn.call(49, exchange.encode, exchange.decode)
        finally:
            await conn.close()

    return asyncio.run(main())


def test_the_brokers_acceptance_is_recognised_from_its_bytes(kafka_broker: BrokerInfo) -> None:
    """The broker answers two-part entities client-id first and in an order of its own: the
    acceptance of every entity is still recognised without decoding a name (a big apply's
    validate-only pass and commit read 5,000 entities an answer this way)."""
    alts = [
        *(
            QuotaAlteration(entity, (S(PBR, 1024.0), S(RP, 50.5)))
            for entity in [
                E(user=uname("acc-a")),
                E(user=uname("acc-b"), client_id=uname("app")),
                E(user=None, client_id=uname("app")),
                E(user=uname("acc-c"), client_id=None),
                E(client_id=uname("acc-\u00fc\u200b")),
            ]
        ),
        QuotaAlteration(E(ip="10.9.8.7"), (S(CCR, 10.0),)),
    ]
    assert exchange_with(kafka_broker, AlterExchange(alts, True)) is ALL_ACCEPTED
    refused = [*alts, QuotaAlteration(E(user=uname("acc-bad")), (S(PBR, 1.5),))]
    answer = exchange_with(kafka_broker, AlterExchange(refused, True))
    assert {e.entity: e.error_code for e in answer} == {
        **{a.entity: 0 for a in alts},
        refused[-1].entity: 42,
    }


def test_a_commit_sends_its_validated_bytes_again(
    kafka_broker: BrokerInfo, alter_encodings: list[int]
) -> None:
    """A commit of the chunks a validate-only pass sent and the broker accepted whole sends
    the same bodies with the flag changed: no entity is encoded twice, and the broker's answer
    (the validation's, byte for byte) is recognised without being read. What it writes is
    what was validated."""
    encoded = alter_encodings  # each body encoded, by its entities
    alts = [
        QuotaAlteration(E(user=uname(f"again-{i}")), (S(PBR, 1024.0 * (i + 1)),)) for i in range(7)
    ]
    with WireAdmin([kafka_broker.bootstrap_servers], ClientConfig(), chunk_keys=3) as admin:
        validated = admin.alter(alts, validate_only=True)
        assert [r.ok for r in validated] == [True] * 7
        assert encoded == [3, 3, 1]
        committed = admin.alter(alts, validate_only=False)
        assert encoded == [3, 3, 1]  # nothing encoded again
        assert [(r.entity, r.ok) for r in committed] == [(a.entity, True) for a in alts]
        for a in alts:
            quotas_of(admin, a.entity, {PBR: a.ops[0].value or 0.0})
        removed = admin.alter(
            [QuotaAlteration(a.entity, (R(PBR),)) for a in alts], validate_only=False
        )
        assert all(r.ok for r in removed)


class _Changeable:
    """_Changeable is an API caller's own alteration object, which it may change between the
    validate-only call and the commit (anything with an entity and ops will do)."""

    def __init__(self, entity: Entity, ops: list[QuotaOp]) -> None:
        self.entity = entity
        self.ops = ops


def test_a_commit_of_objects_changed_since_validation_sends_the_change(
    admin: WireAdmin,
) -> None:
    """Bytes are reused only for alterations that cannot change (frozen, holding tuples):
    a caller's own object changed after its validation is sent as it is now."""
    entity = E(user=uname("changed-after-validation"))
    mine = _Changeable(entity, [S(PBR, 1024.0)])
    frozen = QuotaAlteration(entity, tuple(mine.ops))
    assert all(r.ok for r in admin.alter([mine], validate_only=True))
    mine.ops[0] = S(PBR, 2048.0)
    assert all(r.ok for r in admin.alter([mine], validate_only=False))
    quotas_of(admin, entity, {PBR: 2048.0})
    assert all(r.ok for r in admin.alter([frozen], validate_only=True))
    assert all(r.ok for r in admin.alter([frozen], validate_only=False))
    quotas_of(admin, entity, {PBR: 1024.0})
    alter1(admin, entity, R(PBR))


# --- §6.1 validation (cases 1-25) ------------------------------------------------------------

VALIDATION_CASES: list[tuple[str, Entity, list[QuotaOp], str]] = [
    ("1", E(user=""), [S(RP, 12.34)], "Empty user not supported"),
    ("2", E(client_id=""), [S(RP, 12.34)], "Empty client-id not supported"),
    ("3", Entity.of({"": "name"}), [S(RP, 12.34)], "Unhandled client quota entity type: "),
    ("4", Entity(()), [S(PBR, 10000.5)], "Invalid empty client quota entity"),
    ("5", E(user=uname("v5")), [S("bad", 1.0)], "Invalid configuration key bad"),
    (
        "6",
        E(user=uname("v6")),
        [S(PBR, 10000.5)],
        "producer_byte_rate cannot be a fractional value.",
    ),
    (
        "7",
        E(user=uname("v7"), ip="1.2.3.4"),
        [S(RP, 12.34)],
        "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
    ),
    (
        "8",
        E(client_id=uname("v8"), ip="1.2.3.4"),
        [S(RP, 12.34)],
        "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
    ),
    (
        "9",
        E(ip="not a valid host because it has spaces"),
        [S(CCR, 50)],
        "not a valid host because it has spaces is not a valid IP or resolvable host.",
    ),
    (
        "10",
        E(ip="RFC2606.invalid"),
        [S(CCR, 50)],
        "RFC2606.invalid is not a valid IP or resolvable host.",
    ),
    ("11", Entity.of({"foo": "bar"}), [S(PBR, 10000)], "Unhandled client quota entity type: foo"),
    ("14", E(client_id=uname("v14")), [S("foobar", 1.0)], "Invalid configuration key foobar"),
    ("15", E(user=uname("v15")), [S(PBR, 0.0)], "Quota producer_byte_rate must be greater than 0"),
    (
        "15b",
        E(user=uname("v15b")),
        [S(PBR, -0.0)],
        "Quota producer_byte_rate must be greater than 0",
    ),
    ("16", E(user=uname("v16")), [S(CBR, -2.0)], "Quota consumer_byte_rate must be greater than 0"),
    (
        "17",
        E(user=uname("v17")),
        [S(CBR, 36893488147419103232.4)],
        "Proposed value for consumer_byte_rate is too large for a LONG.",
    ),
    (
        "18",
        E(user=uname("v18")),
        [S(CBR, 2.245)],
        "consumer_byte_rate cannot be a fractional value.",
    ),
    (
        "21",
        E(ip="example.invalid"),
        [S(CCR, 5)],
        "example.invalid is not a valid IP or resolvable host.",
    ),
    (
        "22a",
        E(user=uname("v22")),
        [S(CCR, 10)],
        "Invalid configuration key connection_creation_rate",
    ),
    ("22b", E(ip="10.22.0.1"), [S(PBR, 1000)], "Invalid configuration key producer_byte_rate"),
    (
        "23a",
        E(ip="10.23.0.1"),
        [S(CCR, 2147483648)],
        "Proposed value for connection_creation_rate is too large for an INT.",
    ),
    (
        "23b",
        E(ip="10.23.0.2"),
        [S(CCR, 100.5)],
        "connection_creation_rate cannot be a fractional value.",
    ),
    (
        "23c",
        E(user=uname("v23c")),
        [S(PBR, 1234.9999999)],
        "producer_byte_rate cannot be a fractional value.",
    ),
    (
        "25",
        E(user=uname("v25")),
        [S("SCRAM-SHA-256", 1)],
        "Invalid configuration key SCRAM-SHA-256",
    ),
    (
        "neg-inf",
        E(user=uname("vinf")),
        [S(RP, float("-inf"))],
        "Quota request_percentage must be greater than 0",
    ),
]


@pytest.mark.parametrize(
    ("entity", "ops", "message"),
    [c[1:] for c in VALIDATION_CASES],
    ids=[f"case-{c[0]}" for c in VALIDATION_CASES],
)
@pytest.mark.parametrize("validate_only", [True, False], ids=["validate", "apply"])
def test_validation_message(
    admin: WireAdmin, entity: Entity, ops: list[QuotaOp], message: str, validate_only: bool
) -> None:
    result = alter1(admin, entity, *ops, validate_only=validate_only)
    assert (result.error_code, result.error_name, result.error_message) == (
        42,
        "INVALID_REQUEST",
        message,
    )
    assert result.entity == entity


@pytest.mark.parametrize(
    "entity",
    [
        Entity.of({"user": uname("v12"), "foo": "bar"}),
        Entity.of({"foo": "bar", "ip": "1.2.3.4"}),
        E(user=uname("v12b"), ip="1.2.3.4"),
        E(client_id=uname("v12c"), ip="1.2.3.4"),
        Entity(()),
    ],
)
def test_invalid_entities_case_12(admin: WireAdmin, entity: Entity) -> None:
    result = alter1(admin, entity, S(PBR, 10000))
    assert result.error_code == 42


def test_one_bad_op_blocks_the_entity_case_13(admin: WireAdmin) -> None:
    for ops in ([S("not.a.quota.key", 0.0), S(RP, 99.9)], [S(RP, 99.9), S("not.a.quota.key", 0.0)]):
        entity = E(user=uname(f"v13-{ops[0].key}"))
        assert alter1(admin, entity, *ops).error_code == 42
        time.sleep(0.2)
        quotas_of(admin, entity, None)


def test_valid_edge_values_case_19_20(admin: WireAdmin) -> None:
    entity = E(user=uname("v19"))
    assert alter1(admin, entity, S(CBR, 1234.0)).ok
    quotas_of(admin, entity, {CBR: 1234.0})
    assert alter1(admin, entity, S(CBR, 1235.0000001), S(RP, 56.62367)).ok
    quotas_of(admin, entity, {CBR: 1235.0000001, RP: 56.62367})  # stored, not rounded
    assert alter1(admin, entity, S(RP, 0.99), S(PBR, 1e-7)).ok
    quotas_of(admin, entity, {CBR: 1235.0000001, RP: 0.99, PBR: 1e-7})


def test_valid_ip_entities_case_21(admin: WireAdmin) -> None:
    assert alter1(admin, E(ip="127.0.0.1"), S(CCR, 5), validate_only=True).ok
    assert alter1(admin, E(ip=None), S(CCR, 5), validate_only=True).ok


def test_duplicate_key_in_one_entry_case_24(kafka_broker: BrokerInfo, admin: WireAdmin) -> None:
    entity = E(user=uname("v24"))
    body = raw_alter(kafka_broker, [wire_entry(entity, S(PBR, 1000), S(PBR, 2000))], False)
    (entry,) = body["Entries"]
    assert entry["ErrorCode"] == 42
    assert (
        entry["ErrorMessage"]
        == f"Ignoring duplicate entity ClientQuotaEntity(entries={{user={entity.name('user')}}})"
    )
    time.sleep(0.3)
    quotas_of(admin, entity, None)


# --- §6.2 state transitions (cases 26-40) ----------------------------------------------------


def test_alter_sequence_case_26(admin: WireAdmin) -> None:
    e = E(user=uname("c26"), client_id=uname("c26-app"))
    quotas_of(admin, e, None)
    steps: list[tuple[list[QuotaOp], dict[str, float]]] = [
        ([S(PBR, 10000), S(CBR, 20000)], {PBR: 10000, CBR: 20000}),
        ([S(PBR, 15000)], {PBR: 15000, CBR: 20000}),
        ([R(PBR)], {CBR: 20000}),
        ([R(RP)], {CBR: 20000}),
        ([S(PBR, 5000)], {PBR: 5000, CBR: 20000}),
        ([S(PBR, 20000), R(CBR), S(RP, 12.3)], {PBR: 20000, RP: 12.3}),
    ]
    for ops, expect in steps:
        assert alter1(admin, e, *ops).ok
        quotas_of(admin, e, expect)


def test_alter_and_remove_case_28(admin: WireAdmin) -> None:
    e = E(user=uname("c28"))
    assert alter1(admin, e, S(PBR, 10000)).ok
    quotas_of(admin, e, {PBR: 10000})
    assert alter1(admin, e, S(PBR, 10001), S(CBR, 20000)).ok
    quotas_of(admin, e, {PBR: 10001, CBR: 20000})
    assert alter1(admin, e, R(PBR)).ok
    quotas_of(admin, e, {CBR: 20000})
    assert alter1(admin, e, R(RP)).ok
    quotas_of(admin, e, {CBR: 20000})
    assert alter1(admin, e, R(CBR)).ok
    quotas_of(admin, e, None)  # the entity is gone with its last key
    assert alter1(admin, e, R(CBR)).ok
    quotas_of(admin, e, None)
    assert alter1(admin, e, S(RP, 99), R(CMR), S(PBR, 10002), S(CBR, 20001)).ok
    quotas_of(admin, e, {RP: 99, PBR: 10002, CBR: 20001})


def test_partial_match_case_29(admin: WireAdmin) -> None:
    e = E(user=uname("testkit"))
    e2 = E(user=uname("testkit"), client_id="some-client")
    assert alter1(admin, e, S(RP, 0.99)).ok
    quotas_of(admin, e, {RP: 0.99})
    assert alter1(admin, e, S(RP, 0.97), S(PBR, 10000), S(CBR, 10001)).ok
    quotas_of(admin, e, {RP: 0.97, PBR: 10000, CBR: 10001})
    assert alter1(admin, e, S(RP, 0.95), R(PBR), R(CBR)).ok
    quotas_of(admin, e, {RP: 0.95})
    assert alter1(admin, e, R(RP)).ok
    quotas_of(admin, e, None)
    assert alter1(admin, e, S(PBR, 9999)).ok
    assert alter1(admin, e2, S(PBR, 9998)).ok
    quotas_of(admin, e2, {PBR: 9998})
    partial = eventually(
        lambda: admin.describe([FilterComponent.exact("user", uname("testkit"))], strict=False),
        lambda s: len(s) == 2,
    )
    assert partial == {e: {PBR: 9999}, e2: {PBR: 9998}}


def test_default_entities_case_30(admin: WireAdmin) -> None:
    # {client-id=<default>} stands in for the test's {user=<default>}: that one is the
    # describe-filter fixture's, and the broker is shared.
    d, named = E(client_id=None), E(client_id=uname("c30"))
    assert alter1(admin, d, S(CBR, 100)).ok
    assert alter1(admin, named, S(CBR, 1000)).ok
    state = eventually(admin.describe_all, lambda s: d in s and named in s)
    assert state[d] == {CBR: 100} and state[named] == {CBR: 1000}
    assert alter1(admin, d, R(CBR)).ok
    quotas_of(admin, d, None)


def test_sanitized_names_case_32(admin: WireAdmin) -> None:
    e = E(user=uname("user with spaces"))
    assert alter1(admin, e, S(PBR, 20000)).ok
    quotas_of(admin, e, {PBR: 20000})


def test_literal_default_name_case_34(admin: WireAdmin) -> None:
    e = E(client_id="<default>")
    assert alter1(admin, e, S(PBR, 20000)).ok
    quotas_of(admin, e, {PBR: 20000})
    assert E(client_id=None) not in admin.describe([FilterComponent.default("client-id")], True)
    assert alter1(admin, e, R(PBR)).ok


def test_many_entities_in_one_request_case_35(admin: WireAdmin) -> None:
    entities = [
        E(user=uname("c35-u")),
        E(user=uname("c35-u"), client_id=uname("c35-c")),
        E(user=uname("c35-u"), client_id=None),
        E(user=None, client_id=uname("c35-c")),
        E(client_id=uname("c35-c")),
    ]
    results = admin.alter(
        [QuotaAlteration(e, (S(RP, 35.0),)) for e in entities], validate_only=False
    )
    assert [r.entity for r in results] == entities and all(r.ok for r in results)
    for e in entities:
        quotas_of(admin, e, {RP: 35.0})


def test_empty_request_case_36(kafka_broker: BrokerInfo, admin: WireAdmin) -> None:
    assert admin.alter([], validate_only=False) == []
    assert raw_alter(kafka_broker, [], False)["Entries"] == []


def test_empty_ops_case_37(admin: WireAdmin) -> None:
    assert alter1(admin, E(user=uname("c37"))).ok
    bad = alter1(admin, E(user=""))
    assert (bad.error_code, bad.error_message) == (42, "Empty user not supported")


def test_remove_unknown_key_case_38(admin: WireAdmin) -> None:
    assert alter1(admin, E(user=uname("c38")), R("bogus")).ok
    assert alter1(admin, E(user=uname("c38")), R(CCR)).ok  # a key of another entity kind


def test_duplicate_entity_case_39(kafka_broker: BrokerInfo, admin: WireAdmin) -> None:
    e = E(user=uname("c39"))
    body = raw_alter(
        kafka_broker, [wire_entry(e, S(PBR, 1000)), wire_entry(e, S(CBR, 1000))], False
    )
    (entry,) = body["Entries"]
    assert entry["ErrorCode"] == 42
    assert entry["ErrorMessage"].startswith("Ignoring duplicate entity ClientQuotaEntity(")
    quotas_of(admin, e, {PBR: 1000})  # ... although the first alteration was applied


def test_set_to_current_value_case_40(admin: WireAdmin) -> None:
    e = E(user=uname("c40"))
    assert alter1(admin, e, S(PBR, 4000)).ok
    quotas_of(admin, e, {PBR: 4000})
    assert alter1(admin, e, S(PBR, 4000)).ok
    quotas_of(admin, e, {PBR: 4000})


# --- chunking --------------------------------------------------------------------------------


def test_twelve_thousand_keys_in_one_call_are_chunked(admin: WireAdmin) -> None:
    prefix = uname("chunk")
    alts = [
        QuotaAlteration(
            E(user=f"{prefix}-{i:05d}"), (S(PBR, 1000 + i), S(CBR, 2000 + i), S(RP, 3.0))
        )
        for i in range(4000)
    ]
    results = admin.alter(alts, validate_only=False)
    assert len(results) == 4000 and all(r.ok for r in results), results[0]

    def ours() -> QuotaState:
        return {
            e: v
            for e, v in admin.describe_all().items()
            if e.types == ("user",) and (e.name("user") or "").startswith(prefix)
        }

    state = eventually(ours, lambda s: len(s) == 4000)
    assert len(state) == 4000
    assert state[E(user=f"{prefix}-00007")] == {PBR: 1007.0, CBR: 2007.0, RP: 3.0}


def test_above_the_controller_limit_every_entry_fails(kafka_broker: BrokerInfo) -> None:
    """Why kquota chunks: 10,001 changed keys in one request fail as a whole (validate-only)."""
    prefix = uname("unchunked")
    alts = [QuotaAlteration(E(user=f"{prefix}-{i:05d}"), (S(PBR, 1000 + i),)) for i in range(10001)]
    with WireAdmin([kafka_broker.bootstrap_servers], ClientConfig(), chunk_keys=20000) as a:
        results = a.alter(alts, validate_only=True)
    assert {r.error_name for r in results} == {"POLICY_VIOLATION"}
    assert results[0].error_message == "Request parameters do not satisfy the configured policy."
