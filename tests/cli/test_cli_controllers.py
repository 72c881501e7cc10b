"""Other controllers from kquota.yaml, offline (issue 23 item 2): ``platform: strimzi`` and
``kafka_users`` named in plan and drift; ``policy.mode: observe`` refusing apply before any
connection while plan and drift work as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gfm
from kquota.cli.main import cli
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: <default>}
    set: {producer_byte_rate: 1MiB, consumer_byte_rate: 2MiB}
  - match: {user: orders}
    set: {producer_byte_rate: 4MiB}
"""
CONFIG = """\
clusters:
  c1:
    kafka: {{bootstrap.servers: "127.0.0.1:1"}}
    platform: strimzi
    kafka_users: [orders]
{extra}"""


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(DESIRED)
    (tmp_path / "kquota.yaml").write_text(CONFIG.format(extra=""))
    state = {Entity.of({"user": "orders"}): {"producer_byte_rate": 1.0}}
    (tmp_path / "snap.json").write_bytes(
        dump_snapshot(state, meta={"cluster": "c1", "cluster_id": "id-1"})
    )
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = str(result.exception) if result.exception and result.exit_code == 1 else ""
    return result.exit_code, result.stdout, result.stderr + err


def test_plan_says_what_strimzi_will_do(repo: Path) -> None:
    code, out, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 0
    assert "Other controllers:\n  ! Strimzi's Cluster Operator removes {user=<default>}" in out
    assert (
        "spec.kafka.quotas: {type: kafka, producerByteRate: 1048576, consumerByteRate: 2097152}"
        in out
    )
    assert "  ! {user=orders} is owned elsewhere: Strimzi's User Operator rewrites it" in out
    code, md, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--format", "markdown")
    assert code == 0
    doc = gfm.assert_aligned(md)
    assert "Other controllers:" in doc.text() and "owned elsewhere" in doc.text()
    code, js, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--format", "json")
    assert len(json.loads(js)["controller_notes"]) == 2


def test_drift_names_the_removed_default_as_reverted(repo: Path) -> None:
    code, out, _ = run("drift", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 2
    assert (
        "reverted_by_controller: entity: declared, absent on the cluster: reverted by "
        "Strimzi's Cluster Operator" in out
    )
    assert (
        "reverted_by_controller: producer_byte_rate: desired 4194304 (4 MiB/s), cluster 1 "
        "(1 B/s): reverted by Strimzi's User Operator" in out
    )
    code, md, _ = run("drift", "--cluster", "c1", "--snapshot", "snap.json", "--format", "markdown")
    doc = gfm.assert_aligned(md)
    assert ["reverted by another controller", "2"] in doc.tables()[0].rows


def test_observe_mode_refuses_apply_before_connecting(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(CONFIG.format(extra="    policy: {mode: observe}\n"))
    code, _, err = run("apply", "--cluster", "c1", "--auto-approve")
    assert code == 1
    assert (
        "cluster c1 is in observe mode (policy.mode: observe in kquota.yaml): plan, drift and "
        "export work as usual, apply does not write; set policy.mode: manage to apply" in err
    )
    assert "127.0.0.1:1" not in err  # refused before any connection was tried
    code, out, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 0 and "+ {user=<default>}" in out
    code, _, _ = run("drift", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 2


def test_observe_mode_refuses_the_python_api_too(repo: Path) -> None:
    from kquota.config.project import load_config
    from kquota.operations.apply import ObserveModeError, apply
    from kquota.operations.desired import load_desired_state
    from kquota.target import Target

    (repo / "kquota.yaml").write_text(CONFIG.format(extra="    policy: {mode: observe}\n"))
    cluster = load_config(repo / "kquota.yaml").cluster("c1")
    target = Target(cluster_name="c1", cluster=cluster)
    with pytest.raises(ObserveModeError, match="observe mode"):
        apply(target, load_desired_state([repo / "quotas"]))


def test_bad_platform_names_file_and_line(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        CONFIG.format(extra="").replace("platform: strimzi", "platform: redpanda")
    )
    code, _, err = run("plan", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 1
    assert (
        "kquota.yaml:4:15: clusters.c1.platform: 'redpanda' is not allowed; "
        "allowed: kafka, strimzi" in err
    )


def test_an_observed_scope_is_planned_and_refused_by_apply(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        CONFIG.format(extra='    policy: {observe: [{user: "ord*"}]}\n')
    )
    code, out, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--out", "p.json")
    assert code == 0
    assert (
        "  ! observe mode (policy.observe): this plan alters 1 entities in an observed scope; "
        "apply refuses it" in out
    )
    code, _, err = run("apply", "p.json", "--cluster", "c1", "--auto-approve")
    assert code == 1
    assert (
        "cluster c1: the plan alters 1 entities in an observed scope (policy.observe in "
        "kquota.yaml): {user=orders}; nothing was applied" in err
    )
    assert "127.0.0.1:1" not in err  # a saved plan is refused before any connection


def test_observe_scopes_are_checked_like_scopes(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(CONFIG.format(extra="    policy: {observe: [{team: x}]}\n"))
    code, _, err = run("plan", "--cluster", "c1", "--snapshot", "snap.json")
    assert code == 1
    assert "kquota.yaml:6:23: clusters.c1.policy.observe: " in err
    assert "unknown entity type(s) ['team']" in err
