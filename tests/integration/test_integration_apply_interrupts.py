"""Interrupts and other writers, with real kquota processes against the real broker.

SIGINT/SIGTERM mid-commit, two saved plans over the same entities, two applies at once (the
apply lease), and another writer changing entities between commit and verification. Each
ends with a re-run that converges, drift 0, and Kafka's own kafka-configs agreeing.
"""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import KafkaConfigsTool
from kquota.apply.applier import apply_plan
from kquota.apply.lease import apply_lease
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.librdkafka import producer_config
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy
from kquota.runtime import deadline
from polling import eventually

pytestmark = pytest.mark.integration

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    out: Path
    err: Path

    def finish(self, timeout: float) -> tuple[int, str, str]:
        code = self.proc.wait(timeout)
        return code, self.out.read_text(), self.err.read_text()


@dataclass
class Repo:
    root: Path
    prefix: str
    broker: BrokerInfo

    def write(self, n: int, value: int, name: str = "u") -> None:
        user = f"{self.prefix}{name}"
        lines = [
            f"  - {{match: {{user: {user}{i:05d}}}, set: {{producer_byte_rate: {value}}}}}\n"
            for i in range(n)
        ]
        (self.root / "quotas" / "main.yaml").write_text(HEADER + "".join(lines))

    def start(self, *argv: str) -> Run:
        # Files, not pipes: a 3,000-entity plan would fill a pipe nobody reads yet.
        n = len(list(self.root.glob("run-*.out")))
        out, err = self.root / f"run-{n}.out", self.root / f"run-{n}.err"
        with out.open("w") as o, err.open("w") as e:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kquota.cli.main", *argv], cwd=self.root, stdout=o, stderr=e
            )
        return Run(proc, out, err)

    def kquota(self, *argv: str, timeout: float = 180) -> tuple[int, str, str]:
        return self.start(*argv).finish(timeout)

    def state(self) -> QuotaState:
        with WireAdmin(self.broker.bootstrap_servers) as admin:
            return {
                e: v
                for e, v in admin.describe_all().items()
                if any(n is not None and n.startswith(self.prefix) for _, n in e.parts)
            }


def _config(broker: BrokerInfo, prefix: str) -> str:
    return (
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, scope: [{{user: '{prefix}*'}}], max_removals: 100000}}\n"
    )


def _repo(root: Path, broker: BrokerInfo, prefix: str) -> Repo:
    (root / "quotas").mkdir(parents=True)
    (root / "kquota.yaml").write_text(_config(broker, prefix))
    return Repo(root, prefix, broker)


@pytest.fixture()
def repo(tmp_path: Path, kafka_broker: BrokerInfo) -> Repo:
    return _repo(tmp_path, kafka_broker, f"i{secrets.token_hex(3)}-")


def _wait_for_first_commit(repo: Repo, run: Run, limit: float = 120) -> int:
    end = time.monotonic() + limit
    while time.monotonic() < end and run.proc.poll() is None:
        n = len(repo.state())
        if n:
            return n
        time.sleep(0.05)
    raise AssertionError(f"apply committed nothing within {limit} s (exit {run.proc.poll()})")


def _wait_for_text(run: Run, needle: str, limit: float = 120) -> None:
    """_wait_for_text polls the run's stderr until ``needle`` shows (bounded; a hang detector)."""
    end = time.monotonic() + limit
    while needle not in run.err.read_text():
        assert run.proc.poll() is None, f"ended before {needle!r}: {run.err.read_text()}"
        assert time.monotonic() < end, f"{needle!r} never showed: {run.err.read_text()}"
        time.sleep(0.05)


