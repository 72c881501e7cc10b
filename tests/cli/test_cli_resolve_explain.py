"""``kquota resolve --explain`` from a snapshot and from desired state, text and json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import run_kquota
from repo_root import ROOT

SNAPSHOT = ROOT / "examples" / "gitops-repo" / "snapshot-staging.json"


def test_explain_from_a_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["resolve", "--names", "user=alice,client-id=x", "--snapshot", str(SNAPSHOT)]
    code, plain, _ = run_kquota(argv, capsys)
    code, out, err = run_kquota([*argv, "--explain"], capsys)
    assert code == 0 and err == ""
    assert out.startswith(plain)  # the resolution first, as without --explain
    assert "precedence ladder for {user=alice, client-id=x}" in out
    assert "     2  {user=alice, client-id=<default>}      producer_byte_rate=524288" in out
    assert "     1  {user=alice, client-id=x}              (no such entity)" in out
    assert "producer_byte_rate=524288 from level 2 {user=alice, client-id=<default>}:" in out
    assert "    level 6 loses: not in the walk for user tag set and client-id tag set" in out
    assert "consumer_byte_rate=20971520 from level 6 {user=<default>}:" in out
    code, out, _ = run_kquota([*argv, "--explain", "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["explain"]["producer_byte_rate"]["winner"] == "2"
    assert [r["level"] for r in data["ladder"]] == [str(i) for i in range(1, 9)]


def test_explain_from_desired_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {client-id: <default>}\n    set: {request_percentage: 10}\n"
        "  - match: {user: alice, client-id: <default>}\n    set: {request_percentage: 70}\n"
    )
    argv = ["resolve", "--names", "user=alice", "--desired", str(tmp_path), "--explain"]
    code, out, _ = run_kquota(argv, capsys)
    assert code == 0
    # No client-id: {user=alice, client-id=<default>} sets the key, so the broker tracks
    # (alice, no client-id) and walks levels 3 and 6, where nothing is set; the client
    # default (level 8) is not walked either. The surprise is the point of --explain.
    assert "request_percentage=unlimited:\n" in out
    assert (
        "    level 2 sets it, but is not in the walk for user tag set and client-id tag empty"
        in out
    )
    assert "    level 8 sets it, but is not in the walk" in out
