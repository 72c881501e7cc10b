"""``plan --usage`` against a real broker: the quota window the replay uses is the broker's
own ``quota.window.num`` x ``quota.window.size.seconds``, read with DescribeConfigs (issue 30)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo

pytestmark = pytest.mark.integration

P = "producer_byte_rate"


def test_plan_usage_reads_the_quota_window_from_the_broker(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    user = f"replay-{time.monotonic_ns()}"
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: {user}}}, set: {{{P}: 1000}}}}\n"
    )
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  dev:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        "    quota_window: {num: 99, size_seconds: 9}\n"  # the brokers' own come first
        "    policy: {usage: {max_throttled_fraction: 0.5}}\n"
    )
    now = int(time.time() * 1000)
    rows = [
        {
            "cluster": "dev",
            "broker": "1",
            "user": user,
            "client_id": None,
            "metric": "produce-byte-rate",
            "timestamp_ms": now - ago * 60_000,
            "value": 3000.0,
        }
        for ago in (3, 2, 1)
    ]
    (tmp_path / "usage.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = ["plan", "--cluster", "dev", "--usage", "usage.jsonl", "--format", "json"]
    code, out, err = run_kquota(plan, capsys)
    assert code == 1, err  # 100% of the observed time over 1000 B/s: the guard stops it
    replay = json.loads(out)["throttle_replay"]
    assert replay["window"] == {"num": 11, "size_seconds": 1, "source": "read from the brokers"}
    (p,) = replay["principals"]
    assert p["throttled_after"]["throttled_fraction"] == 1.0
    # QuotaUtils.throttleTime: (3000 - 1000) / 1000 x the broker's 11 s window
    assert p["throttled_after"]["throttle_time_ms_at_peak"] == pytest.approx(22_000)
    assert "throttle guard: {user=" in err
