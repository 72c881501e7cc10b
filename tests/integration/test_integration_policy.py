"""One policy for a cluster, however it is named, and guards counted at apply, never read from
a saved plan (issue 33, parts 2 and 3), against the real broker: an observe-mode cluster
addressed by its bootstrap servers, and saved plans doctored as a hostile reviewer would
(capacity key deleted, made without --impact, policy fields edited)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import KAFKA_VERSION
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota_topics import with_lease_topic
from rollout_kit import Project, project, user_quota

pytestmark = pytest.mark.integration

P = "producer_byte_rate"


@pytest.fixture(scope="module")
def empty_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    """A broker of this module's own: the capacity guard sums every quota on the cluster, and
    the session broker holds other tests' defaults, which make the sum "cannot tell"."""
    broker_dir = tmp_path_factory.mktemp("kafka-policy")
    info = start_broker(broker_dir, kafka_version=KAFKA_VERSION, die_with_parent=True, heap="512m")
    try:
        yield with_lease_topic(info)
    finally:
        stop_broker(broker_dir)


def _project(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
    letter: str,
    cluster: str,
) -> Project:
    """A one-cluster project (``local``) whose kquota.yaml says ``cluster`` below its
    bootstrap servers (capacity, policy)."""
    repo = project(tmp_path, monkeypatch, kafka_broker.bootstrap_servers, capsys, letter)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{repo.bootstrap}'}}\n"
        "    desired: [quotas]\n" + cluster
    )
    return repo


def _spelled_otherwise(bootstrap: str) -> str:
    """The same servers as kquota.yaml's, written as nobody would: spaces, twice."""
    return f" {bootstrap} ,{bootstrap} "


def test_an_observe_mode_cluster_named_by_its_servers_is_not_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _project(
        tmp_path, monkeypatch, kafka_broker, capsys, "o", "    policy: {mode: observe}\n"
    )
    repo.write([user_quota(f"{repo.prefix}a", producer_byte_rate=1000)])
    code, out, err = repo.kquota("plan", "--cluster", "local", "--out", "plan.json")
    assert code == 0, out + err  # observe mode plans as usual
    servers = _spelled_otherwise(repo.bootstrap)
    for source in ("plan.json", "quotas"):
        code, out, err = repo.kquota(
            "apply", source, "--bootstrap-server", servers, "--auto-approve"
        )
        assert code == 1, out + err
        assert "cluster local is in observe mode (policy.mode: observe in kquota.yaml)" in err
    assert repo.quota("a") == {}
    # kquota show says so too, of the plan as saved
    code, out, err = repo.kquota("show", "plan.json")
    assert code == 0, err
    assert "cluster local is in observe mode" in err and "apply will refuse this plan" in err


def test_servers_of_no_configured_cluster_are_warned_of_and_json_stays_json(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = project(tmp_path, monkeypatch, kafka_broker.bootstrap_servers, capsys, "w")
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  prod: {kafka: {bootstrap.servers: 'prod-1:9092'}}\n"
    )
    (tmp_path / "quotas").mkdir()
    repo.write([])
    argv = ["plan", "--bootstrap-server", repo.bootstrap, "--format", "json"]
    code, out, err = repo.kquota(*argv)
    assert code == 0, err
    json.loads(out)
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warned == [
        f"warning: --bootstrap-server '{repo.bootstrap}' is none of the clusters of "
        f"{tmp_path / 'kquota.yaml'} (prod): the default policy applies, not a configured "
        "cluster's"
    ]


