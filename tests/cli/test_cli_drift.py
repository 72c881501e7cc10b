"""``kquota drift --all`` reads every cluster's local files before it connects to any."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_apply import HEADER, FakeListener, fake_listener  # noqa: F401 (fixture)

from cli_runner import run_kquota


def test_drift_all_checks_every_clusters_files_before_connecting(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    kafka = f"{{bootstrap.servers: '{fake_listener.address}', retries: '0'}}"
    Path("kquota.yaml").write_text(
        "clusters:\n"
        f"  a:\n    kafka: {kafka}\n    desired: [good]\n"
        f"  b:\n    kafka: {kafka}\n    desired: [bad]\n"
    )
    for name, entry in (("good", "{user: a}, set: {producer_byte_rate: 1}"), ("bad", "[")):
        Path(name).mkdir()
        Path(name, "main.yaml").write_text(HEADER + f"  - {{match: {entry}}}\n")
    code, _, err = run_kquota(["drift", "--all"], capsys)
    assert code == 1
    # b's bad YAML is reported first (as YAML), then a's connection failure.
    bad = err.index(f"error: cluster b: {tmp_path / 'bad' / 'main.yaml'}:4:")
    unreachable = err.index("error: cluster a:")
    assert bad < unreachable
    assert fake_listener.accepted >= 1  # a was tried; b never was (its files failed)
