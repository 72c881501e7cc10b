"""The proof the migration asks for, per source: a cluster holds the quotas the other tool
manages (set here with Kafka's own kafka-configs, the independent client), ``kquota import``
converts that tool's files, and ``kquota plan`` against the cluster shows no changes. One
value changed behind kquota's back then shows as a change: the comparison is real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from migrate_helpers import EXPECTED, SAMPLES

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tools import kafka_configs
from kquota.display import number
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from polling import eventually, served

pytestmark = pytest.mark.integration

_TOOL_TYPES = {"user": "users", "client-id": "clients", "ip": "ips"}


def _entity_args(entity: Entity) -> list[str]:
    args: list[str] = []
    for etype, name in entity.parts:
        args += ["--entity-type", _TOOL_TYPES[etype]]
        args += ["--entity-default"] if name is None else ["--entity-name", name]
    return args


def _kafka_configs_set(broker: BrokerInfo, entity: Entity, values: dict[str, float]) -> None:
    config = ",".join(f"{k}={number(v)}" for k, v in sorted(values.items()))
    proc = kafka_configs(broker, "--alter", "--add-config", config, *_entity_args(entity))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _clear(broker: BrokerInfo, entities: dict[Entity, dict[str, float]]) -> None:
    """_clear removes every key the broker holds on ``entities``: the cluster is to hold
    exactly the other tool's quotas (``user=<default>`` is shared with every other test)."""
    with WireAdmin(broker.bootstrap_servers) as admin:
        current = admin.describe_all()
        stale = [
            QuotaAlteration(e, tuple(QuotaOp.delete(k) for k in current[e]))
            for e in entities
            if current.get(e)
        ]
        if stale:
            assert all(r.error_code == 0 for r in admin.alter(stale, validate_only=False))


@pytest.fixture()
def holding(kafka_broker: BrokerInfo) -> Iterator[list[dict[Entity, dict[str, float]]]]:
    """holding sets quotas with kafka-configs and removes them afterwards (the session's
    broker is shared, and defaults apply to every other test's clients)."""
    held: list[dict[Entity, dict[str, float]]] = []
    try:
        yield held
    finally:
        alterations = [
            QuotaAlteration(e, tuple(QuotaOp.delete(k) for k in v))
            for state in held
            for e, v in state.items()
        ]
        with WireAdmin(kafka_broker.bootstrap_servers) as admin:
            assert all(r.error_code == 0 for r in admin.alter(alterations, validate_only=False))


@pytest.mark.parametrize("source", ["strimzi", "terraform", "jikkou"])
def test_import_then_plan_against_the_same_quotas_shows_no_changes(
    source: str,
    kafka_broker: BrokerInfo,
    holding: list[dict[Entity, dict[str, float]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = EXPECTED[source]
    _clear(kafka_broker, expected)  # the shared broker may hold other tests' keys on them
    holding.append(expected)
    for entity, values in expected.items():
        _kafka_configs_set(kafka_broker, entity, values)
    # A describe trails the controller: plan only once the broker serves what was set.
    served(kafka_broker.bootstrap_servers, expected)

    out = tmp_path / "imported.yaml"
    inputs = [str(p) for p in sorted((SAMPLES / source).iterdir())]
    code, _, err = run_kquota(["import", "--from", source, *inputs, "--out", str(out)], capsys)
    assert code == 0, err
    assert f"{len(expected)} entities" in err

    plan = ["plan", str(out), "--bootstrap-server", kafka_broker.bootstrap_servers]
    code, stdout, err = run_kquota([*plan, "--detailed-exitcode"], capsys)
    assert code == 0, stdout + err
    assert "No changes" in stdout

    # One value moves: now the plan has a change to make.
    entity, values = next(iter(expected.items()))
    key = next(iter(values))
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        moved = QuotaAlteration(entity, (QuotaOp.set(key, values[key] * 2),))
        assert admin.alter([moved], validate_only=False)[0].error_code == 0
        eventually(admin.describe_all, lambda s: s.get(entity, {}).get(key) == values[key] * 2)
    code, stdout, err = run_kquota([*plan, "--detailed-exitcode"], capsys)
    assert code == 2, stdout + err
    assert key in stdout
