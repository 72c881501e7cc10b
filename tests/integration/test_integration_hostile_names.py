"""Hostile names held by a real broker, planned live and read back as github.com reads the
markdown: names are text in code spans, tables stay aligned, nothing becomes markup.

The broker takes any non-empty user name, so the markup, HTML, comments, backticks, pipes,
mentions, autolinks and invisible fillers of the render corpus are stored as given; kquota
plans an update of each against the live cluster (no snapshot in between).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

import gfm
from cli_runner import run_kquota
from hostile_names import HOSTILE
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity, display_entity
from polling import eventually

pytestmark = pytest.mark.integration
P = "producer_byte_rate"


def test_hostile_names_from_the_broker_render_as_text(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tag = secrets.token_hex(3)
    names = [f"h{tag}{n}" for n in HOSTILE if "\r" not in n and n == n.strip()]
    users = [Entity.of({"user": n}) for n in names]
    bootstrap = kafka_broker.bootstrap_servers
    with WireAdmin(bootstrap) as admin:
        admin.alter(
            [QuotaAlteration(u, (QuotaOp.set(P, 1024.0),)) for u in users], validate_only=False
        )
        eventually(admin.describe_all, lambda s: all(u in s for u in users))
    try:
        monkeypatch.chdir(tmp_path)
        entries = "".join(
            f"  - match: {{user: {{name: {_yaml(n)}, verbatim: true}}}}\n"
            "    set: {producer_byte_rate: 2KiB}\n"
            for n in names
        )
        (tmp_path / "q.yaml").write_text(
            "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n" + entries, encoding="utf-8"
        )
        argv = ["plan", "--bootstrap-server", bootstrap, "--format", "markdown", "q.yaml"]
        code, out, err = run_kquota(argv, capsys)
        assert code == 0, err
        doc = gfm.assert_aligned(out)
        assert not doc.comments
        assert not {"a", "img", "script", "b", "h1", "h2", "del", "input"} & doc.root.tags()
        (changes,) = [t for t in doc.tables() if "entity" in t.header]
        # One change for all: one row, every name in it (three, the rest behind its fold).
        (shown,) = [e for e in changes.column("entity") if e]
        assert shown.startswith(f"{len(users)} entities: ")
        assert all(display_entity(u) in shown for u in users)
        assert set(changes.column("after")) == {"2048 (2 KiB/s)"}
    finally:
        with WireAdmin(bootstrap) as admin:  # leave the shared broker as found
            admin.alter(
                [QuotaAlteration(u, (QuotaOp.delete(P),)) for u in users], validate_only=False
            )


def _yaml(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
