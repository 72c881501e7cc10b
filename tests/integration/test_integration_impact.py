"""Blast radius and no-gap apply against the real broker (issue 13, points 1 and 3)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_kquota
from kquota.apply.applier import apply_plan
from kquota.apply.staleness import is_applied
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import WireAdmin
from kquota.model import Entity, QuotaState
from kquota.plan.resolver import resolve
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from kquota.principals.live import SOURCES
from polling import eventually

pytestmark = pytest.mark.integration

P = "producer_byte_rate"


def test_plan_impact_live_reports_every_source_and_lists_file_principals(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = f"i{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: {prefix}svc, client-id: <default>}}, set: {{{P}: 2048}}}}\n"
    )
    (tmp_path / "p.txt").write_text(f"user={prefix}svc,client-id=loader\nuser={prefix}other\n")
    server = kafka_broker.bootstrap_servers
    argv = ["plan", "--bootstrap-server", server, "--impact", "--principals", "p.txt"]
    code, out, err = run_kquota(argv, capsys)
    assert code == 0, err
    # Each live source says what it found or why it could not look: never silent.
    for source in SOURCES:
        line = next((ln for ln in out.splitlines() if ln.startswith(f"  {source}: ")), None)
        assert line is not None and ("found" in line or "could not look:" in line), out
    assert "  file:p.txt: 2 found" in out
    assert f"{{user={prefix}svc, client-id=loader}}" in out
    # Grouped by change (key, before -> after, source), throttled harder first.
    assert (
        f"  harder {P}: unlimited -> 2048 (2 KiB/s) from {{user={prefix}svc, client-id=<default>}}"
        in out
    )
    code, _, err = run_kquota([*argv, "--protect", f"user={prefix}svc"], capsys)
    assert code == 1 and f"protected principals: {{user={prefix}svc, client-id=loader}}" in err


class _Watching:
    """_Watching is the real WireAdmin, reading the broker back after every commit call: once
    the broker shows what the call wrote, it records the principal's effective quota."""

    def __init__(self, admin: WireAdmin, prefix: str, user: str, client: str) -> None:
        self.admin, self.prefix, self.user, self.client = admin, prefix, user, client
        self.seen: list[float | None] = []

    def _mine(self) -> QuotaState:
        return {
            e: v
            for e, v in self.admin.describe_all().items()
            if any(n is not None and n.startswith(self.prefix) for _, n in e.parts)
        }

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]:
        results = self.admin.alter(alterations, validate_only=validate_only)
        if not validate_only:
            written = [
                Alteration(
                    a.entity,
                    tuple(Op(o.key, o.value, o.remove, None) for o in a.ops),
                    ChangeKind.UPDATE,
                )
                for a in alterations
            ]
            state = eventually(
                self._mine, lambda s: all(is_applied(w, s.get(w.entity, {})) for w in written)
            )
            got = resolve(state, self.user, self.client).get(P)
            self.seen.append(None if got is None else got.value)
        return results

    def describe_all(self) -> QuotaState:
        return self.admin.describe_all()

    def describe_each_broker(self) -> Sequence[QuotaState]:
        return self.admin.describe_each_broker()


def test_a_quota_moving_between_entities_is_never_missing(kafka_broker: BrokerInfo) -> None:
    """The plan lists the removal first (as a plan sorted by entity may); apply commits one
    entity per batch and still sets before it removes, so the principal is limited after
    every batch. Committed in the plan's order, the first batch would leave it unlimited."""
    prefix = f"g{secrets.token_hex(3)}-"
    user, client = f"{prefix}alice", "app"
    own = Entity.of({"user": user})
    fallback = Entity.of({"user": user, "client-id": None})
    other = Entity.of({"user": f"{prefix}bob"})
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        seed = Plan(
            (
                Alteration(own, (Op(P, 1000.0, False, None),), ChangeKind.CREATE),
                Alteration(other, (Op(P, 7.0, False, None),), ChangeKind.CREATE),
            )
        )
        assert apply_plan(admin, seed).ok
        move = Plan(
            (
                Alteration(own, (Op(P, None, True, 1000.0),), ChangeKind.DELETE),
                Alteration(other, (Op(P, None, True, 7.0),), ChangeKind.DELETE),
                Alteration(fallback, (Op(P, 2000.0, False, None),), ChangeKind.CREATE),
            )
        )
        watching = _Watching(admin, prefix, user, client)
        report = apply_plan(watching, move, batch_size=1)
        assert report.ok
        # user+<default> client-id outranks user for (alice, app): 2000 from the first batch;
        # removing {user=alice} first would have shown None (unlimited) there.
        assert watching.seen == [2000.0, 2000.0, 2000.0]
        assert [a.entity for a in report.committed] == [fallback, own, other]
        assert apply_plan(
            admin, Plan((Alteration(fallback, (Op(P, None, True, 2000.0),), ChangeKind.DELETE),))
        ).ok


def test_apply_recounts_the_protected_verdict_of_a_saved_plan(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A saved plan made without --protect is refused by an apply that protects a principal
    it would newly limit; nothing is written until --allow-protected-change."""
    p = f"a{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        f"    policy: {{scope: [{{user: '{p}*', client-id: '*'}}]}}\n"
    )
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: {p}svc, client-id: <default>}}, set: {{{P}: 2048}}}}\n"
    )
    code, _, err = run_kquota(["plan", "--out", "plan.json"], capsys)
    assert code == 0, err
    guard = ["--protect", f"user={p}svc,client-id=loader"]
    code, out, err = run_kquota(["apply", "plan.json", "--auto-approve", *guard], capsys)
    assert code == 1
    assert f"protected principals: {{user={p}svc, client-id=loader}} {P}: unlimited -> 2048" in err
    assert "--allow-protected-change" in err
    entity = Entity.of({"user": f"{p}svc", "client-id": None})
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        assert entity not in admin.describe_all()
        allow = [*guard, "--allow-protected-change"]
        code, out, err = run_kquota(["apply", "plan.json", "--auto-approve", *allow], capsys)
        assert code == 0, out + err
        assert "Protected-principals guard overridden" in out
        assert admin.describe_all().get(entity) == {P: 2048.0}
        assert apply_plan(
            admin, Plan((Alteration(entity, (Op(P, None, True, 2048.0),), ChangeKind.DELETE),))
        ).ok
