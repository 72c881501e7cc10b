"""apply --ramp against a real broker: a sharp lowering seen on the cluster step by step.

The ramped apply runs as its own process (the console script) while this test reads the
broker every 50 ms with a separate client, so each step's value is observed on the cluster
itself, not taken from kquota's report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity, QuotaState
from polling import served
from rollout_kit import Project, ended, kquota_process, project, read_until, user_quota, watch

pytestmark = pytest.mark.integration

RAMP = ("apply", "--ramp", "plan.json", "--cluster", "local", "--auto-approve")


def _ramp_project(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
    letter: str,
    *,
    audit: bool = True,
) -> Project:
    """A project whose policy ramps at 0.5, its user ``a`` applied at 8000 (or 800), then a
    plan saved that lowers it to 1000 (or 100): three steps."""
    repo = project(
        tmp_path, monkeypatch, kafka_broker.bootstrap_servers, capsys, letter,
        audit_partitions=1 if audit else 0,
    )  # fmt: skip
    repo.configure(
        {"prune": "true", "scope": f"[{{user: '{repo.prefix}*'}}]", "ramp": "{max_step: 0.5}"}
    )
    return repo


def _plan_lowering(repo: Project, before: float, after: float, *extra: str) -> str:
    repo.write([user_quota(f"{repo.prefix}a", producer_byte_rate=before)])
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    repo.write([user_quota(f"{repo.prefix}a", producer_byte_rate=after), *extra])
    code, out, err = repo.kquota("plan", "--out", "plan.json")
    assert code == 0, out + err
    return out


def _rate(repo: Project, user: str) -> Callable[[QuotaState], float | None]:
    entity = Entity.of({"user": f"{repo.prefix}{user}"})
    return lambda state: state.get(entity, {}).get("producer_byte_rate")


def test_ramp_steps_are_observed_on_the_broker_one_by_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _ramp_project(tmp_path, monkeypatch, kafka_broker, capsys, "m")
    p, topic = repo.prefix, repo.topic
    out = _plan_lowering(repo, 8000, 1000, user_quota(f"{p}b", consumer_byte_rate=64))
    assert "ramp: 3 steps, each lowering a quota to at least 0.5 of its value before" in out
    assert f"{{user={p}a}} producer_byte_rate: 8000 → 4000 → 2000 → 1000" in out

    a, b = Entity.of({"user": f"{p}a"}), Entity.of({"user": f"{p}b"})

    def both(state: QuotaState) -> tuple[float | None, float | None]:
        return (
            state.get(a, {}).get("producer_byte_rate"),
            state.get(b, {}).get("consumer_byte_rate"),
        )

    with ended(kquota_process([*RAMP, "--ramp-interval", "3s", "--timeout", "90s"])) as proc:
        seen = watch(repo.bootstrap, both, proc)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    # The schedule is shown first, then every step goes the apply road.
    assert f"{{user={p}a}} producer_byte_rate: 8000 → 4000 → 2000 → 1000" in out
    assert "ramp step 1 of 3:" in out and "ramp step 3 of 3:" in out
    assert "resuming" not in out  # a fresh ramp starts at its first step
    assert out.count("verified: the cluster shows every committed change") == 3
    assert "ramp: 3 of 3 steps applied" in out
    # Every step is an apply of its own, audited as it lands.
    assert out.count(f"events confirmed on topic {topic}") == 3
    code, hist, err = repo.kquota("history", "--entity", f"user={p}a")
    assert code == 0, hist + err
    assert [line.strip() for line in hist.splitlines() if "→" in line] == [
        "producer_byte_rate: unset → 8000 (7.81 KiB/s)",
        "producer_byte_rate: 8000 (7.81 KiB/s) → 4000 (3.91 KiB/s)",
        "producer_byte_rate: 4000 (3.91 KiB/s) → 2000 (1.95 KiB/s)",
        "producer_byte_rate: 2000 (1.95 KiB/s) → 1000 (1000 B/s)",
    ]

    # The three steps are undone together: every key back to its value before the ramp.
    code, hist, err = repo.kquota("history", "--format", "json")
    steps = [a["plan_id"] for a in json.loads(hist)["applies"]][-3:]
    revert = ["revert", *(x for s in reversed(steps) for x in ("--plan-id", s)), "--out", "u.json"]
    code, out, err = repo.kquota(*revert)
    # No audit_signing in this project: its events cannot be verified, and revert says so.
    assert code == 1 and "its 4 events cannot be verified" in err, out + err
    code, out, err = repo.kquota(*revert, "--allow-unsigned")
    assert code == 0, out + err
    assert f"revert of apply {'+'.join(steps)}" in out
    code, out, err = repo.kquota(
        "apply", "u.json", "--cluster", "local", "--auto-approve", "--allow-mass-removal"
    )
    assert code == 0, out + err
    with WireAdmin(repo.bootstrap) as admin:
        state = admin.describe_all()
    assert state.get(a) == {"producer_byte_rate": 8000.0} and b not in state
    # Observed on the broker: each value in turn, the created quota with the first step.
    # (The first step commits both entities in one request, so no state between is seen.)
    assert seen == [(8000.0, None), (4000.0, 64.0), (2000.0, 64.0), (1000.0, 64.0)]


def test_a_ramp_cut_short_goes_on_from_the_step_the_cluster_holds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _ramp_project(tmp_path, monkeypatch, kafka_broker, capsys, "u")
    p = repo.prefix
    _plan_lowering(repo, 8000, 1000)
    # The deadline cuts the ramp after step 1: the wait before step 2 (10 minutes) cannot
    # fit in what is left of --timeout, so it stops there, on demand, at a step boundary.
    code, out, err = repo.kquota(*RAMP, "--ramp-interval", "10m", "--timeout", "2m")
    assert code == 1, out + err
    assert "ramp step 1 of 3:" in out and "ramp step 2 of 3:" not in out
    assert "the --timeout 2m deadline ran out" in err
    assert repo.quota("a") == {"producer_byte_rate": 4000.0}
    # The saved plan as such is stale now: a plain apply refuses it.
    code, out, err = repo.kquota("apply", "plan.json", "--cluster", "local", "--auto-approve")
    assert code == 1 and "saved plan is stale" in err

    # Run again: it goes on from step 2, each step seen on the broker in turn.
    argv = [*RAMP, "--ramp-interval", "3s", "--timeout", "90s"]
    with ended(kquota_process(argv)) as proc:
        seen = watch(repo.bootstrap, _rate(repo, "a"), proc)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert "ramp: the cluster holds step 1 of 3; resuming at step 2" in out
    assert "ramp step 1 of 3:" not in out
    assert "ramp step 2 of 3:" in out and "ramp step 3 of 3:" in out
    assert "ramp: 3 of 3 steps applied (steps 2 to 3 by this run)" in out
    assert seen == [4000.0, 2000.0, 1000.0]  # no step bigger than the policy allows
    code, hist, err = repo.kquota("history", "--entity", f"user={p}a")
    assert [line.strip() for line in hist.splitlines() if "→" in line][1:] == [
        "producer_byte_rate: 8000 (7.81 KiB/s) → 4000 (3.91 KiB/s)",
        "producer_byte_rate: 4000 (3.91 KiB/s) → 2000 (1.95 KiB/s)",
        "producer_byte_rate: 2000 (1.95 KiB/s) → 1000 (1000 B/s)",
    ]

    # A ramp that is all on the cluster has nothing left to do, and claims no step.
    code, out, err = repo.kquota(*RAMP, "--timeout", "60s")
    assert code == 0, out + err
    assert "the cluster already holds the plan's final values" in out
    assert "ramp step" not in out and "steps applied" not in out


def test_ramp_is_refused_before_connecting_without_a_saved_plan_or_a_factor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kquota.plan.types import Alteration, ChangeKind, Op, Plan
    from kquota.planfile.writer import write_plan_file

    # Port 1 answers nothing: reaching the cluster would fail differently.
    repo = project(tmp_path, monkeypatch, "127.0.0.1:1", capsys, "z")
    repo.configure({})
    repo.write([])
    plan = Plan(
        alterations=(
            Alteration(
                Entity.of({"user": "a"}),
                (Op("producer_byte_rate", 1.0, False, 8.0),),
                ChangeKind.UPDATE,
            ),
        ),
        cluster="local",
        cluster_id="id",
        snapshot_fingerprint="sha256:" + "0" * 64,
    )
    assert write_plan_file(plan, tmp_path / "plan.json") == []
    code, out, err = repo.kquota("apply", "--ramp", "--cluster", "local", "--auto-approve")
    assert code == 1 and "--ramp applies a saved plan" in err
    code, out, err = repo.kquota(*RAMP)
    assert code == 1 and "--ramp needs policy.ramp.max_step" in err


def test_a_ramp_stops_when_the_cluster_moves_between_steps(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _ramp_project(tmp_path, monkeypatch, kafka_broker, capsys, "d", audit=False)
    _plan_lowering(repo, 800, 100)
    a = Entity.of({"user": f"{repo.prefix}a"})
    lines: list[str] = []
    argv = [*RAMP, "--ramp-interval", "6s", "--timeout", "90s"]
    with ended(kquota_process(argv)) as proc:
        # Step 1 is committed and verified when its report says so; the wait starts then.
        read_until(proc.stdout, "verified: the cluster shows", lines)
        with WireAdmin(repo.bootstrap) as admin:
            assert admin.describe_all().get(a) == {"producer_byte_rate": 400.0}
            # Someone else moves the quota while the ramp waits.
            (done,) = admin.alter(
                [QuotaAlteration(a, (QuotaOp("producer_byte_rate", 300.0, False),))],
                validate_only=False,
            )
            assert done.ok
        rest, err = proc.communicate(timeout=60)
        out = "".join(lines) + rest
    assert proc.returncode == 1, out + err
    assert "ramp stopped after step 1 of 3: the cluster no longer shows what the step set" in err
    assert f"{{user={repo.prefix}a}}: producer_byte_rate is 300, step set 400" in err
    assert "ramp step 2 of 3" not in out
    assert repo.quota("a") == {"producer_byte_rate": 300.0}


def test_a_ramp_finding_its_final_values_says_someone_else_put_them_there(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _ramp_project(tmp_path, monkeypatch, kafka_broker, capsys, "s", audit=False)
    _plan_lowering(repo, 800, 100)
    a = Entity.of({"user": f"{repo.prefix}a"})
    with WireAdmin(repo.bootstrap) as admin:  # someone else, in one go
        (done,) = admin.alter(
            [QuotaAlteration(a, (QuotaOp("producer_byte_rate", 100.0, False),))],
            validate_only=False,
        )
        assert done.ok
    # The ramp is to find the final values: run it once the broker serves them (a describe
    # trails the controller; a ramp run before that reads 800 and is refused as stale at
    # step 1, which is right for it but not this test's case).
    final = {"producer_byte_rate": 100.0}
    served(repo.bootstrap, {a: final})
    # Named by its servers (spaced, twice), the cluster's ramp policy applies all the same.
    servers = f" {repo.bootstrap} , {repo.bootstrap}"
    for where in (("--cluster", "local"), ("--bootstrap-server", servers)):
        argv = ["apply", "--ramp", "plan.json", *where, "--auto-approve", "--timeout", "60s"]
        code, out, err = repo.kquota(*argv)
        assert code == 0, out + err
        assert (
            "ramp: the cluster already holds the plan's final values: someone else put them "
            "there (another apply, or an earlier run of this ramp); this run applied no step"
        ) in out
        assert "steps applied" not in out and "ramp step" not in out
    assert repo.quota("a") == final
