"""``kquota plan`` with a capacity declared in kquota.yaml, offline against a snapshot: on by
default, the capacity guard stopping a plan like the other guards, bad capacity settings
reported with file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 40MiB}
  - match: {user: bob}
    set: {producer_byte_rate: 5MiB}
"""
CONFIG = """\
clusters:
  c1:
    kafka: {bootstrap.servers: "127.0.0.1:1"}
    capacity: {ingress: 10MiB/s, egress: 100MiB/s}
    policy:
      capacity: {max_oversubscription: 3.0}
"""


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(DESIRED)
    (tmp_path / "kquota.yaml").write_text(CONFIG)
    state = {Entity.of({"user": "alice"}): {"producer_byte_rate": 10485760.0}}
    (tmp_path / "snap.json").write_bytes(
        dump_snapshot(state, meta={"cluster": "c1", "cluster_id": "id-1"})
    )
    (tmp_path / "p.txt").write_text("user=alice\nuser=bob\n")
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = str(result.exception) if result.exception and result.exit_code == 1 else ""
    return result.exit_code, result.stdout, result.stderr + err


BASE = ("plan", "--cluster", "c1", "--snapshot", "snap.json", "--principals", "p.txt")


def test_declared_capacity_is_on_by_default_and_the_guard_stops(repo: Path) -> None:
    code, out, err = run(*BASE)
    assert code == 1
    assert out.startswith(
        "STOPPED: capacity guard: producer_byte_rate: known principals' quotas add up to 4.50x"
        " one broker's capacity (was 1.00x), over max_oversubscription=3\n"
    )
    assert "with --allow-oversubscription." in out
    assert "broker facts unknown: offline: a snapshot has no brokers to ask" in out
    assert "capacity guard: producer_byte_rate" in err


def test_the_override_lets_the_plan_through_and_keeps_the_verdict(repo: Path) -> None:
    code, out, _ = run(*BASE, "--allow-oversubscription", "--format", "json")
    assert code == 0
    capacity = json.loads(out)["capacity"]
    assert capacity["oversubscription_allowed"] is True
    assert len(capacity["oversubscription_stops"]) == 1
    code, out, _ = run(*BASE, "--allow-oversubscription", "--out", "plan.json")
    assert code == 0 and "capacity guard (overridden)" in out
    # a saved plan with its capacity report is still a plan apply reads
    from kquota.planfile.reader import PlanFileError, load_plan_file
    from kquota.policy import Policy

    assert load_plan_file(repo / "plan.json", Policy()).alterations
    # a stopped plan saved for review is refused by apply's reader
    code, _, _ = run(*BASE, "--out", "stopped.json")
    assert code == 1
    with pytest.raises(PlanFileError, match="the capacity guard stopped this plan"):
        load_plan_file(repo / "stopped.json", Policy())


def test_no_capacity_leaves_the_plan_as_it_was(repo: Path) -> None:
    code, out, _ = run(*BASE, "--no-capacity", "--format", "json")
    assert code == 0 and "capacity" not in json.loads(out)


def test_capacity_without_a_declared_one_still_sums(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        'clusters:\n  c1:\n    kafka: {bootstrap.servers: "127.0.0.1:1"}\n'
    )
    code, out, _ = run(*BASE, "--format", "json")
    assert code == 0 and "capacity" not in json.loads(out)
    code, out, _ = run(*BASE, "--capacity", "--format", "json")
    assert code == 0
    rows = {k["key"]: k for k in json.loads(out)["capacity"]["keys"]}
    assert rows["producer_byte_rate"]["capacity"] is None
    assert rows["producer_byte_rate"]["after"]["sum"] == 45 * 1024 * 1024


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("capacity: {ingress: 10XB/s}", "kquota.yaml:4:25: clusters.c1.capacity.ingress: "),
        (
            "capacity: {ingress: -1}",
            "kquota.yaml:4:25: clusters.c1.capacity.ingress: -1 is out of range; "
            "allowed: a number more than 0",
        ),
        (
            "capacity: {ingres: 1}",
            "kquota.yaml:4:16: clusters.c1.capacity.ingres: unknown field 'ingres'; "
            "allowed: ingress, egress, disk_write",
        ),
        (
            "policy: {capacity: {max_oversubscription: 0}}",
            "kquota.yaml:4:47: clusters.c1.policy.capacity.max_oversubscription: ",
        ),
    ],
)
def test_bad_capacity_settings_name_file_and_line(repo: Path, setting: str, said: str) -> None:
    (repo / "kquota.yaml").write_text(
        f'clusters:\n  c1:\n    kafka: {{bootstrap.servers: "127.0.0.1:1"}}\n    {setting}\n'
    )
    code, _, err = run(*BASE)
    assert code == 1
    assert said in err


@pytest.mark.parametrize(
    ("bob", "stops"),
    [("10MiB", False), ("10485761", True)],
    ids=["exactly-the-maximum", "one-byte-over"],
)
def test_the_guard_stops_above_the_maximum_not_at_it(repo: Path, bob: str, stops: bool) -> None:
    # alice 20 MiB + bob against 10 MiB of ingress: 3.00x is the maximum itself, allowed
    # ("above the maximum" stops, docs/capacity.md); one byte more is above it.
    (repo / "quotas" / "main.yaml").write_text(
        DESIRED.replace("40MiB", "20MiB").replace("5MiB", bob)
    )
    code, out, err = run(*BASE, "--format", "json")
    capacity = json.loads(out)["capacity"]
    (row,) = [k for k in capacity["keys"] if k["key"] == "producer_byte_rate"]
    assert row["after"]["sum"] == 20 * 1024 * 1024 + (10 * 1024 * 1024 + stops)
    if stops:
        assert code == 1
        assert capacity["oversubscription_stops"] == [
            "producer_byte_rate: known principals' quotas add up to 3.00x one broker's "
            "capacity (was 1.00x), over max_oversubscription=3"
        ]
    else:
        assert code == 0, err
        assert capacity["oversubscription_stops"] == []
