"""The fleet apply operation against a real broker: the reviewed plan checked against the live
one, empty or not, and kquota.yaml read once for the whole rollout.

The CLI's rollouts (waves, resume, side by side, signals) are in
tests/integration/test_integration_fleet_apply.py; here the operation is called as a program
would call it.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import kquota.config.project
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota.operations.fleet_apply import FleetApplyRequest, fleet_apply
from kquota.plan.rollout import COMMITTED, FAILED, PlannedWave
from polling import assert_eventually
from rollout_kit import Cluster, Fleet, create_topic, desired_yaml, quotas, user_quota

pytestmark = pytest.mark.integration


@pytest.fixture()
def fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Fleet:
    monkeypatch.chdir(tmp_path)
    return Fleet(tmp_path, capsys)


def _changed_by_another_writer(bootstrap: str, user: str, op: QuotaOp) -> None:
    """_changed_by_another_writer alters ``user``'s quota as another client would, and waits
    until the broker's describe shows it (a KRaft broker applies a committed quota record to
    what it describes a moment later), so that the apply under test reads the change."""
    with WireAdmin(bootstrap) as admin:
        (done,) = admin.alter(
            [QuotaAlteration(Entity.of({"user": user}), (op,))], validate_only=False
        )
        assert done.ok
    shown = None if op.remove else op.value
    assert_eventually(
        lambda: quotas(bootstrap, user).get(op.key) == shown, what=f"{user}'s quota changed"
    )


def _request(fleet: Fleet) -> FleetApplyRequest:
    return FleetApplyRequest(fleet.root / "plans", fleet.root / "desired")


def test_a_reviewed_plan_the_cluster_already_holds_differs_from_the_empty_live_plan(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    """The reviewed plan sets a quota; someone else set it on the cluster since: the live plan
    is empty, which is not what was reviewed (docs/rollout.md), and nothing is written."""
    user = f"x{secrets.token_hex(3)}-a"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 10)}
    fleet.write()
    fleet.plan()
    _changed_by_another_writer(
        kafka_broker.bootstrap_servers, user, QuotaOp("producer_byte_rate", 10.0)
    )
    report = fleet_apply(_request(fleet))
    (outcome,) = report.clusters
    assert outcome.status == FAILED, outcome.detail
    assert outcome.detail == (
        "solo: the live plan is not the reviewed plan (the cluster or the desired state changed "
        "since fleet plan); nothing was written:\n"
        f"  {{user={user}}}: in the reviewed plan, not in the live one\n"
        "plan the fleet again and review the new plans"
    )
    assert report.stopped == "solo (wave 1) failed" and not report.ok


def test_a_reviewed_plan_equal_to_the_live_one_is_committed(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    user = f"x{secrets.token_hex(3)}-b"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 11)}
    fleet.write()
    fleet.plan()
    report = fleet_apply(_request(fleet))
    assert [(c.cluster, c.status) for c in report.clusters] == [("solo", COMMITTED)]
    assert report.ok and fleet.quota("solo") == {"producer_byte_rate": 11.0}


def test_kquota_yaml_is_read_once_for_the_waves_and_every_cluster(
    fleet: Fleet, kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three clusters in the waves of ``rollout:``: the operation reads kquota.yaml once (it
    read it seven times, 2N+1), and the waves it confirms are the file's."""
    p = f"y{secrets.token_hex(3)}-"
    one = kafka_broker.bootstrap_servers
    fleet.clusters = {
        "canary": Cluster(one, f"{p}c", 20),
        "eu-1": Cluster(one, f"{p}e1", 21),
        "eu-2": Cluster(one, f"{p}e2", 22),
    }
    fleet.write("rollout:\n  - {clusters: [canary]}\n  - {clusters: ['eu-*'], soak: 1s}\n")
    fleet.plan()
    reads: list[str] = []
    read_text = kquota.config.project.read_text

    def counted(path: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(Path(path).name)
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(kquota.config.project, "read_text", counted)
    confirmed: list[tuple[PlannedWave, ...]] = []
    report = fleet_apply(_request(fleet), confirm=confirmed.append)
    assert reads == ["kquota.yaml"]
    ((first, second),) = confirmed
    assert (first.clusters, second.clusters, second.wave.soak) == (("canary",), ("eu-1", "eu-2"), 1)
    assert [(c.cluster, c.wave, c.status) for c in report.clusters] == [
        ("canary", 1, COMMITTED),
        ("eu-1", 2, COMMITTED),
        ("eu-2", 2, COMMITTED),
    ]
    assert fleet.quota("eu-2") == {"producer_byte_rate": 22.0}


def test_waves_refused_at_confirmation_read_no_plan_and_write_nothing(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    user = f"z{secrets.token_hex(3)}-a"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 30)}
    fleet.write()
    fleet.plan()
    (fleet.root / "plans" / "solo.plan.json").write_text("not a plan")  # never read

    class Refused(Exception):
        pass

    def refuse(waves: tuple[PlannedWave, ...]) -> None:
        assert [w.clusters for w in waves] == [("solo",)]
        raise Refused

    with pytest.raises(Refused):
        fleet_apply(_request(fleet), confirm=refuse)
    assert fleet.quota("solo") == {}
    assert not (fleet.root / "plans" / "fleet-apply.json").exists()


