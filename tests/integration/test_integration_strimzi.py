"""Strimzi detected from a real broker's settings (issue 23 item 2): a dev broker started
with the quota callback class a Strimzi broker runs (a stand-in of our own under that name,
on its classpath); ``plan`` names the callback and the Cluster Operator's removal of
``{user=<default>}``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from callback_classes import broker_with_callback
from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.plan.controllers import ENFORCES_NOTHING, STATIC_QUOTA_CALLBACK

pytestmark = pytest.mark.integration

P = "producer_byte_rate"


@pytest.fixture(scope="module")
def strimzi_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    with broker_with_callback(
        tmp_path_factory.mktemp("kafka-broker-strimzi"), STATIC_QUOTA_CALLBACK
    ) as info:
        yield info


def test_plan_names_strimzi_and_its_callback(
    strimzi_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: <default>}}, set: {{{P}: 1MiB}}}}\n"
    )
    server = strimzi_broker.bootstrap_servers
    for asked in ("--impact", "--capacity"):  # either way the brokers' settings are read
        argv = ["plan", "--bootstrap-server", server, asked]
        code, out, err = run_kquota(argv, capsys)
        assert code == 0, err
        assert "Other controllers:" in out
        assert f"  ! {ENFORCES_NOTHING} (client.quota.callback.class: {STATIC_QUOTA_CALLBACK})" in (
            out
        )
        assert (
            f"Strimzi's Cluster Operator removes {{user=<default>}} quotas on every reconciliation"
            f" (the brokers run {STATIC_QUOTA_CALLBACK}): this change will not last. Move it into"
            " the Kafka resource: spec.kafka.quotas: {type: kafka, producerByteRate: 1048576}"
        ) in out
    code, out, err = run_kquota(
        ["plan", "--bootstrap-server", server, "--impact", "--format", "json"], capsys
    )
    assert code == 0, err
    notes = json.loads(out)["controller_notes"]
    assert len(notes) == 2 and notes[0].startswith(ENFORCES_NOTHING)
    code, out, _ = run_kquota(["plan", "--bootstrap-server", server, "--capacity"], capsys)
    assert "  note: Strimzi's StaticQuotaCallback enforces its own per-broker totals" in out
    # Without asking the brokers anything, nothing is guessed.
    code, out, _ = run_kquota(["plan", "--bootstrap-server", server], capsys)
    assert code == 0 and "Other controllers" not in out
