"""``kquota snapshot`` against the real broker, and its files read back by plan and the fleet."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota.snapshot.files import read_snapshot
from kquota.snapshot.parquet import read_parquet_snapshot
from polling import eventually, served

pytestmark = pytest.mark.integration


_run = run_kquota


def test_snapshot_formats_round_trip(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    name = f"snap-{secrets.token_hex(3)}"
    entity = Entity.of({"user": name, "client-id": None})
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        (result,) = admin.alter(
            [QuotaAlteration(entity, (QuotaOp.set("consumer_byte_rate", 4096.0),))],
            validate_only=False,
        )
        assert result.ok
    held = {"consumer_byte_rate": 4096.0}
    served(kafka_broker.bootstrap_servers, {entity: held})
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    for fmt in ("json", "jsonl", "parquet"):
        path = tmp_path / f"s.{fmt}"
        code, out, err = _run(["snapshot", *b, "--out", str(path)], capsys)
        assert code == 0, err
        state = read_parquet_snapshot(path) if fmt == "parquet" else read_snapshot(path)
        assert state[entity] == held
    head = json.loads((tmp_path / "s.json").read_text())
    assert head["cluster_id"] == kafka_broker.cluster_id
    assert head["cluster"] == kafka_broker.bootstrap_servers and head["captured_at"]
    first = json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])
    assert first["cluster_id"] == kafka_broker.cluster_id

    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "s.parquet").to_pylist()
    row = next(r for r in table if r["user"] == name)
    assert row["cluster_id"] == kafka_broker.cluster_id
    assert row["entity_types"] == "user,client-id" and row["client_id"] is None
    assert (row["key"], row["value"]) == ("consumer_byte_rate", 4096.0)


def test_snapshot_needs_a_known_format(
    kafka_broker: BrokerInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    code, _, err = _run(["snapshot", *b, "--out", str(tmp_path / "s.txt")], capsys)
    assert code == 1 and "give --format" in err


def test_describe_json_is_a_snapshot_plan_reads_back_whatever_values_the_broker_holds(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import math
    import struct

    monkeypatch.chdir(tmp_path)
    tag = secrets.token_hex(3)
    # Values the broker takes (its checks are `value <= 0` and a maximum, which NaN passes):
    # its extremes, a whole number past 2**53, and the two a JSON number cannot hold.
    held = {
        f"odd-{tag}-nan": ("request_percentage", math.nan),
        f"odd-{tag}-inf": ("controller_mutation_rate", math.inf),
        f"odd-{tag}-max": ("request_percentage", 1.7976931348623157e308),
        f"odd-{tag}-tiny": ("controller_mutation_rate", 5e-324),
        f"odd-{tag}-big": ("producer_byte_rate", float(2**60 + 2**8)),
    }
    entities = {Entity.of({"user": u}): (k, v) for u, (k, v) in held.items()}
    bootstrap = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        results = admin.alter(
            [QuotaAlteration(e, (QuotaOp.set(k, v),)) for e, (k, v) in entities.items()],
            validate_only=False,
        )
        assert all(r.ok for r in results), results
        try:
            # A describe trails the alter (keys only: NaN is equal to nothing).
            eventually(admin.describe_all, lambda s: entities.keys() <= s.keys())
            code, out, err = _run(["describe", *bootstrap, "--format", "json"], capsys)
            assert code == 0, err
            (tmp_path / "cluster.json").write_text(out)
            state = read_snapshot(tmp_path / "cluster.json")
            for entity, (key, value) in entities.items():
                got = state[entity][key]
                assert struct.pack(">d", got) == struct.pack(">d", value), (entity, got)
            (tmp_path / "quotas.yaml").write_text(
                "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n"
            )
            code, out, err = _run(
                [
                    "plan",
                    "quotas.yaml",
                    "--snapshot",
                    "cluster.json",
                    "--prune",
                    "--allow-mass-removal",
                ],
                capsys,
            )
            assert code == 0, out + err
            assert f"- {{user=odd-{tag}-nan}}" in out and f"- {{user=odd-{tag}-inf}}" in out
        finally:
            admin.alter(
                [QuotaAlteration(e, (QuotaOp.delete(k),)) for e, (k, _) in entities.items()],
                validate_only=False,
            )
