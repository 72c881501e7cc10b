"""``kquota lease``: what it refuses before connecting (the broker-backed behaviour is in
tests/integration/test_integration_lease.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_runner import run_kquota


def test_lease_offers_status_and_release_with_the_live_targeting_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_kquota(["lease", "--help"], capsys)
    assert code == 0 and "status" in out and "release" in out
    for sub in ("status", "release"):
        code, out, _ = run_kquota(["lease", sub, "--help"], capsys)
        assert code == 0
        for option in ("--cluster", "--bootstrap-server", "--command-config", "--timeout"):
            assert option in out, (sub, option)
        assert "--snapshot" not in out
    code, out, _ = run_kquota(["lease", "release", "--help"], capsys)
    assert "--force ID" in out and "--auto-approve" in out


def test_without_a_cluster_it_says_how_to_name_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no kquota.yaml here
    code, _, err = run_kquota(["lease", "status"], capsys)
    assert code == 1
    assert err == (
        "error: which cluster's apply lease? give --cluster NAME (from kquota.yaml) or "
        "--bootstrap-server HOST:PORT (with --command-config FILE for credentials)\n"
    )


def test_release_without_a_terminal_needs_auto_approve_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Port 9 (discard) on loopback: nothing is asked of it, the refusal comes first.
    argv = ["lease", "release", "--force", "abc", "--bootstrap-server", "127.0.0.1:9"]
    code, _, err = run_kquota(argv, capsys)
    assert code == 1
    assert "not releasing the apply lease without confirmation: there is no terminal" in err
    assert "pass --auto-approve" in err


def test_a_bad_timeout_is_refused_with_the_option_named(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["lease", "status", "--bootstrap-server", "127.0.0.1:9", "--timeout", "soon"]
    code, _, err = run_kquota(argv, capsys)
    # The wording of duration errors is the duration parser's; the option is named either way.
    assert code == 1 and "--timeout" in err and "soon" in err and "Traceback" not in err
