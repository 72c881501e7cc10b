"""Shared set-up of the rollout tests against real brokers (fleet apply, apply --ramp,
revert and history): desired-state files, audit topics, reading a user's quotas back, the
console script run as its own process and read line by line, and a broker's apply lease held
by the test itself (a fault a real operator produces too: another apply holding the lease).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar

import pytest

from cli_runner import run_kquota
from kquota.kafka.admin import WireAdmin
from kquota.model import Entity, QuotaState

T = TypeVar("T")

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
EMPTY_SNAPSHOT = '{"format_version": 1, "entries": []}'


def desired_yaml(entries: Sequence[str]) -> str:
    """desired_yaml is a desired-state file of ``entries`` (each one flow-style quota)."""
    if not entries:
        return HEADER.replace("quotas:\n", "quotas: []\n")
    return HEADER + "".join(f"  - {e}\n" for e in entries)


def user_quota(user: str, **values: float) -> str:
    """user_quota is one desired entry: ``user_quota("a", producer_byte_rate=10)``."""
    sets = ", ".join(f"{k}: {v:g}" for k, v in values.items())
    return f"{{match: {{user: {user}}}, set: {{{sets}}}}}"


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    """create_topic creates ``topic`` and waits (bounded) until the broker serves it."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
        f.result(timeout=30)
    # Created is not yet served: wait (bounded) until the broker's metadata lists it.
    for _ in range(300):
        if topic in admin.list_topics(timeout=10).topics:
            return
        time.sleep(0.1)


def quotas(bootstrap: str, user: str) -> dict[str, float]:
    """quotas is what the broker holds for ``user`` (empty: nothing)."""
    with WireAdmin(bootstrap) as admin:
        return dict(admin.describe_all().get(Entity.of({"user": user}), {}))


def kquota_process(argv: Sequence[str]) -> subprocess.Popen[str]:
    """kquota_process starts the console script as its own process (own signals, own
    deadline), its output unbuffered so that a test can follow it line by line."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "kquota"), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def read_until(stream: IO[str] | None, marker: str, seen: list[str]) -> str:
    """read_until reads lines into ``seen`` until one contains ``marker`` and returns it; the
    stream ending first fails the test with everything read."""
    assert stream is not None
    while True:
        line = stream.readline()
        assert line, f"the output ended before {marker!r}: " + "".join(seen)
        seen.append(line)
        if marker in line:
            return line


def watch(bootstrap: str, read: Callable[[QuotaState], T], proc: subprocess.Popen[str]) -> list[T]:
    """watch reads the broker every 50 ms with a client of its own while ``proc`` runs, and
    returns each distinct value of ``read`` in the order seen: what the cluster showed, step
    by step, not what the process reported."""
    seen: list[T] = []
    with WireAdmin(bootstrap) as admin:
        ends = time.monotonic() + 180
        while time.monotonic() < ends:
            # Whether the process had ended is asked before the read, so the last read always
            # follows its end: a step committed while a describe was on the wire is still seen.
            finished = proc.poll() is not None
            now = read(admin.describe_all())
            if not seen or seen[-1] != now:
                seen.append(now)
            if finished:
                break
            time.sleep(0.05)
    return seen


@contextlib.contextmanager
def ended(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """ended kills the process if the block leaves it running (a failed assertion)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


@contextlib.contextmanager
def lease_held(bootstrap: str) -> Iterator[None]:
    """lease_held holds the broker's apply lease for the block, renewed, as another apply
    would: applies to that broker wait for it."""
    from kquota.apply.lease import apply_lease
    from kquota.kafka.librdkafka import producer_config
    from kquota.runtime.deadline import Deadline

    limit = Deadline(time.monotonic() + 300, "the test's lease")
    with apply_lease(producer_config({"bootstrap.servers": bootstrap}), limit):
        yield


def lease_log(bootstrap: str) -> list[tuple[int, int | None]]:
    """lease_log is the broker's apply-lease log, in log order: per record the pid of the
    claim's process (None: a renewal or a release)."""
    from kquota.apply.lease import LEASE_TOPIC
    from kquota.apply.lease_log import LeaseLog
    from kquota.kafka.librdkafka import producer_config

    log = LeaseLog(producer_config({"bootstrap.servers": bootstrap}), LEASE_TOPIC)
    try:
        end = log.end_offset(30)
        records = log.read_until(end - 1, 30) if end else []
        return [(r.offset, (r.info or {}).get("pid") if r.is_claim else None) for r in records]
    finally:
        log.close()


