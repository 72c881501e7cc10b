"""apply and drift against the real broker: the whole GitOps loop, its safety nets and faults.

Every test owns a user-name prefix and a kquota.yaml whose ownership scope is that prefix, so
tests share the session's broker without seeing each other's entities.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_proxy import FaultProxy

from cli_runner import run_kquota
from conftest import KafkaConfigsTool
from kquota.apply.applier import apply_plan
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import WireAdmin
from kquota.model import Entity, QuotaState
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from polling import assert_eventually

pytestmark = pytest.mark.integration

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@dataclass
class Repo:
    root: Path
    prefix: str
    broker: BrokerInfo
    capsys: pytest.CaptureFixture[str]

    def write(self, entries: list[str], name: str = "main.yaml") -> None:
        body = "".join(f"  - {e}\n" for e in entries) if entries else ""
        text = HEADER + body if entries else HEADER.replace("quotas:\n", "quotas: []\n")
        (self.root / "quotas" / name).write_text(text)

    def kquota(self, *argv: str) -> tuple[int, str, str]:
        return run_kquota(list(argv), self.capsys)

    def state(self, bootstrap: str | None = None) -> QuotaState:
        with WireAdmin(bootstrap or self.broker.bootstrap_servers) as admin:
            return {
                e: v
                for e, v in admin.describe_all().items()
                if any(n is not None and n.startswith(self.prefix) for _, n in e.parts)
            }

    def user(self, name: str, client: str | None | bool = False) -> Entity:
        parts: dict[str, str | None] = {"user": f"{self.prefix}{name}"}
        if client is not False:
            parts["client-id"] = client  # type: ignore[assignment]
        return Entity.of(parts)


def _config(broker: BrokerInfo, prefix: str, extra_policy: str = "") -> str:
    return (
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, scope: [{{user: '{prefix}*'}}, "
        f"{{user: '{prefix}*', client-id: '*'}}]{extra_policy}}}\n"
    )


@pytest.fixture()
def repo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Repo]:
    prefix = f"t{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(_config(kafka_broker, prefix))
    yield Repo(tmp_path, prefix, kafka_broker, capsys)


def test_validate_plan_apply_then_drift_repair(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    p = repo.prefix
    repo.write(
        [
            f"{{match: {{user: {p}alice}}, set: {{producer_byte_rate: 1MiB}}}}",
            f"{{match: {{user: {p}bob, client-id: <default>}}, set: {{request_percentage: 25.5}}}}",
            f"{{match: {{user: {p}carol, client-id: etl}}, set: {{consumer_byte_rate: 2048}}}}",
        ]
    )
    assert repo.kquota("validate")[0] == 0
    code, out, _ = repo.kquota("plan", "--detailed-exitcode")
    assert code == 2 and f"+ {{user={p}alice}}" in out
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    assert "committed 3 of 3 entities" in out and "verified" in out
    assert repo.state() == {
        repo.user("alice"): {"producer_byte_rate": 1048576.0},
        repo.user("bob", None): {"request_percentage": 25.5},
        repo.user("carol", "etl"): {"consumer_byte_rate": 2048.0},
    }
    assert repo.kquota("drift")[0] == 0

    # Kafka's own tool changes a value out of band: drift sees it, plan and apply repair it.
    kafka_configs_tool("--alter", "--add-config", "producer_byte_rate=5", "--user", f"{p}alice")
    assert_eventually(lambda: repo.state()[repo.user("alice")] == {"producer_byte_rate": 5.0})
    code, out, _ = repo.kquota("drift")
    assert code == 2
    assert "value_changed: producer_byte_rate: cluster 5 (5 B/s), desired 1048576" in out
    code, out, _ = repo.kquota("drift", "--format", "prometheus")
    assert code == 2 and 'kquota_drift_in_sync{cluster="local"} 0' in out
    code, out, _ = repo.kquota("apply", "--auto-approve")
    assert code == 0 and "committed 1 of 1 entities" in out
    assert repo.kquota("drift")[0] == 0
    out = kafka_configs_tool("--describe", "--user", f"{p}alice").stdout
    assert "producer_byte_rate=1048576.0" in out


def test_saved_plan_applies_once_and_a_rerun_is_a_no_op(repo: Repo) -> None:
    p = repo.prefix
    repo.write([f"{{match: {{user: {p}dan}}, set: {{producer_byte_rate: 4096}}}}"])
    code, _, err = repo.kquota("plan", "--out", "plan.json")
    assert code == 0, err
    saved = json.loads(Path("plan.json").read_text())
    assert saved["cluster"] == "local" and saved["cluster_id"] == repo.broker.cluster_id
    assert saved["snapshot_fingerprint"].startswith("sha256:")
    code, out, err = repo.kquota("apply", "plan.json", "--auto-approve")
    assert code == 0, out + err
    assert repo.state() == {repo.user("dan"): {"producer_byte_rate": 4096.0}}
    code, out, _ = repo.kquota("apply", "plan.json", "--auto-approve")
    assert code == 0 and "1 already applied by an earlier run" in out


def test_stale_saved_plan_is_refused_and_nothing_is_written(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    p = repo.prefix
    repo.write(
        [
            f"{{match: {{user: {p}erin}}, set: {{producer_byte_rate: 4096}}}}",
            f"{{match: {{user: {p}fay}}, set: {{producer_byte_rate: 8192}}}}",
        ]
    )
    assert repo.kquota("plan", "--out", "plan.json")[0] == 0
    kafka_configs_tool("--alter", "--add-config", "producer_byte_rate=7", "--user", f"{p}erin")
    assert_eventually(lambda: repo.user("erin") in repo.state())
    code, out, err = repo.kquota("apply", "plan.json", "--auto-approve")
    assert code == 1
    assert "saved plan is stale" in err and "producer_byte_rate was unset, now 7" in err
    assert repo.state() == {repo.user("erin"): {"producer_byte_rate": 7.0}}


def test_plan_for_another_cluster_is_refused(
    repo: Repo, kafka_broker_with_authorizer: BrokerInfo
) -> None:
    p = repo.prefix
    repo.write([f"{{match: {{user: {p}gus}}, set: {{producer_byte_rate: 4096}}}}"])
    assert repo.kquota("plan", "--out", "plan.json")[0] == 0
    other = kafka_broker_with_authorizer
    Path("admin.properties").write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f"sasl.username={other.username}\nsasl.password={other.password}\n"
    )
    # A saved plan never chooses the target: pointed elsewhere ad hoc, it is refused unread by
    # any broker; under its own cluster name but another address, the cluster id catches it.
    argv = ["apply", "plan.json", "--auto-approve", "--command-config", "admin.properties"]
    code, _, err = repo.kquota(*argv, "--bootstrap-server", other.sasl_bootstrap_servers)
    assert code == 1 and "the plan was made for 'local'" in err
    code, _, err = repo.kquota(
        *argv, "--cluster", "local", "--bootstrap-server", other.sasl_bootstrap_servers
    )
    assert code == 1
    assert f"made for cluster id {repo.broker.cluster_id}" in err
    assert other.cluster_id in err and other.password not in err
    with WireAdmin(other.bootstrap_servers) as admin:
        assert repo.user("gus") not in admin.describe_all()


def test_validate_only_failure_commits_nothing(repo: Repo) -> None:
    p = repo.prefix
    repo.write(
        [
            f"{{match: {{user: {p}hal}}, set: {{producer_byte_rate: 4096}}}}",
            f"{{match: {{user: {p}ivy}}, set: {{producer_byte_rate: 8192}}}}",
        ]
    )
    assert repo.kquota("plan", "--out", "plan.json")[0] == 0
    # A plan file edited by hand is checked by kquota's own rules before any connection.
    data = json.loads(Path("plan.json").read_text())
    data["alterations"][1]["ops"][0]["value"] = 1.5
    Path("plan.json").write_text(json.dumps(data))
    code, _, err = repo.kquota("apply", "plan.json", "--auto-approve")
    assert code == 1
    assert "plan.json: alterations[1].ops[0].value: must be a whole number" in err
    # What kquota cannot know, the broker's validate-only pass catches before any commit.
    plan = Plan(
        alterations=tuple(
            Alteration(e, (Op("producer_byte_rate", v, False, None),), ChangeKind.CREATE)
            for e, v in ((repo.user("hal"), 4096.0), (repo.user("ivy"), 1.5))
        )
    )
    with WireAdmin(repo.broker.bootstrap_servers) as admin:
        report = apply_plan(admin, plan)
    assert len(report.validation_failures) == 1 and not report.committed
    assert report.validation_failures[0].message == (
        "producer_byte_rate cannot be a fractional value."
    )
    time.sleep(0.5)
    assert repo.state() == {}


def test_every_commit_batch_sends_the_requests_its_validation_sent(
    repo: Repo, alter_encodings: list[int]
) -> None:
    """Entities of one and two keys put a batch's size at no request's end: the batches are
    cut where the validate-only pass's requests end, so the commit encodes nothing again,
    and writes what was validated."""
    encoded = alter_encodings  # each body encoded, by its entities
    pbr, ccr = "producer_byte_rate", "consumer_byte_rate"
    desired: QuotaState = {
        repo.user(f"u{i:02d}"): {pbr: 1024.0 * (i + 1), **({ccr: 2048.0} if i % 2 else {})}
        for i in range(20)
    }
    plan = Plan(
        alterations=tuple(
            Alteration(
                e, tuple(Op(k, v, False, None) for k, v in sorted(vals.items())), ChangeKind.CREATE
            )
            for e, vals in desired.items()
        )
    )
    with WireAdmin([repo.broker.bootstrap_servers], chunk_keys=4) as admin:
        report = apply_plan(admin, plan, batch_size=7)
    assert report.ok and len(report.committed) == 20
    # Requests of at most 4 keys end at entities 3, 5, 7, ... 19, 20: batches of 7 entities
    # cut by size alone would end at 14, mid-request. Each entity is encoded once, validating.
    assert sum(encoded) == 20
    assert_eventually(lambda: repo.state() == desired, what="the batch shows")
    with WireAdmin(repo.broker.bootstrap_servers) as admin:
        removed = admin.alter(
            [Alteration(e, tuple(Op(k, None, True, v) for k, v in vals.items()), ChangeKind.DELETE)
             for e, vals in desired.items()],
            validate_only=False,
        )  # fmt: skip
    assert all(r.ok for r in removed)


def test_mass_removal_guard_stops_an_apply(repo: Repo) -> None:
    p = repo.prefix
    repo.write(
        [f"{{match: {{user: {p}m{i}}}, set: {{consumer_byte_rate: {i + 1}}}}}" for i in range(12)]
    )
    assert repo.kquota("apply", "--auto-approve")[0] == 0
    assert_eventually(lambda: len(repo.state()) == 12)
    repo.write([])
    code, _, err = repo.kquota("apply", "--auto-approve")
    assert code == 1 and "mass-removal guard" in err and "nothing was applied" in err
    assert len(repo.state()) == 12
    code, out, _ = repo.kquota("apply", "--auto-approve", "--allow-mass-removal")
    assert code == 0 and "committed 12 of 12" in out
    assert repo.state() == {}


def test_apply_without_a_terminal_needs_auto_approve(repo: Repo) -> None:
    repo.write([f"{{match: {{user: {repo.prefix}jo}}, set: {{producer_byte_rate: 1}}}}"])
    code, _, err = repo.kquota("apply")
    assert code == 1 and "--auto-approve" in err
    assert repo.state() == {}


def _proxy_config(proxy: FaultProxy, retries: int, backoff_ms: int = 100) -> str:
    Path("proxy.properties").write_text(f"retries={retries}\nretry.backoff.ms={backoff_ms}\n")
    return "proxy.properties"


def test_cut_connection_mid_apply_reports_and_a_rerun_converges(repo: Repo) -> None:
    p = repo.prefix
    repo.write(
        [
            f"{{match: {{user: {p}c{i:03d}}}, set: {{producer_byte_rate: {i + 1}}}}}"
            for i in range(300)
        ]
    )
    (repo.root / "kquota.yaml").write_text(_config(repo.broker, p, ", max_removals: 1000"))
    with FaultProxy(repo.broker.bootstrap_servers, lifetime=120) as proxy:
        conf = _proxy_config(proxy, retries=0)
        # AlterClientQuotas frames: 1 = validate-only, 2.. = commit batches of 100. The third
        # reaches the broker, then the connection dies before its answer.
        proxy.cut_at_frame(3, api_key=49, deliver=True)
        code, out, err = repo.kquota(
            "apply", "--auto-approve", "--batch-size", "100",
            "--bootstrap-server", proxy.address, "--command-config", conf,
        )  # fmt: skip
        assert proxy.fired.is_set()
    assert code == 1, out + err
    assert "the connection broke" in out
    assert "committed 200 of 300 entities" in out, out[out.find("Plan:") :]
    assert "100 entities were not attempted" in out
    assert_eventually(lambda: len(repo.state()) == 200)
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0 and "committed 100 of 100 entities" in out, out + err
    assert len(repo.state()) == 300
    assert repo.kquota("drift")[0] == 0


def test_a_broker_unreachable_for_a_moment_is_retried(repo: Repo) -> None:
    repo.write([f"{{match: {{user: {repo.prefix}kim}}, set: {{producer_byte_rate: 10}}}}"])
    with FaultProxy(repo.broker.bootstrap_servers, lifetime=60) as proxy:
        conf = _proxy_config(proxy, retries=8, backoff_ms=200)
        proxy.refuse_for(1.5)  # as while a broker restarts
        code, out, err = repo.kquota(
            "apply", "--auto-approve", "--bootstrap-server", proxy.address, "--command-config", conf
        )
    assert code == 0, out + err
    assert repo.state() == {repo.user("kim"): {"producer_byte_rate": 10.0}}


def test_apply_publishes_confirmed_audit_events(repo: Repo) -> None:
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    p = repo.prefix
    topic = f"audit-{p}x"
    admin = AdminClient({"bootstrap.servers": repo.broker.bootstrap_servers})
    for f in admin.create_topics([NewTopic(topic, num_partitions=1)]).values():
        f.result(timeout=30)  # kquota never relies on auto-creation
    repo.write(
        [f"{{match: {{user: {p}lu, client-id: <default>}}, set: {{producer_byte_rate: 64}}}}"]
    )
    code, out, err = repo.kquota("apply", "--auto-approve", "--audit-topic", topic)
    assert code == 0, out + err
    assert f"audit: 1 events confirmed on topic {topic}" in out
    consumer = Consumer(
        {
            "bootstrap.servers": repo.broker.bootstrap_servers,
            "group.id": f"g-{p}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 30
        msg = None
        while msg is None and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                msg = m
    finally:
        consumer.close()
    assert msg is not None
    value = json.loads(msg.value())
    assert value["entity"] == {"user": f"{p}lu", "client-id": None}
    assert value["ops"] == [
        {"key": "producer_byte_rate", "before": None, "after": 64.0, "remove": False}
    ]
    # The cluster id revert checks the target by (issue 33): the live cluster's own.
    with WireAdmin(repo.broker.bootstrap_servers) as admin:
        assert value["cluster_id"] == admin.cluster_id()
    headers = dict(msg.headers())
    assert headers["event-type"] == b"quota.altered"
    assert headers["content-type"] == b"application/json"
    assert headers["plan-id"].decode() == value["plan_id"]


def test_export_then_plan_is_empty_and_an_edit_shows_exactly_that_edit(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    p = repo.prefix
    # An existing cluster, configured by hand with Kafka's own tool.
    ex1 = "producer_byte_rate=1048576,request_percentage=50"
    kafka_configs_tool("--alter", "--add-config", ex1, "--user", f"{p}ex1")
    kafka_configs_tool("--alter", "--add-config", "consumer_byte_rate=2000",
                       "--user", f"{p}ex2", "--client-defaults")  # fmt: skip
    assert_eventually(lambda: len(repo.state()) == 2)
    code, _, err = repo.kquota("export", "--out", "quotas/exported.yaml")
    assert code == 0, err
    text = Path("quotas/exported.yaml").read_text()
    assert "1MiB" in text and "<default>" in text
    code, out, _ = repo.kquota("plan", "--detailed-exitcode")
    assert code == 0, out
    Path("quotas/exported.yaml").write_text(text.replace("1MiB", "2MiB"))
    code, out, _ = repo.kquota("plan", "--format", "json", "--detailed-exitcode")
    assert code == 2
    plan = json.loads(out)
    assert plan["alterations"] == [
        {
            "entity": {"user": f"{p}ex1"},
            "change": "update",
            "ops": [
                {
                    "key": "producer_byte_rate",
                    "value": 2097152.0,
                    "remove": False,
                    "before": 1048576.0,
                }
            ],
        }
    ]


def test_apply_to_a_missing_audit_topic_commits_nothing_and_creates_no_topic(repo: Repo) -> None:
    from confluent_kafka.admin import AdminClient

    p = repo.prefix
    topic = f"audit-typo-{p}x"
    repo.write([f"{{match: {{user: {p}nt}}, set: {{producer_byte_rate: 64}}}}"])
    code, out, err = repo.kquota("apply", "--auto-approve", "--audit-topic", topic)
    assert code == 1
    assert err == (
        f"error: cluster local: audit topic {topic!r} does not exist; create it with `kquota "
        f"topics create --cluster local --audit-topic {topic}` (kquota never lets a topic be "
        "auto-created, so a typo cannot become a new topic); nothing was committed\n"
    )
    assert "committed" not in out and "Traceback" not in err
    assert repo.state() == {}
    topics = AdminClient({"bootstrap.servers": repo.broker.bootstrap_servers}).list_topics(
        timeout=10
    )
    assert topic not in topics.topics


def _lease_topic_gone(broker: BrokerInfo) -> None:
    """_lease_topic_gone deletes the session broker's lease topic and waits, bounded, until
    its metadata no longer lists it."""
    from confluent_kafka.admin import AdminClient

    from kquota.apply.lease import LEASE_TOPIC

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.delete_topics([LEASE_TOPIC], request_timeout=30)[LEASE_TOPIC].result(60)
    assert_eventually(lambda: LEASE_TOPIC not in admin.list_topics(timeout=10).topics, 60)


def test_apply_without_the_lease_topic_writes_nothing_and_names_the_command_that_makes_it(
    repo: Repo,
) -> None:
    from confluent_kafka.admin import AdminClient

    from kquota_topics import with_lease_topic

    p = repo.prefix
    repo.write([f"{{match: {{user: {p}lt}}, set: {{producer_byte_rate: 64}}}}"])
    _lease_topic_gone(repo.broker)
    try:
        code, out, err = repo.kquota("apply", "--auto-approve")
        assert code == 1, out + err
        assert err == (
            "error: cluster local: the apply lease topic _kquota_apply_lease does not exist, "
            "and apply never creates it; create it with `kquota topics create --cluster "
            "local`, or run apply with --no-lease; nothing was written\n"
        )
        assert "committed" not in out
        assert repo.state() == {}
        admin = AdminClient({"bootstrap.servers": repo.broker.bootstrap_servers})
        assert "_kquota_apply_lease" not in admin.list_topics(timeout=10).topics
        # The command the message names makes it; then the same apply goes through.
        code, out, err = repo.kquota("topics", "create", "--cluster", "local")
        assert code == 0, out + err
        assert out.startswith("topic _kquota_apply_lease (the apply lease): created: ")
        code, out, err = repo.kquota("apply", "--auto-approve")
        assert code == 0, out + err
        assert repo.state() == {repo.user("lt"): {"producer_byte_rate": 64.0}}
    finally:
        with_lease_topic(repo.broker)  # the rest of the session's applies take the lease


@pytest.mark.parametrize("topic", ["audit log", "..", "x" * 250])
def test_apply_refuses_an_illegal_audit_topic_name_before_connecting(
    repo: Repo, topic: str
) -> None:
    repo.write([f"{{match: {{user: {repo.prefix}il}}, set: {{producer_byte_rate: 64}}}}"])
    code, out, err = repo.kquota("apply", "--auto-approve", "--audit-topic", topic)
    assert code == 1 and out == ""
    assert err.startswith("error: audit topic")
    assert repo.state() == {}


def _drifted(repo: Repo, kafka_configs_tool: KafkaConfigsTool, name: str) -> None:
    """_drifted applies one quota for ``name`` and changes it with Kafka's own tool."""
    repo.write([f"{{match: {{user: {repo.prefix}{name}}}, set: {{producer_byte_rate: 1024}}}}"])
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    kafka_configs_tool(
        "--alter", "--add-config", "producer_byte_rate=7", "--user", repo.prefix + name
    )
    assert_eventually(lambda: repo.state()[repo.user(name)] == {"producer_byte_rate": 7.0})


