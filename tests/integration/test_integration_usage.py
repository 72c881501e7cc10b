"""``kquota usage`` and ``kquota recommend`` against the real broker: the effective quotas
come from a live describe, and the recommended patch plans against the live cluster."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.usage.rows import PRODUCE_BYTE_RATE
from polling import eventually
from sample_rows import series, week, write_jsonl

pytestmark = pytest.mark.integration

MiB = 1024 * 1024


def test_usage_and_recommend_against_a_live_cluster(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    user = f"usage-{secrets.token_hex(3)}"
    code, _, err = run_kquota(
        ["alter", *b, "--names", f"user={user}", "--add", f"producer_byte_rate={10 * MiB}"],
        capsys,
    )
    assert code == 0, err
    write_jsonl(
        tmp_path / "s.jsonl",
        series(user, None, PRODUCE_BYTE_RATE, week(2 * MiB), cluster="live"),
    )
    usage = ["usage", *b, "--samples", "s.jsonl", "--format", "json"]

    def fetch() -> dict[str, object]:
        code, out, err = run_kquota(usage, capsys)
        assert code == 0, err
        [row] = json.loads(out)["usage"]
        assert isinstance(row, dict)
        return row

    # a describe trails the alter before it
    row = eventually(fetch, lambda r: r["quota"] is not None)
    assert (row["quota"], row["quota_source"], row["utilisation_p99"]) == (
        10 * MiB,
        {"user": user},
        0.2,
    )
    code, _, err = run_kquota(
        ["recommend", *b, "--samples", "s.jsonl", "--keys", "producer_byte_rate",
         "--out", "patch.yaml"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert (
        f"  - match: {{user: {user}}}\n    set: {{producer_byte_rate: 3MiB}}\n"
        in (tmp_path / "patch.yaml").read_text()
    )
    code, out, err = run_kquota(["plan", *b, "--no-prune", "patch.yaml"], capsys)
    assert code == 0, err
    assert (
        f"~ {{user={user}}}\n    ~ producer_byte_rate: 10485760 (10 MiB/s) -> 3145728 (3 MiB/s), "
        "lower by 70%\n"
    ) in out
    assert "Plan: 0 to create, 1 to update, 0 to delete" in out