@dataclass
class Cluster:
    """Cluster is one kquota.yaml cluster of a test fleet: where it is, its audit topic, and
    the one user its desired state sets."""

    bootstrap: str
    user: str
    value: float
    audit_topic: str | None = None


@dataclass
class Fleet:
    """Fleet is a project of several kquota.yaml clusters (several may share a dev broker,
    each owning its own users), planned from empty snapshots by ``fleet plan``."""

    root: Path
    capsys: pytest.CaptureFixture[str]
    clusters: dict[str, Cluster] = field(default_factory=dict)

    def write(self, rollout: str = "") -> None:
        lines = ["clusters:"]
        for name, c in self.clusters.items():
            audit = f", audit_topic: {c.audit_topic}" if c.audit_topic else ""
            lines.append(f"  {name}: {{kafka: {{bootstrap.servers: '{c.bootstrap}'}}{audit}}}")
            (self.root / "desired" / name).mkdir(parents=True, exist_ok=True)
            (self.root / "desired" / name / "main.yaml").write_text(
                desired_yaml([user_quota(c.user, producer_byte_rate=c.value)])
            )
            (self.root / "snapshots").mkdir(exist_ok=True)
            (self.root / "snapshots" / f"{name}.json").write_text(EMPTY_SNAPSHOT)
        (self.root / "kquota.yaml").write_text("\n".join(lines) + "\n" + rollout)

    def plan(self) -> None:
        code, out, err = self.kquota(
            "fleet", "plan", "--desired", "desired", "--snapshots", "snapshots", "--out",
            "plans", "--processes", "1",
        )  # fmt: skip
        assert code == 0, out + err

    def kquota(self, *argv: str) -> tuple[int, str, str]:
        return run_kquota(list(argv), self.capsys)

    def quota(self, name: str) -> dict[str, float]:
        c = self.clusters[name]
        return quotas(c.bootstrap, c.user)

    APPLY = ("fleet", "apply", "plans", "--desired", "desired", "--auto-approve")


def project(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    bootstrap: str,
    capsys: pytest.CaptureFixture[str],
    letter: str,
    *,
    audit_partitions: int = 0,
) -> Project:
    """project is a fresh one-cluster project in ``root`` (the working directory from now),
    its users prefixed uniquely (``letter`` + random), with an audit topic of that many
    partitions created on the broker (0: none)."""
    import secrets

    prefix = f"{letter}{secrets.token_hex(3)}-"
    topic = None
    if audit_partitions:
        topic = f"audit-{prefix}t"
        create_topic(bootstrap, topic, audit_partitions)
    monkeypatch.chdir(root)
    return Project(root, prefix, bootstrap, capsys, topic)


@dataclass
class Project:
    """Project is a one-cluster project (``local``) whose desired state is ``quotas/``."""

    root: Path
    prefix: str
    bootstrap: str
    capsys: pytest.CaptureFixture[str]
    topic: str | None = None

    def configure(self, policy: Mapping[str, str]) -> None:
        audit = f"    audit_topic: {self.topic}\n" if self.topic else ""
        body = ", ".join(f"{k}: {v}" for k, v in policy.items())
        rules = f"    policy: {{{body}}}\n" if policy else ""
        (self.root / "quotas").mkdir(exist_ok=True)
        (self.root / "kquota.yaml").write_text(
            "clusters:\n"
            "  local:\n"
            f"    kafka: {{bootstrap.servers: '{self.bootstrap}'}}\n"
            "    desired: [quotas]\n"
            f"{audit}{rules}"
        )

    def write(self, entries: Sequence[str]) -> None:
        (self.root / "quotas" / "main.yaml").write_text(desired_yaml(entries))

    def kquota(self, *argv: str) -> tuple[int, str, str]:
        return run_kquota(list(argv), self.capsys)

    def quota(self, user: str) -> dict[str, float]:
        return quotas(self.bootstrap, f"{self.prefix}{user}")
