"""Faults on the real three-node cluster: nodes SIGKILLed mid-apply, a rolling restart.

Each fault is followed by a re-run that converges, drift 0, and Kafka's own kafka-configs
reading another node and agreeing. The ``three_nodes`` fixture restarts whatever a test
leaves down, so the session's cluster is healthy for the next test.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli_runner import run_kquota
from cluster_harness import NODE_IDS, ThreeNodes
from kquota.apply.lease import apply_lease
from kquota.devbroker.cluster import node_dir
from kquota.devbroker.launcher import stop_broker
from kquota.devbroker.tools import kafka_configs
from kquota.kafka.librdkafka import producer_config
from kquota.runtime import deadline

pytestmark = pytest.mark.integration

ENTITIES = 20_000
LOOP_ENTITIES = 2_000  # the drift loop re-reads them many times; the count is not the point
HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@dataclass
class Repo:
    root: Path
    prefix: str
    cluster: ThreeNodes
    capsys: pytest.CaptureFixture[str]

    def configure(self, bootstrap: str) -> None:
        (self.root / "kquota.yaml").write_text(
            "clusters:\n"
            "  local:\n"
            f"    kafka: {{bootstrap.servers: '{bootstrap}'}}\n"
            "    desired: [quotas]\n"
            f"    policy: {{prune: true, scope: [{{user: '{self.prefix}*'}}]}}\n"
        )

    def desire(self, n: int, rate: int = 1000) -> None:
        p = self.prefix
        lines = (
            f"  - {{match: {{user: {p}{i:05d}}}, set: {{producer_byte_rate: {rate + i}}}}}\n"
            for i in range(n)
        )
        (self.root / "quotas" / "main.yaml").write_text(HEADER + "".join(lines))

    def kquota(self, *argv: str) -> tuple[int, str, str]:
        return run_kquota(list(argv), self.capsys)

    def expected(self, n: int, rate: int = 1000) -> dict[str, float]:
        return {f"{self.prefix}{i:05d}": float(rate + i) for i in range(n)}


@pytest.fixture()
def repo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    three_nodes: ThreeNodes,
    capsys: pytest.CaptureFixture[str],
) -> Repo:
    prefix = f"f{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    r = Repo(tmp_path, prefix, three_nodes, capsys)
    r.configure(three_nodes.info.bootstrap_servers)
    return r


class KillWhenHalfway(threading.Thread):
    """Watches one node's view of the apply and SIGKILLs ``victim`` once ``at`` entities of
    the prefix show, recording how many showed at that moment. Bounded by ``timeout``."""

    def __init__(self, cluster: ThreeNodes, watch: int, victim: int, prefix: str, at: int):
        super().__init__(daemon=True)
        self.cluster, self.watch, self.victim, self.prefix, self.at = (
            cluster, watch, victim, prefix, at,
        )  # fmt: skip
        self.seen_at_kill: int | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + 300
        while not self.stop.is_set() and time.monotonic() < deadline:
            seen = len(self.cluster.state_at(self.watch, self.prefix))
            if seen >= self.at:
                self.cluster.kill(self.victim)
                self.seen_at_kill = seen
                return
            time.sleep(0.05)


def _kafka_configs_count(cluster: ThreeNodes, node_id: int, prefix: str) -> dict[str, float]:
    proc = kafka_configs(cluster.tool_target(node_id), "--describe", "--entity-type", "users")
    assert proc.returncode == 0, proc.stderr
    seen: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        # Quota configs for user-principal 'NAME' are producer_byte_rate=1234.0
        if f"'{prefix}" not in line:
            continue
        name = line.split("'")[1]
        seen[name] = float(line.rsplit("producer_byte_rate=", 1)[1].split(",")[0])
    return seen


def _apply_through_a_node_killed_midway(repo: Repo, talk_to: int, victim: int) -> int:
    """_apply_through_a_node_killed_midway applies 20,000 entities with ``talk_to`` as the
    only bootstrap address, kills ``victim`` part way, and checks the apply survived."""
    cluster = repo.cluster
    watch = next(i for i in NODE_IDS if i not in (talk_to, victim))
    repo.configure(cluster.address(talk_to))
    repo.desire(ENTITIES)
    killer = KillWhenHalfway(cluster, watch, victim, repo.prefix, at=ENTITIES // 5)
    killer.start()
    try:
        code, out, err = repo.kquota("apply", "--auto-approve", "--batch-size", "1000")
    finally:
        killer.stop.set()
        killer.join(60)
    assert killer.seen_at_kill is not None, "the node was never killed"
    assert killer.seen_at_kill < ENTITIES, "the kill came after the apply had finished"
    assert not cluster.running(victim)
    assert code == 0, out[-2000:] + err[-2000:]
    assert f"committed {ENTITIES} of {ENTITIES} entities" in out
    assert "verified" in out
    return watch


def _converged(repo: Repo, reader: int, n: int = ENTITIES) -> None:
    """A re-run plans nothing, drift is 0, and kafka-configs at ``reader`` agrees. The re-run
    never waits for the apply lease: the apply before released it, broker down or not."""
    code, out, err = repo.kquota("apply", "--auto-approve", "--timeout", "3m")
    assert code == 0 and "nothing to apply" in out, out[-2000:] + err[-2000:]
    assert "waiting for the apply lease" not in err, err[-2000:]
    code, out, err = repo.kquota("drift")
    assert code == 0, out[-2000:] + err[-2000:]
    assert _kafka_configs_count(repo.cluster, reader, repo.prefix) == repo.expected(n)


def test_sigkill_of_the_broker_in_use_mid_apply(repo: Repo) -> None:
    # One bootstrap address: the client must have learned the others to carry on.
    watch = _apply_through_a_node_killed_midway(repo, talk_to=2, victim=2)
    repo.configure(repo.cluster.info.bootstrap_servers)  # a new process: node 2 is still down
    _converged(repo, reader=watch)
    repo.cluster.restart(2)
    repo.configure(repo.cluster.address(2))  # the restarted node has caught up
    _converged(repo, reader=2)


def test_sigkill_of_the_active_controller_mid_apply(repo: Repo) -> None:
    leader = repo.cluster.leader()
    talk_to = next(i for i in NODE_IDS if i != leader)
    watch = _apply_through_a_node_killed_midway(repo, talk_to=talk_to, victim=leader)
    assert repo.cluster.leader() != leader, "another node took over as controller"
    _converged(repo, reader=watch)
    repo.cluster.restart(leader)
    _converged(repo, reader=leader)


def test_rolling_restart_during_a_drift_loop(repo: Repo) -> None:
    cluster = repo.cluster
    repo.desire(LOOP_ENTITIES)
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out[-2000:] + err[-2000:]

    # The drift loop runs as its own processes, as a cron job or CI would, while this (main)
    # thread restarts the nodes one after another.
    codes: list[tuple[int, str]] = []
    stop = threading.Event()

    def drift_loop() -> None:
        deadline = time.monotonic() + 600
        while not stop.is_set() and time.monotonic() < deadline:
            proc = subprocess.run(
                [sys.executable, "-m", "kquota.cli.main", "drift"],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=repo.root,
                env={**os.environ, "NO_COLOR": "1"},
            )
            codes.append((proc.returncode, (proc.stdout + proc.stderr)[-1500:]))

    loop = threading.Thread(target=drift_loop, daemon=True)
    loop.start()
    try:
        for node_id in NODE_IDS:
            runs = len(codes)
            assert stop_broker(node_dir(cluster.dir, node_id))
            cluster.restart(node_id)
            deadline = time.monotonic() + 120
            while len(codes) <= runs + 1 and time.monotonic() < deadline:
                time.sleep(0.2)  # at least one whole drift run with this node back
    finally:
        stop.set()
        loop.join(320)
    assert len(codes) >= 4
    bad = [(c, tail) for c, tail in codes if c != 0]
    assert not bad, f"{len(bad)} of {len(codes)} drift runs did not report in-sync: {bad[:2]}"
    _converged(repo, reader=1, n=LOOP_ENTITIES)


def _wait_for_text(path: Path, needle: str, proc: subprocess.Popen[bytes], bound: float) -> None:
    end = time.monotonic() + bound
    while needle not in path.read_text():
        assert proc.poll() is None, f"ended before {needle!r}: {path.read_text()[-2000:]}"
        assert time.monotonic() < end, f"{needle!r} never showed: {path.read_text()[-2000:]}"
        time.sleep(0.05)


def test_one_bootstrap_address_whose_node_dies_while_apply_takes_the_lease(repo: Repo) -> None:
    # Issue 19 item 6: only node 1's address, node 1 SIGKILLed while apply is taking the
    # lease (held here, so the kill lands in that phase by construction, not by a timer).
    cluster = repo.cluster
    repo.configure(cluster.address(1))
    repo.desire(ENTITIES)
    timeout = 300
    out, err = repo.root / "apply.out", repo.root / "apply.err"
    everyone = {"bootstrap.servers": cluster.info.bootstrap_servers}
    with deadline.bounded(600, "test") as limit, apply_lease(producer_config(everyone), limit):
        with out.open("w") as o, err.open("w") as e:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kquota.cli.main", "apply", "--auto-approve",
                 "--timeout", f"{timeout}s"],
                cwd=repo.root, stdout=o, stderr=e,
            )  # fmt: skip
        try:
            _wait_for_text(err, "waiting for the apply lease: held by", proc, 120)
            cluster.kill(1)
        except BaseException:
            proc.kill()
            proc.wait(30)
            raise
    # The lease is free now (released through nodes 2 and 3): the apply must find it there.
    try:
        code = proc.wait(timeout + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    text, errors = out.read_text(), err.read_text()
    assert code == 0, text[-2000:] + errors[-3000:]
    assert f"committed {ENTITIES} of {ENTITIES} entities" in text
    assert "verified: the cluster shows every committed change" in text
    assert "Traceback" not in errors
    with repo.capsys.disabled():  # shown with -s: the waits it named
        print(f"what the apply said on stderr:\n{errors}")
    repo.configure(cluster.info.bootstrap_servers)  # a new process: node 1 is still down
    _converged(repo, reader=2)
