"""kquota fleet apply against real brokers: waves, a failure that stops the rollout, resume,
and the clusters of a wave applied side by side.

Two dev brokers (the session's and one more, one node each) hold the fleet's kquota.yaml
clusters; several clusters may share a broker, each owning its own users (and then its apply
lease: two clusters on one broker take turns). Faults are real: an audit topic that does not
exist, a quota changed by another client, a broker's apply lease held by another (the test).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import KAFKA_VERSION, KafkaConfigsTool
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota_topics import with_lease_topic
from polling import assert_eventually
from rollout_kit import (
    Cluster,
    Fleet,
    create_topic,
    desired_yaml,
    ended,
    kquota_process,
    lease_held,
    lease_log,
    read_until,
    user_quota,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def second_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    broker_dir = tmp_path_factory.mktemp("kafka-second")
    info = start_broker(broker_dir, kafka_version=KAFKA_VERSION, die_with_parent=True, heap="512m")
    try:
        yield with_lease_topic(info)
    finally:
        stop_broker(broker_dir)


@pytest.fixture()
def fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Fleet:
    monkeypatch.chdir(tmp_path)
    return Fleet(tmp_path, capsys)


def _tag() -> str:
    return secrets.token_hex(3)


def test_fleet_apply_stops_at_the_failing_wave_and_resume_completes_it(
    fleet: Fleet,
    kafka_broker: BrokerInfo,
    second_broker: BrokerInfo,
    kafka_configs_tool: KafkaConfigsTool,
) -> None:
    p = f"f{_tag()}-"
    one, two = kafka_broker.bootstrap_servers, second_broker.bootstrap_servers
    audit_one, audit_two = f"audit-{p}1", f"audit-{p}2"
    create_topic(one, audit_one)  # eu-1's topic (on the second broker) is missing
    fleet.clusters = {
        "canary": Cluster(one, f"{p}c", 1000, audit_one),
        "eu-1": Cluster(two, f"{p}e1", 1001, audit_two),
        "eu-2": Cluster(one, f"{p}e2", 1002, audit_one),
    }
    fleet.write(
        "rollout:\n"
        "  - {clusters: [canary]}\n"
        "  - {clusters: ['eu-*']}\n"
        "  - {clusters: ['*'], max_parallel: 4}\n"
    )
    fleet.plan()

    code, out, err = fleet.kquota(*fleet.APPLY, "--format", "json")
    assert code == 1, out + err
    report = json.loads(out)
    status = {c["cluster"]: (c["wave"], c["status"]) for c in report["clusters"]}
    assert status == {
        "canary": (1, "committed"),
        "eu-1": (2, "failed"),
        "eu-2": (2, "not attempted"),
    }
    failed = next(c for c in report["clusters"] if c["cluster"] == "eu-1")
    assert f"audit topic '{audit_two}' does not exist" in failed["detail"]
    assert "nothing was committed" in failed["detail"]
    assert report["resume"].endswith("--resume")
    # The canary is applied and verified (read back by Kafka's own tool); the rest untouched.
    configs = kafka_configs_tool("--describe", "--user", f"{p}c").stdout
    assert "producer_byte_rate=1000.0" in configs
    assert fleet.quota("eu-1") == {} and fleet.quota("eu-2") == {}

    # Resume without fixing: the same refusal, the canary not applied again.
    code, out, err = fleet.kquota(*fleet.APPLY, "--resume")
    assert code == 1 and "wave 1  canary  committed: done in an earlier run" in out
    assert "rollout stopped: eu-1 (wave 2) failed" in out

    create_topic(two, audit_two)
    code, out, err = fleet.kquota(*fleet.APPLY, "--resume", "--format", "markdown")
    assert code == 0, out + err
    assert "### kquota fleet apply: rollout complete, 3 of 3 clusters done" in out
    assert "| 2 | `eu-1` | committed |" in out and "| 2 | `eu-2` | committed |" in out
    assert fleet.quota("eu-1") == {"producer_byte_rate": 1001.0}
    assert fleet.quota("eu-2") == {"producer_byte_rate": 1002.0}

    # A finished rollout is not started again by accident.
    code, out, err = fleet.kquota(*fleet.APPLY)
    assert code == 1 and "pass --resume to continue it" in err


def test_a_live_plan_that_is_not_the_reviewed_one_is_refused(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    p = f"g{_tag()}-"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, f"{p}a", 10)}
    fleet.write()
    fleet.plan()
    # The desired state changes after review: the live plan differs, nothing is written.
    (fleet.root / "desired" / "solo" / "main.yaml").write_text(
        desired_yaml([user_quota(f"{p}a", producer_byte_rate=20)])
    )
    code, out, err = fleet.kquota(*fleet.APPLY)
    assert code == 1
    assert "solo: the live plan is not the reviewed plan" in out
    assert fleet.quota("solo") == {}


def test_drift_during_a_wave_soak_stops_the_rollout(fleet: Fleet, kafka_broker: BrokerInfo) -> None:
    p = f"s{_tag()}-"
    one = kafka_broker.bootstrap_servers
    fleet.clusters = {
        "canary": Cluster(one, f"{p}canary", 500),
        "next": Cluster(one, f"{p}next", 500),
    }
    fleet.write("rollout:\n  - {clusters: [canary], soak: 6s}\n  - {clusters: ['*']}\n")
    fleet.plan()
    progress: list[str] = []
    with ended(kquota_process([*fleet.APPLY, "--timeout", "90s"])) as proc:
        read_until(proc.stderr, "soak:", progress)
        canary = Entity.of({"user": f"{p}canary"})
        with WireAdmin(one) as admin:
            (done,) = admin.alter(
                [QuotaAlteration(canary, (QuotaOp("producer_byte_rate", 42.0, False),))],
                validate_only=False,
            )
            assert done.ok
        out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + "".join(progress) + rest
    assert "rollout stopped: drift during the soak of wave 1: canary:" in out
    assert "producer_byte_rate is 42, the plan set 500" in out
    assert "wave 2  next  not attempted" in out
    assert fleet.quota("next") == {}


def _pids(records: list[tuple[int, int | None]], mine: int) -> list[int]:
    """The claims of other processes than this test's, in log order."""
    return [pid for _, pid in records if pid is not None and pid != mine]