def _audit_events(bootstrap: str, topic: str, count: int) -> list[dict[str, Any]]:
    """_audit_events reads the topic's first ``count`` events (bounded: 60 s)."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{secrets.token_hex(4)}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    events: list[dict[str, Any]] = []
    try:
        ends = time.monotonic() + 60
        while len(events) < count and time.monotonic() < ends:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                events.append(json.loads(m.value()))
    finally:
        consumer.close()
    return events


def _delete_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.delete_topics([topic]).values():
        f.result(timeout=30)


def _lose_audit_topic_once(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> list[str]:
    """_lose_audit_topic_once deletes the audit topic (a real fault) between the next commit
    and its audit events, once; the topics deleted. The events then go through a publisher
    whose delivery times out in 3 s, not the 30 s of kquota's (which a cluster's properties
    cannot shorten), so that the test does not wait for it."""
    import kquota.operations.apply as operation
    from kquota.audit import AuditPublisher

    real = operation.publish_audit
    lost: list[str] = []

    def publish(publisher: AuditPublisher, *args: Any, **kwargs: Any) -> Any:
        if lost:
            return real(publisher, *args, **kwargs)
        lost.append(publisher.topic)
        _delete_topic(bootstrap, publisher.topic)
        config = {"bootstrap.servers": bootstrap, "message.timeout.ms": "3000"}
        with AuditPublisher(publisher.topic, config) as quick:
            return real(quick, *args, **kwargs)

    monkeypatch.setattr(operation, "publish_audit", publish)
    return lost


def _record(fleet: Fleet) -> dict[str, Any]:
    data = json.loads((fleet.root / "plans" / "fleet-apply.json").read_text())
    (cluster,) = data["clusters"]
    return dict(cluster)


def test_a_cluster_committed_then_unaudited_resumes_and_publishes_its_audit_events(
    fleet: Fleet, kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    tag = secrets.token_hex(3)
    topic = f"audit-r{tag}"
    create_topic(bootstrap, topic)
    fleet.clusters = {"solo": Cluster(bootstrap, f"r{tag}-a", 12, topic)}
    fleet.write()
    fleet.plan()
    lost = _lose_audit_topic_once(monkeypatch, bootstrap)
    report = fleet_apply(_request(fleet))
    (outcome,) = report.clusters
    assert lost == [topic]
    assert outcome.status == FAILED and "1 committed entities are not audited" in outcome.detail
    assert fleet.quota("solo") == {"producer_byte_rate": 12.0}
    first = _record(fleet)

    create_topic(bootstrap, topic)
    report = fleet_apply(replace(_request(fleet), resume=True))
    (outcome,) = report.clusters
    assert outcome.status == COMMITTED, outcome.detail
    assert outcome.detail == (
        "nothing left to commit; 1 committed in an earlier attempt, verified; "
        f"audit: 1 events confirmed on topic {topic} (of the earlier attempt)"
    )
    assert report.ok
    assert (first["committed"], first["audited"]) == ([0], [])
    assert (_record(fleet)["committed"], _record(fleet)["audited"]) == ([0], [0])
    (event,) = _audit_events(bootstrap, topic, 1)
    assert event["entity"] == {"user": f"r{tag}-a"}
    assert event["ops"][0]["after"] == 12.0


def _committed_unaudited(
    fleet: Fleet, bootstrap: str, monkeypatch: pytest.MonkeyPatch, users: list[str]
) -> str:
    """_committed_unaudited rolls out one cluster setting ``users`` (producer_byte_rate 20,
    21, …) whose audit topic is lost after the commit: the record says every change committed,
    none audited. The topic is back afterwards; its name."""
    topic = f"audit-{users[0]}"
    create_topic(bootstrap, topic)
    fleet.clusters = {"solo": Cluster(bootstrap, users[0], 20, topic)}
    fleet.write()
    entries = [user_quota(u, producer_byte_rate=20 + i) for i, u in enumerate(users)]
    (fleet.root / "desired" / "solo" / "main.yaml").write_text(desired_yaml(entries))
    fleet.plan()
    _lose_audit_topic_once(monkeypatch, bootstrap)
    (outcome,) = fleet_apply(_request(fleet)).clusters
    assert outcome.status == FAILED and "not audited" in outcome.detail
    assert _record(fleet)["committed"] == list(range(len(users)))
    monkeypatch.undo()
    monkeypatch.chdir(fleet.root)
    create_topic(bootstrap, topic)
    return topic


def test_a_committed_cluster_changed_by_someone_else_is_still_refused(
    fleet: Fleet, kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    user = f"s{secrets.token_hex(3)}-a"
    _committed_unaudited(fleet, bootstrap, monkeypatch, [user])
    _changed_by_another_writer(bootstrap, user, QuotaOp("producer_byte_rate", 7.0))
    (outcome,) = fleet_apply(replace(_request(fleet), resume=True)).clusters
    assert outcome.status == FAILED
    assert outcome.detail == (
        "solo: the live plan is not the reviewed plan (the cluster or the desired state changed "
        "since fleet plan); nothing was written:\n"
        f"  {{user={user}}}: committed by this rollout, but the cluster no longer shows its "
        "reviewed values\n"
        "plan the fleet again and review the new plans"
    )
    assert fleet.quota("solo") == {"producer_byte_rate": 7.0}
    # The record still says what the rollout committed, and that it is not audited.
    assert (_record(fleet)["committed"], _record(fleet)["audited"]) == ([0], [])


def test_what_the_record_does_not_vouch_for_is_refused_and_a_part_resumes(
    fleet: Fleet, kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record says only the first change committed: the second, which the cluster holds
    too, was not made by this rollout as far as the record says, and is refused. Once the
    second is gone from the cluster, the cluster is partly committed, as an attempt cut short
    leaves it: the rest is committed, and both changes audited."""
    bootstrap = kafka_broker.bootstrap_servers
    tag = secrets.token_hex(3)
    users = [f"v{tag}-a", f"v{tag}-b"]
    topic = _committed_unaudited(fleet, bootstrap, monkeypatch, users)
    path = fleet.root / "plans" / "fleet-apply.json"
    data = json.loads(path.read_text())
    data["clusters"][0]["committed"] = [0]
    path.write_text(json.dumps(data))
    (outcome,) = fleet_apply(replace(_request(fleet), resume=True)).clusters
    assert outcome.status == FAILED
    assert f"  {{user={users[1]}}}: in the reviewed plan, not in the live one\n" in outcome.detail

    removal = QuotaOp("producer_byte_rate", remove=True)
    _changed_by_another_writer(bootstrap, users[1], removal)
    report = fleet_apply(replace(_request(fleet), resume=True))
    (outcome,) = report.clusters
    assert outcome.status == COMMITTED, outcome.detail
    assert outcome.detail == (
        f"1 entities committed and verified; audit: 1 events confirmed on topic {topic}; "
        f"1 committed in an earlier attempt, verified; audit: 1 events confirmed on topic "
        f"{topic} (of the earlier attempt)"
    )
    assert report.ok and quotas(bootstrap, users[1]) == {"producer_byte_rate": 21.0}
    assert (_record(fleet)["committed"], _record(fleet)["audited"]) == ([0, 1], [0, 1])
    events = _audit_events(bootstrap, topic, 2)
    assert sorted(e["entity"]["user"] for e in events) == users


