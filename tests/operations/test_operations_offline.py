"""The operations against a snapshot file: the same results the commands render, no printing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kquota.errors import UsageError
from kquota.operations import (
    check_drift,
    load_desired_state,
    make_plan,
    resolve_quotas,
    validate_desired,
)
from kquota.plan.resolver import Principal
from kquota.target import Target
from offline_cluster import ALICE, IP_LOOK_ALIKES, desired_folder, snapshot_target

YAML = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 2MiB}
"""


@pytest.fixture
def target(tmp_path: Path) -> Target:
    state = {
        ALICE: {"producer_byte_rate": 1048576.0},
        **IP_LOOK_ALIKES,
    }
    return snapshot_target(tmp_path, state)


@pytest.fixture
def desired(tmp_path: Path) -> Path:
    return desired_folder(tmp_path, YAML)


def test_make_plan_stamps_the_plan_and_returns_warnings_instead_of_printing(
    target: Target, desired: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = Principal(user="alice", client_id="app")
    result = make_plan(target, load_desired_state([desired]), principals=[alice])
    assert [a.entity for a in result.plan.alterations] == [ALICE]
    assert (result.plan.cluster, result.plan.cluster_id) == ("c1", "id-1")
    assert result.plan.desired_digest and result.plan.created_at
    assert [(c.key, c.after.value if c.after else None) for c in result.changes] == [
        ("producer_byte_rate", 2097152.0)
    ]
    assert len(result.warnings) == 1 and "one ip address" in result.warnings[0]
    assert capsys.readouterr() == ("", "")


def test_check_drift_reports_the_changed_value(target: Target, desired: Path) -> None:
    result = check_drift(target, load_desired_state([desired]))
    assert result.report.drifted
    assert [f.entity for f in result.report.findings] == [ALICE]


def test_resolve_quotas_from_the_target_or_the_desired_state(target: Target, desired: Path) -> None:
    alice = Principal(user="alice")
    now = resolve_quotas(target, alice)
    planned = resolve_quotas(load_desired_state([desired]), alice)
    assert [(q.key, q.value) for q in now.quotas] == [("producer_byte_rate", 1048576.0)]
    assert [(q.key, q.value) for q in planned.quotas] == [("producer_byte_rate", 2097152.0)]


def test_validate_desired_returns_problems_and_warnings_instead_of_raising(
    desired: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (desired / "q.yaml.bak").write_text(YAML)  # a look-alike: warned, not read
    (ok,) = validate_desired([desired])
    assert (ok.ok, ok.entities, ok.files, ok.cluster) == (True, 1, 1, None)
    assert any("q.yaml.bak" in str(w) for w in ok.warnings)
    (desired / "q.yaml").write_text(YAML.replace("2MiB", "-1"))
    (bad,) = validate_desired([desired])
    assert not bad.ok and bad.entities == 0
    assert [str(p).split(": ")[0] for p in bad.problems] == [f"{desired / 'q.yaml'}:5:31"]
    assert any("q.yaml.bak" in str(w) for w in bad.warnings)
    assert capsys.readouterr() == ("", "")


def test_validate_desired_without_paths_checks_each_configured_cluster(
    tmp_path: Path, desired: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    with pytest.raises(UsageError, match="no PATHS given, no kquota.yaml and no quotas/"):
        validate_desired()
    monkeypatch.chdir(tmp_path)  # no kquota.yaml here, but quotas/
    assert [(r.cluster, r.paths, r.entities) for r in validate_desired()] == [
        (None, (Path("quotas"),), 1)
    ]
    other = tmp_path / "other"
    other.mkdir()
    (other / "q.yaml").write_text(YAML.replace("2MiB", "0"))
    (tmp_path / "k.yaml").write_text(
        "clusters:\n"
        "  a: {kafka: {bootstrap.servers: 'a:1'}, desired: [quotas]}\n"
        "  b: {kafka: {bootstrap.servers: 'b:1'}, desired: [other]}\n"
    )
    results = validate_desired(config=tmp_path / "k.yaml")
    assert [(r.cluster, r.ok) for r in results] == [("a", True), ("b", False)]


def test_make_plan_replays_usage_rows_and_refuses_what_is_no_row(
    target: Target, desired: Path
) -> None:
    from kquota.usage.rows import PRODUCE_BYTE_RATE, Sample

    rows = [Sample("c1", "1", "alice", None, PRODUCE_BYTE_RATE, t, 1.5e6) for t in (0, 60_000)]
    loaded = load_desired_state([desired])
    replay = make_plan(target, loaded, usage=iter(rows), usage_source="rows").plan.replay
    assert replay is not None and replay.source == "rows"
    (r,) = replay.replayed
    assert (r.before.fraction, r.after.fraction) == (1.0, 0.0)  # 1 MiB -> 2 MiB, at ~1.4 MiB/s
    with pytest.raises(UsageError, match="make_plan: usage must be an iterable of kquota Sample"):
        make_plan(target, loaded, usage=5)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="usage rows must be kquota.usage.rows.Sample, not"):
        make_plan(target, loaded, usage=[("c1", "1")])  # type: ignore[list-item]
