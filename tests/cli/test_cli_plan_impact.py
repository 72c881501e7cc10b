"""``kquota plan --impact / --principals FILE / --protect`` offline, against a snapshot."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli
from kquota.model import Entity
from kquota.plan.guard import judge
from kquota.planfile.reader import load_plan_file
from kquota.policy import Policy, ProtectMatch
from kquota.snapshot.files import dump_snapshot

GOLDEN = Path(__file__).parent / "golden"
DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: <default>}
    set: {producer_byte_rate: 1MiB}
  - match: {user: bob}
    set: {producer_byte_rate: 4MiB}
"""
PRINCIPALS = "# who uses the cluster\nuser=alice\nuser=bob,client-id=x\nuser=svc-etl\n"


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(DESIRED)
    state = {
        Entity.of({"user": "alice"}): {"producer_byte_rate": 1048576.0},
        Entity.of({"user": "bob"}): {"producer_byte_rate": 4194304.0},
    }
    (tmp_path / "snap.json").write_bytes(
        dump_snapshot(state, meta={"cluster": "c1", "cluster_id": "id-1"})
    )
    (tmp_path / "p.txt").write_text(PRINCIPALS)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = str(result.exception) if result.exception and result.exit_code == 1 else ""
    return result.exit_code, result.stdout, result.stderr + err


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("KQUOTA_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_impact_section_is_golden(repo: Path, fmt: str) -> None:
    code, out, _ = run(
        "plan", "--snapshot", "snap.json", "--prune", "--allow-mass-removal",
        "--impact", "--principals", "p.txt", "--format", fmt,
    )  # fmt: skip
    assert code == 0
    _golden(f"plan_impact.{'md' if fmt == 'markdown' else 'txt'}", out)


def test_offline_sources_say_why_they_could_not_look(repo: Path) -> None:
    code, out, _ = run("plan", "--snapshot", "snap.json", "--impact")
    assert code == 0
    for source in ("scram-users", "acl-principals", "group-members"):
        assert f"{source}: could not look: offline: plan against a snapshot" in out
    assert "Impact: no effective quota changes for the 0 principals resolved." in out


def test_json_impact_is_additive(repo: Path) -> None:
    code, out, _ = run(
        "plan", "--snapshot", "snap.json", "--principals", "p.txt", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["impact"] == [
        {
            "principal": {"user": "svc-etl"},
            "key": "producer_byte_rate",
            "before": {"value": None, "source": None},
            "after": {"value": 1048576.0, "source": {"user": None}},
        }
    ]
    # --principals alone: only the file is a source, live discovery was not asked for.
    assert data["impact_sources"] == [{"source": "file:p.txt", "found": 3, "reason": None}]
    assert data["impact_principals"] == 3 and data["quota_callback"] is None
    _, plain, _ = run("plan", "--snapshot", "snap.json", "--format", "json")
    assert not {"impact", "impact_sources", "protected_violations"} & set(json.loads(plain))


def test_protected_principal_stops_the_plan(repo: Path) -> None:
    code, out, err = run(
        "plan", "--snapshot", "snap.json", "--principals", "p.txt",
        "--protect", "user=svc-*", "--out", "plan.json",
    )  # fmt: skip
    assert code == 1
    assert (
        "protected principals: {user=svc-etl} producer_byte_rate: unlimited -> 1048576 (1 MiB/s) "
        "from {user=<default>}; saved in plan.json for review only" in err
    )
    assert out.startswith(
        "STOPPED: protected principals: the plan lowers or newly imposes their quotas:\n"
        "  {user=svc-etl} producer_byte_rate: unlimited -> 1048576 (1 MiB/s) "
        "from {user=<default>}\n"
    )
    assert "Apply it only after review, with --allow-protected-change." in out
    # Kept for review: apply names the protected principals again and rechecks them live.
    saved = json.loads((repo / "plan.json").read_text())
    assert saved["impact"][0]["principal"] == {"user": "svc-etl"}
    code, out, _ = run(
        "plan", "--snapshot", "snap.json", "--principals", "p.txt", "--protect", "user=svc-*",
        "--allow-protected-change", "--out", "plan.json",
    )  # fmt: skip
    assert code == 0 and "Protected-principals guard overridden" in out


def test_protected_exact_name_needs_no_principals_file(repo: Path) -> None:
    code, _, err = run("plan", "--snapshot", "snap.json", "--protect", "user=carol")
    assert code == 1 and "{user=carol} producer_byte_rate: unlimited -> 1048576" in err


def test_policy_protect_in_kquota_yaml(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        "clusters:\n  c1:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
        "    policy:\n      protect: [{user: dave}]\n"
    )
    code, _, err = run("plan", "--snapshot", "snap.json", "--cluster", "c1")
    assert code == 1 and "{user=dave} producer_byte_rate" in err
    (repo / "kquota.yaml").write_text(
        "clusters:\n  c1:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
        "    policy:\n      protect: [{group: dave}]\n"
    )
    code, _, err = run("plan", "--snapshot", "snap.json", "--cluster", "c1")
    assert code == 1 and "kquota.yaml" in err and "unknown principal type 'group'" in err


@pytest.mark.parametrize(
    ("flag", "wrong"),
    [("user", "expected TYPE=NAME"), ("user=<default>", "not a principal"), ("x=1", "unknown")],
)
def test_bad_protect_is_a_usage_error(repo: Path, flag: str, wrong: str) -> None:
    code, _, err = run("plan", "--snapshot", "snap.json", "--protect", flag)
    assert code != 0 and wrong in err and "Traceback" not in err


def test_hostile_principals_file_exits_1_without_traceback(repo: Path) -> None:
    (repo / "bad.txt").write_text("user=a\nuser=b,\x1b[31m\n")
    code, out, err = run("plan", "--snapshot", "snap.json", "--principals", "bad.txt")
    assert code == 1 and out == ""
    assert "bad.txt:2:1: expected type=name pairs" in err and "Traceback" not in err


def test_saved_plan_with_impact_loads_and_is_rechecked(repo: Path) -> None:
    code, _, _ = run(
        "plan", "--snapshot", "snap.json", "--principals", "p.txt", "--out", "plan.json",
    )  # fmt: skip
    assert code == 0
    plan = load_plan_file(repo / "plan.json", Policy())
    assert plan.impact is not None
    assert [p.user for p in plan.impact.resolved] == ["svc-etl"]
    # At apply the verdict is recounted under the policy in force, against the live state:
    # the file's own (empty) verdict counts for nothing.
    live = {Entity.of({"user": "bob"}): {"producer_byte_rate": 4194304.0}}
    policy = Policy(protect=(ProtectMatch.of({"user": "svc-*"}),))
    rechecked = judge(plan, policy, live)
    assert rechecked.refusal is not None and "{user=svc-etl}" in rechecked.refusal