def test_a_saved_plan_without_its_capacity_key_meets_the_capacity_guard(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    empty_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _project(tmp_path, monkeypatch, empty_broker, capsys, "c", "")
    user = f"{repo.prefix}big"
    (tmp_path / "kquota.yaml").write_text(
        (tmp_path / "kquota.yaml").read_text()
        + "    capacity: {ingress: 10MiB/s}\n"
        + f"    policy: {{protect: [{{user: {user}}}], capacity: {{max_oversubscription: 3}}}}\n"
    )
    repo.write([f"{{match: {{user: {user}}}, set: {{{P}: 40MiB}}}}"])
    guard = ("--allow-protected-change",)  # the user is newly limited: another guard
    # What apply from desired state says:
    code, out, err = repo.kquota("apply", "--cluster", "local", "--auto-approve", *guard)
    assert code == 1, out + err
    refusal = "capacity guard: producer_byte_rate: known principals' quotas add up to 4.00x"
    assert refusal in err
    plan = ["plan", "--cluster", "local", "--allow-oversubscription", *guard]
    code, out, err = repo.kquota(*plan, "--out", "plan.json")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert doc["capacity"]["oversubscription_allowed"] is True  # the plan's own claim
    del doc["capacity"]
    (tmp_path / "doctored.json").write_text(json.dumps(doc))
    for saved in ("plan.json", "doctored.json"):
        apply = ("apply", saved, "--auto-approve", *guard)
        for where in (("--cluster", "local"), ("--bootstrap-server", repo.bootstrap)):
            code, out, err = repo.kquota(*apply, *where)
            assert code == 1, out + err
            assert refusal in err
            assert "nothing was applied (pass --allow-oversubscription if this is intended)" in err
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    apply = ("apply", "plan.json", "--auto-approve", *guard)
    assert repo.quota("big") == {}
    code, out, err = repo.kquota("show", "plan.json")
    assert code == 0, err
    assert "apply counts the capacity guard (max_oversubscription=3)" in err
    # The operator's flag, not the file, overrides it.
    code, out, err = repo.kquota(*apply, "--cluster", "local", "--allow-oversubscription")
    assert code == 0, out + err
    assert repo.quota("big") == {P: 40.0 * 1024 * 1024}


def _scram_user(bootstrap: str, user: str) -> None:
    """A SCRAM user on the broker: a principal the live discovery finds."""
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    upsert = UserScramCredentialUpsertion(user, info, b"not-a-secret-in-a-test")
    for f in admin.alter_user_scram_credentials([upsert]).values():
        f.result(timeout=30)


def test_a_protected_glob_protects_on_the_saved_plan_road_without_impact(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _project(tmp_path, monkeypatch, kafka_broker, capsys, "g", "")
    svc = f"{repo.prefix}svc-1"
    _scram_user(repo.bootstrap, svc)
    repo.write([user_quota(svc, producer_byte_rate=1024)])
    # The plan is made while the file protects nobody, as the Action makes it (no --impact);
    # then the policy protects a glob the user matches.
    code, out, err = repo.kquota("plan", "--cluster", "local", "--out", "plan.json")
    assert code == 0, out + err
    (tmp_path / "kquota.yaml").write_text(
        (tmp_path / "kquota.yaml").read_text()
        + f"    policy: {{protect: [{{user: '{repo.prefix}svc-*'}}]}}\n"
    )
    refusal = f"protected principals: {{user={svc}}} {P}: unlimited -> 1024"
    code, out, err = repo.kquota("apply", "--cluster", "local", "--auto-approve")
    assert code == 1 and refusal in err, out + err  # from desired state
    apply = ("apply", "plan.json", "--auto-approve")
    for where in (("--cluster", "local"), ("--bootstrap-server", repo.bootstrap)):
        code, out, err = repo.kquota(*apply, *where)
        assert code == 1, out + err
        assert refusal in err and "pass --allow-protected-change" in err
    assert repo.quota("svc-1") == {}
    code, out, err = repo.kquota("show", "plan.json")
    assert code == 0, err
    assert f"apply resolves the protected principals (user={repo.prefix}svc-*)" in err


def test_a_doctored_policy_field_in_a_saved_plan_counts_for_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _project(tmp_path, monkeypatch, kafka_broker, capsys, "f", "")
    user = f"{repo.prefix}p"
    (tmp_path / "kquota.yaml").write_text(
        (tmp_path / "kquota.yaml").read_text() + f"    policy: {{protect: [{{user: {user}}}]}}\n"
    )
    repo.write([user_quota(user, producer_byte_rate=2048)])
    code, out, err = repo.kquota(
        "plan", "--cluster", "local", "--allow-protected-change", "--out", "plan.json"
    )
    assert code == 0, out + err
    doc = json.loads((tmp_path / "plan.json").read_text())
    doc["impact"] = []  # the verdict and the principals it names, gone
    doc["protected_violations"] = []
    doc["protected_change_allowed"] = True
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    code, out, err = repo.kquota(
        "apply", "plan.json", "--bootstrap-server", repo.bootstrap, "--auto-approve"
    )
    assert code == 1, out + err
    assert f"protected principals: {{user={user}}} {P}: unlimited -> 2048" in err
    assert repo.quota("p") == {}
