"""One pass over every RPC and every command against the session's broker, whatever its
Kafka version and mode (``KQUOTA_KAFKA_VERSION``, ``KQUOTA_KAFKA_MODE``).

scripts/compat-matrix runs this module (with a few integration modules) once per version and
mode; with ``KQUOTA_COMPAT_REPORT`` set, the module writes there what the broker negotiated
and supports, from which the script writes docs/compatibility.md's table. Every check also
asserts: a difference between brokers must be handled (reported with its reason), never
make a command fail or a source fall silent.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acls import create_topic
from cli_runner import run_kquota
from conftest import KAFKA_MODE, KAFKA_VERSION, KafkaConfigsTool
from kquota.cli.client_quotas import main as client_quotas_main
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import FilterComponent, QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.conn import API_NAMES, QUOTA_APIS, BrokerConnection
from kquota.kafka.errors import KafkaApiError, UnsupportedVersionError
from kquota.kafka.protocol.header import supported_versions
from kquota.model import Entity
from kquota.principals.live import discover
from polling import assert_eventually, eventually

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parents[1] / "kafka" / "protocol" / "golden"
P = f"compat{secrets.token_hex(2)}-"
FOUND: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def report(kafka_broker: BrokerInfo) -> Iterator[dict[str, Any]]:
    FOUND.clear()
    FOUND.update(kafka_version=KAFKA_VERSION, mode=KAFKA_MODE)
    yield FOUND
    target = os.environ.get("KQUOTA_COMPAT_REPORT")
    if target:
        Path(target).write_text(json.dumps(FOUND, indent=2, sort_keys=True) + "\n")


def _connection(admin: WireAdmin) -> BrokerConnection:
    async def first(core: Any) -> BrokerConnection:
        conns: list[BrokerConnection] = await core.broker_connections()
        return conns[0]

    return admin.run(first)


def test_every_api_is_negotiated_or_reported_unsupported(kafka_broker: BrokerInfo) -> None:
    apis: dict[str, Any] = {}
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        conn = _connection(admin)
        for key, name in sorted(API_NAMES.items()):
            theirs = conn.broker_versions.get(key)
            try:
                negotiated: int | None = conn.version_for(key)
                reason = None
            except UnsupportedVersionError as e:
                negotiated, reason = None, str(e)
                assert "not supported by this broker" in reason, reason
            apis[name] = {
                "kquota": list(supported_versions(key)),
                "broker": None if theirs is None else list(theirs),
                "negotiated": negotiated,
                "reason": reason,
            }
            if negotiated is not None:
                # Java's own client encoded this request version: its bytes are the reference.
                assert list(GOLDEN.glob(f"{name}Request_v{negotiated}_*.bin")), (name, negotiated)
    for key in QUOTA_APIS:
        assert apis[API_NAMES[key]]["negotiated"] is not None
    FOUND["apis"] = apis


BAD_FILTERS = {
    "user twice": [FilterComponent.exact("user", "a"), FilterComponent.default("user")],
    "ip with user": [FilterComponent.specified("ip"), FilterComponent.specified("user")],
    "empty entity type": [FilterComponent.exact("", "x")],
    "EXACT without a name": [FilterComponent("user", 0, None)],
    "DEFAULT with a name": [FilterComponent("user", 1, "x")],
    "SPECIFIED with a name": [FilterComponent("user", 2, "x")],
    "match type 3": [FilterComponent("user", 3, None)],
    "entity type other": [FilterComponent.exact("other", "x")],
}


def test_bad_describe_filters_get_the_brokers_own_answer(kafka_broker: BrokerInfo) -> None:
    """Brokers word (and sometimes take) bad filters their own way; kquota passes each
    answer on as an error with the broker's code and words, never a crash of its own."""
    answers: dict[str, str] = {}
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        for label, components in BAD_FILTERS.items():
            try:
                admin.describe(components, strict=False)
                answers[label] = "accepted"
            except KafkaApiError as e:
                answers[label] = f"{e.name}: {e.message}"
    assert any(a != "accepted" for a in answers.values())
    FOUND["bad_filters"] = answers