def test_a_wave_applies_max_parallel_clusters_at_once_and_ctrl_c_settles_them(
    fleet: Fleet, kafka_broker: BrokerInfo, second_broker: BrokerInfo
) -> None:
    """eu-1 (the second broker) comes first in its wave; the test holds that broker's apply
    lease, so eu-1's apply waits for it. One at a time, eu-2 (the session broker) would not
    start before eu-1 ends; side by side it commits while eu-1's apply is still waiting: the
    two applies provably overlap, by the order of events, not by any clock."""
    import os

    p = f"q{_tag()}-"
    one, two = kafka_broker.bootstrap_servers, second_broker.bootstrap_servers
    topic = f"audit-{p}"
    create_topic(one, topic)
    create_topic(two, topic)
    fleet.clusters = {
        "eu-1": Cluster(two, f"{p}e1", 2001, topic),
        "eu-2": Cluster(one, f"{p}e2", 2002, topic),
    }
    fleet.write()
    fleet.plan()
    argv = [*fleet.APPLY, "--wave", "eu-*:2", "--timeout", "120s", "--format", "json"]

    # Ctrl-C while both applies wait for their leases: each stops before writing anything,
    # the report says so, and the rollout exits 130.
    progress: list[str] = []
    with lease_held(two), lease_held(one), ended(kquota_process(argv)) as proc:
        read_until(proc.stderr, "applying (2 of 2 at once)", progress)
        for name in ("eu-1", "eu-2"):
            # Each apply has its own process, its output prefixed with its cluster.
            marker = f"[{name}] waiting for the apply lease"
            if not any(marker in line for line in progress):
                read_until(proc.stderr, marker, progress)
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + "".join(progress) + rest
    report = json.loads(out)
    assert report["stopped"] == "interrupted by SIGINT in wave 1"
    for c in report["clusters"]:
        assert c["status"] == "failed"
        assert c["detail"] == "interrupted by SIGINT before committing; nothing was written"
    assert report["resume"].endswith("--resume")
    assert fleet.quota("eu-1") == {} and fleet.quota("eu-2") == {}

    # Resumed with only eu-1's broker held: eu-2 commits while eu-1's apply still waits.
    progress = []
    earlier = len(lease_log(two))  # the first run's claims are in the log too
    with ended(kquota_process([*argv, "--resume"])) as proc:
        with lease_held(two):
            read_until(proc.stderr, "[eu-1] waiting for the apply lease", progress)
            assert_eventually(lambda: fleet.quota("eu-2") == {"producer_byte_rate": 2002.0})
            assert fleet.quota("eu-1") == {}  # its apply has not written: it waits
            waiting = lease_log(two)
        out, rest = proc.communicate(timeout=90)
    assert proc.returncode == 0, out + "".join(progress) + rest
    assert [c["status"] for c in json.loads(out)["clusters"]] == ["committed", "committed"]
    assert fleet.quota("eu-1") == {"producer_byte_rate": 2001.0}
    # The second broker's lease log, in its own order: eu-1's apply claimed (and withdrew)
    # while the test held the lease, that is before eu-2's commit was seen above; after the
    # test's release its claim won. Its process is not the driver's: each apply has its own.
    contenders = _pids(waiting[earlier:], os.getpid())
    assert contenders, waiting
    assert _pids(lease_log(two), os.getpid())[-1] == contenders[0] != proc.pid