def test_drift_to_a_missing_publish_topic_names_the_command_that_makes_it(repo: Repo) -> None:
    from confluent_kafka.admin import AdminClient

    topic = f"drift-typo-{repo.prefix}x"
    repo.write([])
    code, out, err = repo.kquota("drift", "--publish-topic", topic)
    assert code == 1, out + err
    assert (
        f"error: cluster local: audit topic {topic!r} does not exist; create it with `kquota "
        f"topics create --cluster local --audit-topic {topic}` (kquota never lets a topic be "
        "auto-created, so a typo cannot become a new topic)\n"
    ) in err, err
    listed = AdminClient({"bootstrap.servers": repo.broker.bootstrap_servers}).list_topics(
        timeout=10
    )
    assert topic not in listed.topics


def test_drift_publishes_its_report_to_the_topic(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    p = repo.prefix
    topic = f"drift-{p}x"
    admin = AdminClient({"bootstrap.servers": repo.broker.bootstrap_servers})
    for f in admin.create_topics([NewTopic(topic, num_partitions=1)]).values():
        f.result(timeout=30)
    _drifted(repo, kafka_configs_tool, "dp")
    code, out, err = repo.kquota("drift", "--format", "json", "--publish-topic", topic)
    assert code == 2, out + err
    printed = json.loads(out)
    consumer = Consumer(
        {
            "bootstrap.servers": repo.broker.bootstrap_servers,
            "group.id": f"g-{p}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    try:
        end = time.monotonic() + 30
        got = []
        while not got and time.monotonic() < end:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m)
    finally:
        consumer.close()
    (msg,) = got
    assert msg.key() == b"local"  # a cluster's reports stay in order in one partition
    headers = dict(msg.headers())
    assert headers["event-type"] == b"quota.drift"
    assert headers["content-type"] == b"application/json"
    value = json.loads(msg.value())
    assert value["event_type"] == "quota.drift" and value["cluster"] == "local"
    # The event carries the report the command printed.
    assert value["report"] == printed
    assert value["report"]["in_sync"] is False
    assert value["report"]["findings"] == [
        {
            "entity": {"user": f"{p}dp"},
            "kind": "value_changed",
            "key": "producer_byte_rate",
            "desired": 1024.0,
            "actual": 7.0,
        }
    ]


def test_drift_as_prometheus_reads_back_through_a_prometheus_parser(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    _drifted(repo, kafka_configs_tool, "pm")
    before = time.time()
    code, out, err = repo.kquota("drift", "--format", "prometheus")
    assert code == 2, out + err
    families = {f.name: f for f in text_string_to_metric_families(out)}
    assert set(families) == {
        "kquota_drift_in_sync",
        "kquota_drift_findings",
        "kquota_drift_unmanaged_entities",
        "kquota_drift_last_check_timestamp_seconds",
    }
    assert all(f.type == "gauge" and f.documentation for f in families.values())
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    assert samples[("kquota_drift_in_sync", (("cluster", "local"),))] == 0.0
    assert samples[("kquota_drift_unmanaged_entities", (("cluster", "local"),))] == 0.0
    findings = {
        dict(labels)["kind"]: v
        for (name, labels), v in samples.items()
        if name == "kquota_drift_findings"
    }
    assert findings["value_changed"] == 1.0 and sum(findings.values()) == 1.0
    (stamp,) = families["kquota_drift_last_check_timestamp_seconds"].samples
    assert before - 1 <= stamp.value <= time.time() + 1


def test_a_live_apply_is_refused_for_an_observed_scope_and_writes_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    """policy.observe: another tool writes those quotas. A live apply (no saved plan) plans
    against the broker, then refuses the whole plan, the unobserved entity too."""
    p = repo.prefix
    (tmp_path / "kquota.yaml").write_text(
        _config(repo.broker, p, f", observe: [{{user: '{p}obs*'}}]")
    )
    repo.write(
        [
            f"{{match: {{user: {p}obs1}}, set: {{producer_byte_rate: 1024}}}}",
            f"{{match: {{user: {p}free}}, set: {{producer_byte_rate: 2048}}}}",
        ]
    )
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 1, out + err
    assert (
        f"cluster local: the plan alters 1 entities in an observed scope (policy.observe in "
        f"kquota.yaml): {{user={p}obs1}}; nothing was applied"
    ) in err
    assert "Traceback" not in err
    assert repo.state() == {}
    # Plan shows the same plan and says apply will refuse it.
    code, out, err = repo.kquota("plan")
    assert code == 0, out + err
    assert "observe mode (policy.observe): this plan alters 1 entities in an observed" in out
