"""``kquota apply --result FILE``: the outcome as JSON, whatever the outcome.

Against a real broker: an apply (``applied``, each committed entity with its ops and their
direction, verified), the same again (``nothing to do``), and a plan the mass-removal guard
stops (``refused``: its words, nothing committed). Without one: a doctored plan refused
before any connection, and an output that would replace the input refused.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
CORPUS = Path(__file__).parents[1] / "planfile" / "plan_corpus"


@pytest.mark.integration
def test_applied_then_nothing_to_do_then_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = f"r{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    Path("kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        f"    policy: {{scope: [{{user: '{prefix}*'}}], prune: true, max_removals: 1}}\n"
    )
    Path("quotas").mkdir()
    rows = "".join(
        f"  - {{match: {{user: {prefix}{n}}}, set: {{producer_byte_rate: 8MiB}}}}\n"
        for n in ("a", "b", "c")
    )
    Path("quotas/main.yaml").write_text(HEADER + rows)
    argv = ["apply", "--cluster", "local", "--auto-approve", "--result", "r.json"]
    code, out, err = run_kquota(argv, capsys)
    assert code == 0, out + err
    result = json.loads(Path("r.json").read_text())
    assert result["outcome"] == "applied" and result["exit_code"] == 0
    assert result["error"] is None and result["cluster"] == "local" and result["total"] == 3
    assert result["verified"] is True and result["audit"] is None
    assert sorted(c["entity"]["user"] for c in result["committed"]) == [
        f"{prefix}a",
        f"{prefix}b",
        f"{prefix}c",
    ]
    op = result["committed"][0]["ops"][0]
    assert op["direction"] == "new" and op["value"] == 8 * 1048576 and op["percent"] is None

    code, out, err = run_kquota(argv, capsys)
    assert code == 0 and "nothing to apply" in out, out + err
    result = json.loads(Path("r.json").read_text())
    assert result["outcome"] == "nothing to do" and result["committed"] == []

    # Lower one, remove two: the mass-removal guard (max_removals: 1) stops it.
    Path("quotas/main.yaml").write_text(
        HEADER + f"  - {{match: {{user: {prefix}a}}, set: {{producer_byte_rate: 2MiB}}}}\n"
    )
    code, out, err = run_kquota(argv, capsys)
    assert code == 1
    result = json.loads(Path("r.json").read_text())
    assert result["outcome"] == "refused" and result["committed"] == []
    assert result["error"] and "max_removals=1" in result["error"]
    assert result["error"] in err


def test_a_doctored_plan_is_refused_in_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    doctored = CORPUS / "unknown_top_field.json"
    argv = ["apply", str(doctored), "--bootstrap-server", "127.0.0.1:1", "--auto-approve"]
    code, _, err = run_kquota([*argv, "--result", "r.json"], capsys)
    assert code == 1
    result = json.loads(Path("r.json").read_text())
    assert result["outcome"] == "refused" and result["exit_code"] == 1
    assert result["total"] is None and result["committed"] == []
    assert "unknown field" in result["error"] and result["error"] in err


def test_the_result_never_replaces_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes((CORPUS / "good.json").read_bytes())
    argv = ["apply", str(plan), "--auto-approve", "--result", str(plan)]
    code, _, err = run_kquota(argv, capsys)
    assert code == 1 and "an output never replaces an input" in err
    assert plan.read_bytes() == (CORPUS / "good.json").read_bytes()