@pytest.mark.parametrize(
    ("committed", "audited", "problem"),
    [
        ([0, 0], [], "committed is not a list of distinct positions in its reviewed plan (0 to 0)"),
        ([1], [], "committed is not a list of distinct positions in its reviewed plan (0 to 0)"),
        ([True], [], "committed is not a list of distinct positions in its reviewed plan (0 to 0)"),
        ("0", [], "committed is not a list of distinct positions in its reviewed plan (0 to 0)"),
        ([], [0], "audited names alterations not committed"),
    ],
)
def test_a_record_naming_what_is_not_in_the_reviewed_plan_is_refused_before_connecting(
    fleet: Fleet, committed: object, audited: object, problem: str
) -> None:
    """The record is a file anyone with the plans folder can edit: its positions are checked
    against the reviewed plan it names before anything connects (the cluster is no broker)."""
    from kquota.errors import UsageError
    from kquota.planfile.reader import load_plan_file
    from kquota.planfile.writer import plan_id
    from kquota.policy import Policy

    fleet.clusters = {"solo": Cluster("127.0.0.1:1", "u", 1)}
    fleet.write()
    fleet.plan()
    reviewed = load_plan_file(fleet.root / "plans" / "solo.plan.json", Policy(), review=True)
    entry = {"cluster": "solo", "wave": 1, "plan_id": plan_id(reviewed), "status": "failed"}
    record = {"clusters": [{**entry, "detail": "", "committed": committed, "audited": audited}]}
    (fleet.root / "plans" / "fleet-apply.json").write_text(json.dumps(record))
    with pytest.raises(UsageError) as e:
        fleet_apply(replace(_request(fleet), resume=True))
    assert str(e.value).endswith(f": not a fleet apply record (cluster 'solo': {problem})")
