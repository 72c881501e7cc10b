"""kquota.QuotaAdmin / AsyncQuotaAdmin against the real broker: describe (KIP-546 matching),
alter (pairs and QuotaAlterations, one result per entity), resolve, and the CLI's errors."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable

import pytest

import kquota
from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import WireAdmin
from polling import eventually

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)
PBR, CBR, RP, CMR = (
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
)


def shows(read: Callable[[], kquota.QuotaState], expected: kquota.QuotaState) -> None:
    """shows polls a describe until it shows ``expected`` (describes lag alters)."""
    assert eventually(read, lambda got: got == expected) == expected


def test_sync_alter_describe_resolve(kafka_broker: BrokerInfo) -> None:
    user, app = f"api-u-{T}", f"api-c-{T}"
    U = kquota.Entity.of({"user": user})
    UD = kquota.Entity.of({"user": user, "client-id": None})
    C = kquota.Entity.of({"client-id": app})
    with kquota.QuotaAdmin({"bootstrap.servers": kafka_broker.bootstrap_servers}) as admin:
        results = admin.alter(
            [
                ({"user": user}, {PBR: 1048576, RP: 25.5}),
                (UD, {CBR: 2097152}),
                kquota.QuotaAlteration(C, (kquota.QuotaOp.set(CMR, 10),)),
            ]
        )
        assert [(r.entity, r.ok) for r in results] == [(U, True), (UD, True), (C, True)]
        # KIP-546 matching: not strict by default, strict narrows
        shows(
            lambda: admin.describe({"user": user}),
            {U: {PBR: 1048576.0, RP: 25.5}, UD: {CBR: 2097152.0}},
        )
        assert admin.describe({"user": user}, strict=True) == {U: {PBR: 1048576.0, RP: 25.5}}
        assert admin.describe({"user": user, "client-id": None}) == {UD: {CBR: 2097152.0}}
        assert admin.describe(C) == {C: {CMR: 10.0}}
        assert {U, UD, C} <= set(admin.describe_all())

        resolution = admin.resolve({"user": user, "client-id": app})
        assert [(q.key, q.value, q.source) for q in resolution.quotas] == [
            (PBR, 1048576.0, U),
            (CBR, 2097152.0, UD),
            (RP, 25.5, U),
            (CMR, 10.0, C),
        ]
        # validate-only changes nothing; None removes a key
        (checked,) = admin.alter([(U, {PBR: 1})], validate_only=True)
        assert checked.ok
        assert admin.alter([(U, {PBR: None, RP: None}), (UD, {CBR: None}), (C, {CMR: None})])
        shows(lambda: admin.describe({"user": user}), {})


def test_async_admin_and_keyword_properties(kafka_broker: BrokerInfo) -> None:
    ip = f"10.77.{int(T[:2], 16)}.{int(T[2:4], 16)}"

    async def scenario() -> tuple[list[kquota.AlterResult], kquota.Resolution]:
        async with kquota.AsyncQuotaAdmin(
            bootstrap_servers=kafka_broker.sasl_bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="admin",
            sasl_password=kafka_broker.users["admin"],
        ) as admin:
            results = await admin.alter([({"ip": ip}, {"connection_creation_rate": 7})])
            deadline = time.monotonic() + 5
            while not (r := await admin.resolve({"ip": ip})).quotas:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await admin.alter([({"ip": ip}, {"connection_creation_rate": None})])
            return results, r

    results, resolution = asyncio.run(scenario())
    assert [r.ok for r in results] == [True]
    ip_entity = kquota.Entity.of({"ip": ip})
    assert [(q.key, q.value, q.source) for q in resolution.quotas] == [
        ("connection_creation_rate", 7.0, ip_entity)
    ]


def test_refusal_is_the_clis_error(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    # The wire client sends an entity type the broker does not know (the library checks it
    # first, see test_invalid_alterations_send_nothing): the broker's refusal, per entity.
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        (result,) = admin.alter(
            [
                kquota.QuotaAlteration(
                    kquota.Entity.of({"other": "x"}), (kquota.QuotaOp.set(PBR, 1),)
                )
            ],
            validate_only=False,
        )
    assert not result.ok and result.error_name == "INVALID_REQUEST"
    with pytest.raises(kquota.AlterationFailed) as raised:
        result.raise_for_error()
    argv = ["alter", "--bootstrap-server", kafka_broker.bootstrap_servers, "--names", "other=x"]
    code, _, err = run_kquota([*argv, "--add", f"{PBR}=1"], capsys)
    assert (code, err) == (1, f"error: {raised.value}\n")


@pytest.mark.parametrize(
    ("alteration", "message"),
    [
        (({"user": "a"}, {PBR: 1.5}), "producer_byte_rate=1.5: must be a whole number"),
        (({"user": "a"}, {"connection_creation_rate": 1}), "not a quota key for this entity"),
        (({"user": "a"}, {PBR: "fast"}), "producer_byte_rate must be a number or None"),
        (({"user": "a"}, {}), "nothing to alter"),
        (({}, {PBR: 1}), "an entity is a non-empty mapping"),
        (kquota.QuotaAlteration({"user": "a"}, (kquota.QuotaOp(PBR),)), "has no value"),  # type: ignore[arg-type]
        (kquota.QuotaAlteration({"user": "a"}, (kquota.QuotaOp.set(RP, -1),)), "greater than 0"),  # type: ignore[arg-type]
        ("user=a", "an alteration is a QuotaAlteration or a pair"),
        (
            ({"other": "x"}, {PBR: 1}),
            "{other=x}: unknown entity type 'other'; allowed: user, client-id, ip",
        ),
        (
            ({"ip": "db.example.com"}, {"connection_creation_rate": 1}),
            "{ip=db.example.com}: ip 'db.example.com' is not an IP address (hostnames are refused",
        ),
        (({"ip": "fe80::1%eth0"}, {"connection_creation_rate": 1}), "has a zone id"),
    ],
)
def test_invalid_alterations_send_nothing(alteration: object, message: str) -> None:
    # Port 1 is closed: anything sent would be a connection error, not this UsageError. The
    # valid alteration listed first is not sent either: one bad alteration stops the call.
    admin = kquota.QuotaAdmin({"bootstrap.servers": "127.0.0.1:1"})
    with admin, pytest.raises(kquota.UsageError) as raised:
        admin.alter([({"user": "ok"}, {PBR: 1}), alteration])  # type: ignore[list-item]
    assert message in str(raised.value)


def test_connection_and_property_errors() -> None:
    closed = kquota.QuotaAdmin({"bootstrap.servers": "127.0.0.1:1", "retries": 0})
    with closed, pytest.raises(kquota.BrokerConnectionError):
        closed.describe_all()
    with pytest.raises(kquota.UsageError, match="no bootstrap servers"):
        kquota.QuotaAdmin({})
    with pytest.raises(kquota.UsageError, match=r"sasl\.kerberos\.service\.name"):
        kquota.AsyncQuotaAdmin(bootstrap_servers="h:1", sasl_kerberos_service_name="kafka")
    secret = kquota.QuotaAdmin(bootstrap_servers="h:1,h:2", sasl_password="hunter2")
    assert secret.bootstrap_servers == ("h:1", "h:2")
    assert repr(secret) == "QuotaAdmin(bootstrap_servers='h:1,h:2')"


@pytest.mark.parametrize(
    ("entity", "message"),
    [
        ({"user": None}, "user is the default entity"),
        ({"group": "g"}, "resolve takes user, client-id and ip; not group"),
        ({"ip": "gateway.local"}, "resolve: ip 'gateway.local' is not an IP address"),
    ],
)
def test_resolve_needs_names(entity: dict[str, str | None], message: str) -> None:
    admin = kquota.QuotaAdmin({"bootstrap.servers": "127.0.0.1:1"})
    with admin, pytest.raises(kquota.UsageError, match=message):
        admin.resolve(entity)


def test_describe_refuses_an_unknown_entity_type_before_sending() -> None:
    # Port 1 is closed: a request sent would be a connection error, not this UsageError.
    admin = kquota.QuotaAdmin({"bootstrap.servers": "127.0.0.1:1"})
    with admin, pytest.raises(kquota.UsageError) as raised:
        admin.describe({"user": "a", "group": "g"})
    assert str(raised.value) == (
        "describe: unknown entity type 'group'; allowed: user, client-id, ip"
    )


def test_a_quota_admin_shared_between_threads_says_so_and_never_hangs(
    kafka_broker: BrokerInfo,
) -> None:
    import threading

    with kquota.QuotaAdmin({"bootstrap.servers": kafka_broker.bootstrap_servers}) as admin:
        admin.describe_all()
        raised: list[BaseException] = []

        def other() -> None:
            try:
                admin.describe_all()
            except BaseException as e:  # noqa: BLE001 - handed to the test's thread
                raised.append(e)

        worker = threading.Thread(target=other, name="worker-2")
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "the second thread's call hung"
        (error,) = raised
        assert isinstance(error, kquota.UsageError)
        assert str(error) == (
            "QuotaAdmin is one thread's client: this one belongs to thread 'MainThread', not "
            "'worker-2'; give each thread its own QuotaAdmin (or share one AsyncQuotaAdmin "
            "within one event loop)"
        )
        assert isinstance(admin.describe_all(), dict)  # still its own thread's client