def _client_quotas(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = int(client_quotas_main(argv) or 0)  # type: ignore[call-overload]
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_alter_describe_and_kafka_client_quotas(
    kafka_broker: BrokerInfo,
    kafka_configs_tool: KafkaConfigsTool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    user, ip = f"alter-{P}", "10.9.8.7"  # outside the repo test's scope (P*)
    for names, add in [
        (f"user={user}", "producer_byte_rate=1024"),
        (f"user={user},client-id=app-{P}", "request_percentage=12.5"),
        (f"ip={ip}", "connection_creation_rate=5"),
    ]:
        code, out, err = run_kquota(["alter", *b, "--names", names, "--add", add], capsys)
        assert code == 0, out + err

    def described() -> str:
        code, out, err = run_kquota(["describe", *b], capsys)
        assert code == 0, err
        return out

    assert_eventually(lambda: f"{{ip={ip}}}" in described() and f"app-{P}" in described())
    FOUND["ip_entities"] = True
    code, out, err = _client_quotas(
        [*b, "--resolve", "--names", f"user={user},client-id=app-{P}"], capsys
    )
    assert code == 0, err
    assert "request_percentage=12.5" in out and "producer_byte_rate=1024" in out
    code, out, err = _client_quotas(
        [*b, "--alter", "--names", f"user={user}", "--delete", "producer_byte_rate"], capsys
    )
    assert code == 0, out + err
    # Kafka's own tool, from the same release as the broker, reads what kquota wrote.
    out = kafka_configs_tool("--describe", "--entity-type", "ips", "--entity-name", ip).stdout
    assert "connection_creation_rate=5" in out
    FOUND["alter_describe"] = True


def test_the_spelling_a_broker_keeps_for_an_ip(kafka_broker: BrokerInfo) -> None:
    """KRaft keeps an ip entity's name as it was written (kquota matches ip names by address
    either way: tests/integration/test_integration_ip_names); what each broker does is
    recorded."""
    n = secrets.randbelow(250) + 1
    mapped = f"::FFFF:198.51.100.{n}"
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        done = admin.alter(
            [
                QuotaAlteration(
                    Entity.of({"ip": mapped}), (QuotaOp.set("connection_creation_rate", 3),)
                )
            ],
            validate_only=False,
        )
        if not done[0].ok:
            # ZooKeeper-mode brokers (3.0.2, 3.6.2 and 3.9.2 alike) check the name after
            # escaping it for its ZooKeeper path ("%3A%3AFFFF%3A..."), so they refuse a
            # name with a colon: reported per entity, with the broker's words.
            assert done[0].error_name == "INVALID_REQUEST" and done[0].error_message, done
            FOUND["ip_spelling"] = {mapped: f"refused: {done[0].error_message}"}
            return

        def kept() -> list[str]:
            return [
                str(name)
                for e in admin.describe_all()
                for t, name in e.parts
                if t == "ip" and name and name.lower().endswith(f"198.51.100.{n}")
            ]

        names = eventually(kept, bool)
    assert names, "the ip entity was written and must be described back in some spelling"
    FOUND["ip_spelling"] = {mapped: names}


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kafka_broker: BrokerInfo) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, scope: [{{user: '{P}*'}},\n"
        f"                                  {{user: '{P}*', client-id: '*'}}]}}\n"
    )
    (tmp_path / "quotas" / "main.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: {P}svc}}, set: {{producer_byte_rate: 1MiB}}}}\n"
        f"  - {{match: {{user: {P}svc, client-id: loader}}, set: {{request_percentage: 40}}}}\n"
        f"  - {{match: {{user: {P}etl, client-id: <default>}},\n"
        "      set: {consumer_byte_rate: 2048}}\n"
    )
    return tmp_path


def test_plan_apply_with_lease_verify_drift_resolve_export_snapshot(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_kquota(["plan", "--detailed-exitcode"], capsys)
    assert code == 2 and f"+ {{user={P}svc}}" in out, out + err
    code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
    assert code == 0, out + err
    assert "committed 3 of 3 entities" in out and "verified" in out
    FOUND["apply_with_lease"] = True
    code, out, err = run_kquota(["drift"], capsys)
    assert code == 0, out + err
    code, out, err = run_kquota(["resolve", "--names", f"user={P}svc,client-id=loader"], capsys)
    assert code == 0 and "request_percentage" in out and "producer_byte_rate" in out, out + err
    code, out, err = run_kquota(["export", "--out", "exported.yaml"], capsys)
    assert code == 0, err
    assert f"{P}etl" in (repo / "exported.yaml").read_text()
    code, out, err = run_kquota(["snapshot", "--out", "snap.json"], capsys)
    assert code == 0, err
    code, out, err = run_kquota(["plan", "--snapshot", "snap.json", "--detailed-exitcode"], capsys)
    assert code == 0, out + err
    FOUND["commands"] = ["plan", "apply", "drift", "resolve", "export", "snapshot"]


def _member(broker: BrokerInfo, topic: str, group: str, **extra: str) -> Any:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": group,
            "client.id": f"{group}-app",
            "auto.offset.reset": "earliest",
            **extra,
        }
    )
    consumer.subscribe([topic])
    deadline = time.monotonic() + 90
    while not consumer.assignment():
        assert time.monotonic() < deadline, f"{group} was never assigned {topic}"
        consumer.poll(0.2)
    return consumer


def test_impact_discovery_reports_every_source(
    kafka_broker: BrokerInfo, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = f"{P}members"
    create_topic(kafka_broker, topic)
    members = [_member(kafka_broker, topic, f"{P}classic")]
    if int(KAFKA_VERSION.split(".")[0]) >= 4:
        # Kafka 4 serves the KIP-848 consumer protocol: such a group is read with
        # ConsumerGroupDescribe, which older brokers lack.
        members.append(_member(kafka_broker, topic, f"{P}kip848", **{"group.protocol": "consumer"}))
    try:
        with WireAdmin(kafka_broker.bootstrap_servers) as admin:
            found = discover(admin)
    finally:
        for m in members:
            m.close()
    sources = {r.source: {"found": r.found, "reason": r.reason} for r in found.reports}
    # Never silent: each source found something or says why it could not look.
    for name, outcome in sources.items():
        assert (outcome["found"] is None) == (outcome["reason"] is not None), name
    sources.setdefault(
        "quota-callback", {"found": int(found.quota_callback is not None), "reason": None}
    )
    assert sources["scram-users"]["found"] >= 2  # admin and alice
    clients = {p.client_id for p in found.principals if p.client_id}
    assert {f"{m}-app" for m in (f"{P}classic", f"{P}kip848")[: len(members)]} <= clients
    FOUND["impact_sources"] = sources
    code, out, err = run_kquota(["plan", "--impact"], capsys)
    assert code == 0, out + err