def test_the_first_failure_in_a_parallel_wave_starts_nothing_more_and_resume_completes_it(
    fleet: Fleet, kafka_broker: BrokerInfo, second_broker: BrokerInfo
) -> None:
    """eu-1 fails (its audit topic is missing) while eu-2 waits for its broker's lease (held
    by the test): eu-3 must not start, eu-2 finishes and is committed."""
    p = f"w{_tag()}-"
    one, two = kafka_broker.bootstrap_servers, second_broker.bootstrap_servers
    ok, missing = f"audit-{p}ok", f"audit-{p}missing"
    create_topic(one, ok)
    create_topic(two, ok)
    fleet.clusters = {
        "canary": Cluster(two, f"{p}c", 3000, ok),
        "eu-1": Cluster(two, f"{p}e1", 3001, missing),
        "eu-2": Cluster(one, f"{p}e2", 3002, ok),
        "eu-3": Cluster(one, f"{p}e3", 3003, ok),
    }
    fleet.write("rollout:\n  - {clusters: [canary]}\n  - {clusters: ['eu-*'], max_parallel: 2}\n")
    fleet.plan()
    argv = [*fleet.APPLY, "--timeout", "120s", "--format", "json"]
    progress: list[str] = []
    with ended(kquota_process(argv)) as proc:
        with lease_held(one):
            read_until(proc.stderr, "eu-1: failed", progress)
            assert "eu-2: applying" in "".join(progress)
            assert fleet.quota("eu-2") == {}  # still waiting for its lease
        out, rest = proc.communicate(timeout=90)
    assert proc.returncode == 1, out + "".join(progress) + rest
    report = json.loads(out)
    status = {c["cluster"]: c["status"] for c in report["clusters"]}
    assert status == {
        "canary": "committed",
        "eu-1": "failed",
        "eu-2": "committed",
        "eu-3": "not attempted",
    }
    assert report["stopped"] == "eu-1 (wave 2) failed"
    assert "eu-3: applying" not in "".join(progress) + rest
    assert fleet.quota("eu-2") == {"producer_byte_rate": 3002.0}
    assert fleet.quota("eu-1") == {} and fleet.quota("eu-3") == {}

    create_topic(two, missing)
    code, out, err = fleet.kquota(*fleet.APPLY, "--resume", "--format", "markdown")
    assert code == 0, out + err
    assert "rollout complete, 4 of 4 clusters done" in out
    assert "| 2 | `eu-1` | committed |" in out and "| 2 | `eu-3` | committed |" in out
    assert "| 2 | `eu-2` | committed | done in an earlier run |" in out
    assert fleet.quota("eu-1") == {"producer_byte_rate": 3001.0}
    assert fleet.quota("eu-3") == {"producer_byte_rate": 3003.0}


