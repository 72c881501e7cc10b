"""``kquota drift``: ``--all`` reads every cluster's local files before it connects to any;
a report says what an undeclared entity holds, marks protected principals, and ends with the
next step."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from test_cli_apply import HEADER, FakeListener, fake_listener  # noqa: F401 (fixture)

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tools import kafka_configs
from kquota.model import Entity
from polling import served


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


def test_drift_shows_undeclared_values_protected_principals_and_the_next_step(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Against a real broker, written with Kafka's own kafka-configs: an undeclared entity
    shows what it holds, a protected principal's entity is marked, and the report ends with
    what to do (apply to repair, export to adopt)."""
    tok = secrets.token_hex(3)
    svc, old = f"drift-{tok}-svc", f"drift-{tok}-old"
    for user, setting in ((svc, "request_percentage=40"), (old, "producer_byte_rate=2048")):
        done = kafka_configs(kafka_broker, "--alter", "--add-config", setting, "--user", user)
        assert done.returncode == 0, done.stderr
    held = {
        Entity.of({"user": svc}): {"request_percentage": 40.0},
        Entity.of({"user": old}): {"producer_byte_rate": 2048.0},
    }
    served(kafka_broker.bootstrap_servers, held)  # a describe trails the alter
    monkeypatch.chdir(tmp_path)
    Path("quotas").mkdir()
    Path("quotas", "q.yaml").write_text(
        HEADER + f"  - {{match: {{user: {svc}}}, set: {{request_percentage: 50}}}}\n"
    )

    def config(prune: str) -> None:
        Path("kquota.yaml").write_text(
            "clusters:\n  dev:\n"
            f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
            f"    policy: {{scope: [{{user: 'drift-{tok}-*'}}], prune: {prune}, "
            f"protect: [{{user: {svc}}}]}}\n"
        )

    config("true")
    code, out, err = run_kquota(["drift", "--cluster", "dev"], capsys)
    assert code == 2, err
    assert out.splitlines() == [
        "dev: drift in 2 entities (2 findings)",
        f"  {{user={old}}}",
        "    entity_undeclared: entity not declared (in scope, prune on): the cluster has "
        "producer_byte_rate 2048 (2 KiB/s)",
        f"  {{user={svc}}} (protected principal)",
        "    value_changed: request_percentage: cluster 40, desired 50",
        "  totals: value_changed 1, entity_undeclared 1",
        "  next: `kquota apply` (the same flags) sets the cluster back to the desired state; "
        "`kquota export` writes what the cluster has as desired-state files, to adopt it",
    ]
    code, out, _ = run_kquota(["drift", "--cluster", "dev", "--format", "markdown"], capsys)
    assert code == 2
    assert f"| `{{user={svc}}}` (protected principal) | `request_percentage`: " in out
    assert out.endswith("`kquota export` writes what the cluster has as desired-state files, "
                        "to adopt it\n")  # fmt: skip
    code, out, _ = run_kquota(["drift", "--cluster", "dev", "--format", "json"], capsys)
    findings = json.loads(out)["findings"]
    assert findings[0]["values"] == {"producer_byte_rate": 2048.0}
    assert findings[1]["protected"] is True and "protected" not in findings[0]
    config("false")  # the undeclared entity is left alone: adopt it or turn prune on
    code, out, _ = run_kquota(["drift", "--cluster", "dev"], capsys)
    assert code == 2
    assert out.splitlines()[-2:] == [
        "  totals: value_changed 1",
        "  next: `kquota apply` (the same flags) sets the cluster back to the desired state; "
        "`kquota export` writes what the cluster has as desired-state files, to adopt it",
    ]