def _count(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else 0


def _converges(repo: Repo, configs: KafkaConfigsTool, n: int, value: int) -> None:
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    code, out, err = repo.kquota("drift")
    assert code == 0, out + err
    state = repo.state()
    assert len(state) == n and {v["producer_byte_rate"] for v in state.values()} == {value}
    shown = configs("--describe", "--user", f"{repo.prefix}u{n - 1:05d}").stdout
    assert f"producer_byte_rate={float(value)}" in shown


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_commit_settles_reports_and_a_rerun_converges(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool, signum: int, status: int
) -> None:
    total = 3000
    repo.write(total, 7)
    run = repo.start("apply", "--auto-approve", "--batch-size", "100", "--no-lease")
    _wait_for_first_commit(repo, run)
    run.proc.send_signal(signum)
    code, out, err = run.finish(60)
    name = signal.Signals(signum).name
    assert code == status, out + err
    report = out[out.index("\ncommitted ") :]
    assert f"interrupted by {name}: the commit stopped" in report, report
    assert "the batch in flight was settled by describing the cluster" in report
    assert "run apply again to converge" in report and "verified:" not in report
    committed = _count(r"committed (\d+) of 3000 entities", report)
    uncertain = _count(r"(\d+) entities may or may not", report)
    skipped = _count(r"(\d+) entities were not attempted", report)
    assert committed > 0 and committed + uncertain + skipped <= total
    # The report is exact: the cluster shows every entity it calls committed, and no more
    # than those plus the uncertain ones.
    shown = len(repo.state())
    assert committed <= shown <= committed + uncertain, report
    _converges(repo, kafka_configs_tool, total, 7)


def test_two_saved_plans_on_the_same_entities_the_second_is_refused_never_mixed(
    repo: Repo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    repo.write(50, 100)
    assert repo.kquota("apply", "--auto-approve")[0] == 0
    repo.write(50, 200)
    assert repo.kquota("plan", "--out", "a.json")[0] == 0
    repo.write(50, 300)
    assert repo.kquota("plan", "--out", "b.json")[0] == 0

    code, out, err = repo.kquota("apply", "a.json", "--auto-approve", "--cluster", "local")
    assert code == 0 and "committed 50 of 50 entities" in out, out + err
    code, out, err = repo.kquota("apply", "b.json", "--auto-approve", "--cluster", "local")
    assert code == 1 and "saved plan is stale" in err, out + err
    assert "producer_byte_rate was 100, now 200" in err
    # Never a mix: every entity shows plan a's value, and Kafka's own tool agrees.
    assert {v["producer_byte_rate"] for v in repo.state().values()} == {200.0}
    shown = kafka_configs_tool("--describe", "--user", f"{repo.prefix}u00049").stdout
    assert "producer_byte_rate=200.0" in shown
    _converges(repo, kafka_configs_tool, 50, 300)


def test_an_apply_waits_for_the_lease_another_process_holds(repo: Repo) -> None:
    repo.write(20, 5)
    props = {"bootstrap.servers": repo.broker.bootstrap_servers}
    with deadline.bounded(120, "test"), apply_lease(producer_config(props), deadline.current()):  # type: ignore[arg-type]
        # A deadline long enough to reach the lease on a loaded machine, and still short.
        code, out, err = repo.kquota("apply", "--auto-approve", "--timeout", "15s")
        assert code == 1, out + err
        assert "deadline ran out waiting for the apply lease, held by" in err
        assert "nothing was written" in err and repo.state() == {}
        # SIGTERM while waiting (seen waiting, not after a fixed sleep): before any commit,
        # so nothing written, and it says so.
        run = repo.start("apply", "--auto-approve")
        _wait_for_text(run, "waiting for the apply lease: held by")
        run.proc.send_signal(signal.SIGTERM)
        code, out, err = run.finish(60)
        assert code == 143, out + err
        assert "error: interrupted by SIGTERM before committing; nothing was written" in err
        run = repo.start("apply", "--auto-approve")
        _wait_for_text(run, "waiting for the apply lease: held by")
        assert repo.state() == {}  # still waiting, nothing written
    code, out, err = run.finish(120)
    assert code == 0, out + err
    assert "see `kquota lease status`, or `kquota lease release --force " in err
    assert "committed 20 of 20 entities" in out and len(repo.state()) == 20


def test_two_applies_at_once_on_the_same_entities_run_one_after_the_other(
    tmp_path: Path, kafka_broker: BrokerInfo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    prefix = f"i{secrets.token_hex(3)}-"
    a, b = _repo(tmp_path / "a", kafka_broker, prefix), _repo(tmp_path / "b", kafka_broker, prefix)
    a.write(2000, 111)
    b.write(2000, 222)
    runs = {111: a.start("apply", "--auto-approve"), 222: b.start("apply", "--auto-approve")}
    results = {v: r.finish(240) for v, r in runs.items()}
    for code, out, err in results.values():
        assert code == 0, out + err
        assert "verified: the cluster shows every committed change" in out
    waited = [v for v, (_, _, err) in results.items() if "waiting for the apply lease" in err]
    # Whoever went second planned against the first one's finished apply: its plan updates
    # every entity from the first one's value, and its values are the ones that hold.
    last = waited[0] if waited else None
    values = {v["producer_byte_rate"] for v in a.state().values()}
    assert len(a.state()) == 2000 and len(values) == 1, values
    if last is not None:
        first = 111 if last == 222 else 222
        assert values == {float(last)}
        assert f"producer_byte_rate: {first} " in results[last][1]
        assert "0 to create, 2000 to update" in results[last][1]
    final = int(values.pop())
    repo = a if final == 111 else b
    assert repo.kquota("drift")[0] == 0
    shown = kafka_configs_tool("--describe", "--user", f"{prefix}u01999").stdout
    assert f"producer_byte_rate={float(final)}" in shown


class fake_interleaved_writer:
    """A real admin whose first verification describe lets a real second writer go first.

    The race (another writer between this run's commit and its verification) is real on a
    busy cluster but cannot be timed on demand; this wrapper only times it.
    """

    def __init__(self, admin: WireAdmin, other: WireAdmin, writes: Sequence[QuotaAlteration]):
        self._admin, self._other, self._writes = admin, other, writes
        self._committed = False

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]:
        results = self._admin.alter(alterations, validate_only=validate_only)
        self._committed = self._committed or not validate_only
        return results

    def _interleave(self) -> None:
        if self._committed and self._writes:
            writes, self._writes = self._writes, []
            assert all(r.ok for r in self._other.alter(writes, validate_only=False))
            # Until the broker's metadata image shows it (a loaded machine lags seconds).
            shown = {w.entity: {op.key: op.value for op in w.ops} for w in writes}
            eventually(
                self._admin.describe_all,
                lambda state: all(state.get(e) == v for e, v in shown.items()),
            )

    def describe_all(self) -> QuotaState:
        self._interleave()
        return self._admin.describe_all()

    def describe_each_broker(self) -> Sequence[QuotaState]:
        self._interleave()
        return self._admin.describe_each_broker()


class fake_interleaved_writer_exact(fake_interleaved_writer):  # noqa: N801
    """The same, for an admin that also reads given entities by exact match (as WireAdmin
    does, which apply's verification uses for a handful of entities)."""

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> Sequence[QuotaState]:
        self._interleave()
        return self._admin.describe_entities_each_broker(entities)


@pytest.mark.parametrize("wrapper", [fake_interleaved_writer, fake_interleaved_writer_exact])
def test_verification_names_what_another_writer_changed(
    repo: Repo, wrapper: type[fake_interleaved_writer]
) -> None:
    users = [Entity.of({"user": f"{repo.prefix}v{i}"}) for i in range(5)]
    desired = {u: {"producer_byte_rate": 1000.0} for u in users}
    plan = make_plan(desired, {}, Policy())
    theirs = [QuotaAlteration(u, (QuotaOp.set("producer_byte_rate", 9.0),)) for u in users[:2]]
    bootstrap = repo.broker.bootstrap_servers
    with WireAdmin(bootstrap) as admin, WireAdmin(bootstrap) as other:
        report = apply_plan(wrapper(admin, other, theirs), plan, verify_timeout=10)
    assert len(report.committed) == 5 and not report.unconverged
    assert {e for e, _ in report.overwritten} == set(users[:2])
    assert {how for _, how in report.overwritten} == {"producer_byte_rate is 9, this run set 1000"}
    assert not report.ok


def test_the_cli_exits_4_and_counts_entities_another_writer_changed(repo: Repo) -> None:
    from kquota.apply.outcome import OVERWRITTEN_EXIT, exit_code
    from kquota.render.apply_report import overwritten_lines

    users = [Entity.of({"user": f"{repo.prefix}w{i}"}) for i in range(3)]
    plan = make_plan({u: {"consumer_byte_rate": 50.0} for u in users}, {}, Policy())
    theirs = [QuotaAlteration(users[0], (QuotaOp.set("consumer_byte_rate", 51.0),))]
    with (
        WireAdmin(repo.broker.bootstrap_servers) as admin,
        WireAdmin(repo.broker.bootstrap_servers) as other,
    ):
        report = apply_plan(fake_interleaved_writer(admin, other, theirs), plan)
    assert exit_code(report) == OVERWRITTEN_EXIT == 4
    lines = overwritten_lines(report)
    assert lines[0].startswith("verification: 1 of 3 committed entities were changed by another")
    assert lines[1] == f"  {{user={repo.prefix}w0}}: consumer_byte_rate is 51, this run set 50"