def test_sigterm_stops_a_wave_of_one_at_a_time_with_a_report(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    """One cluster at a time runs in the rollout's own process: SIGTERM (a cancelled CI job)
    stops the apply in flight as Ctrl-C does, and the rollout still reports and can resume."""
    p = f"t{_tag()}-"
    one = kafka_broker.bootstrap_servers
    fleet.clusters = {"solo": Cluster(one, f"{p}s", 4000), "zulu": Cluster(one, f"{p}z", 4001)}
    fleet.write()
    fleet.plan()
    progress: list[str] = []
    with ended(kquota_process([*fleet.APPLY, "--timeout", "120s"])) as proc, lease_held(one):
        read_until(proc.stderr, "waiting for the apply lease", progress)
        proc.send_signal(signal.SIGTERM)
        out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 143, out + "".join(progress) + rest
    assert (
        "wave 1  solo  failed: interrupted by SIGTERM before committing; nothing was written" in out
    )
    assert "wave 2  zulu  not attempted" in out
    assert "rollout stopped: interrupted by SIGTERM in wave 1; 0 of 2 clusters done" in out
    assert "resume with: kquota fleet apply plans --desired desired --resume" in out
    assert fleet.quota("solo") == {}
    code, out, err = fleet.kquota(*fleet.APPLY, "--resume")
    assert code == 0, out + err
    assert fleet.quota("zulu") == {"producer_byte_rate": 4001.0}


def test_a_hung_broker_ends_its_own_apply_at_the_deadline_and_the_other_completes(
    fleet: Fleet, kafka_broker: BrokerInfo, second_broker: BrokerInfo
) -> None:
    """eu-1's broker is hung (SIGSTOP: the port accepts, nothing answers) while its wave runs
    side by side with eu-2: eu-1's apply ends at its own deadline, saying what it waited on,
    eu-2 is committed, and once the broker answers again --resume completes eu-1."""
    import os

    p = f"h{_tag()}-"
    fleet.clusters = {
        "eu-1": Cluster(second_broker.bootstrap_servers, f"{p}e1", 5001),
        "eu-2": Cluster(kafka_broker.bootstrap_servers, f"{p}e2", 5002),
    }
    fleet.write()
    fleet.plan()
    argv = [*fleet.APPLY, "--wave", "eu-*:2", "--format", "json"]
    os.kill(second_broker.pid, signal.SIGSTOP)
    try:
        code, out, err = fleet.kquota(*argv, "--timeout", "30s")
    finally:
        os.kill(second_broker.pid, signal.SIGCONT)
    assert code == 1, out + err
    report = json.loads(out)
    by_name = {c["cluster"]: c for c in report["clusters"]}
    assert by_name["eu-2"]["status"] == "committed"
    assert by_name["eu-1"]["status"] == "failed"
    assert "the --timeout 30s deadline ran out" in by_name["eu-1"]["detail"]
    assert "waiting for" in by_name["eu-1"]["detail"]  # what it was waiting on is named
    assert report["stopped"] == "eu-1 (wave 1) failed"
    assert fleet.quota("eu-2") == {"producer_byte_rate": 5002.0}

    code, out, err = fleet.kquota(*argv, "--resume", "--timeout", "120s")
    assert code == 0, out + err
    assert fleet.quota("eu-1") == {"producer_byte_rate": 5001.0}


def test_the_record_is_written_without_following_a_planted_symlink(
    fleet: Fleet, kafka_broker: BrokerInfo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    p = f"k{_tag()}-"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, f"{p}a", 10)}
    fleet.write()
    fleet.plan()
    outside = tmp_path_factory.mktemp("outside")
    (outside / "victim").write_text("not kquota's\n")
    plans = fleet.root / "plans"
    # Where the record and its old temporary file are written, links to files outside.
    (plans / "fleet-apply.tmp").symlink_to(outside / "victim")
    (plans / "fleet-apply.json").symlink_to(outside / "created")
    code, out, err = fleet.kquota(*fleet.APPLY)
    assert code == 0, out + err
    assert (outside / "victim").read_text() == "not kquota's\n"
    assert sorted(f.name for f in outside.iterdir()) == ["victim"]
    record = plans / "fleet-apply.json"
    assert not record.is_symlink() and record.is_file()
    assert json.loads(record.read_text())["clusters"][0]["status"] == "committed"
    assert not [f.name for f in plans.iterdir() if f.name.startswith(".fleet-apply")]
    assert fleet.quota("solo") == {"producer_byte_rate": 10.0}


def test_a_hand_edited_record_cannot_make_resume_skip_a_wave(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    p = f"r{_tag()}-"
    one = kafka_broker.bootstrap_servers
    audit = f"audit-{p}t"  # missing at first: the canary fails before committing anything
    fleet.clusters = {
        "canary": Cluster(one, f"{p}c", 3000, audit),
        "eu-1": Cluster(one, f"{p}e", 3001, audit),
    }
    fleet.write()
    fleet.plan()
    code, out, err = fleet.kquota(*fleet.APPLY)
    assert code == 1 and "rollout stopped: canary (wave 1) failed" in out, out + err
    record = fleet.root / "plans" / "fleet-apply.json"
    data = json.loads(record.read_text())
    for c in data["clusters"]:
        c["status"], c["detail"] = "committed", "forged"
    record.write_text(json.dumps(data))
    create_topic(one, audit)

    code, out, err = fleet.kquota(*fleet.APPLY, "--resume")
    assert code == 0, out + err
    for name in ("canary", "eu-1"):
        assert (
            f"{name}: the record says committed, but the live cluster does not show its plan "
            f"({{user={p}{name[0]}}}: producer_byte_rate is unset, the plan set 300"
        ) in err + out, out + err
    # Not skipped on the record's word: both waves were applied.
    assert fleet.quota("canary") == {"producer_byte_rate": 3000.0}
    assert fleet.quota("eu-1") == {"producer_byte_rate": 3001.0}

    # A record the live cluster confirms still skips: nothing is applied twice.
    code, out, err = fleet.kquota(*fleet.APPLY, "--resume")
    assert code == 0 and "canary  committed: done in an earlier run" in out, out + err


def test_a_fifo_planted_as_the_record_is_refused_without_hanging(fleet: Fleet) -> None:
    fleet.clusters = {"solo": Cluster("127.0.0.1:1", "nobody", 10)}
    fleet.write()
    fleet.plan()
    record = fleet.root / "plans" / "fleet-apply.json"
    os.mkfifo(record)
    # In a child with a timeout: a reader that opened the FIFO would block for ever.
    done = subprocess.run(
        [str(Path(sys.executable).parent / "kquota"), *fleet.APPLY, "--resume"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == (
        "error: plans/fleet-apply.json: cannot read the fleet apply record: it is a FIFO "
        "(named pipe); allowed: a readable regular file\n"
    )
