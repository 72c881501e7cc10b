"""A hung broker (SIGSTOP: the port accepts, nothing answers) against the overall deadline.

The broker is this module's own (it gets stopped), never the session's. Each test resumes it
before it ends. Bounds: the command must end within its --timeout plus the settling grace
and process start-up (measured in the run, :func:`_slack`), and say what it was waiting on.
"""

from __future__ import annotations

import os
import pty
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kquota.apply.lease import UNCONFIRMED_RELEASE, apply_lease
from kquota.apply.lease_log import LeaseLog
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota.kafka.admin import WireAdmin
from kquota.kafka.librdkafka import producer_config
from kquota.runtime import deadline
from kquota_topics import with_lease_topic
from terminal import on_terminal

pytestmark = pytest.mark.integration

SETTLING = 5.0
"""The applier's settling grace past the deadline (``kquota.apply.applier.SETTLE_TIMEOUT``)."""


def _slack() -> float:
    """_slack is how far past its deadline a command may end: settling, plus twice the start-up
    of a kquota process as measured now (the deadline starts only once kquota runs, and the
    exit costs about as much again), plus a margin. Measured in the run, so a loaded machine
    widens it instead of failing the test."""
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", "apply", "--help"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return SETTLING + 2 * (time.monotonic() - start) + 3.0


HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@pytest.fixture(scope="module")
def hung_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    broker_dir = tmp_path_factory.mktemp("hung-broker")
    info = with_lease_topic(start_broker(broker_dir, die_with_parent=True))
    _wait_until_writable(info)
    try:
        yield info
    finally:
        os.kill(info.pid, signal.SIGCONT)
        stop_broker(broker_dir)


PROBE_TOPIC = "hung-broker-probe"
"""A topic of this module's own broker that only :func:`_wait_until_writable` writes to."""


def _wait_until_writable(broker: BrokerInfo, bound: float = 180.0) -> float:
    """_wait_until_writable returns once the broker confirms a write again, and how long that
    took. A broker resumed from SIGSTOP may not take writes at once (its controller fences it
    for the heartbeats it missed, then lets it back); in CI (stop 28) the next test's own lease
    write timed out after 30 s. Each test now starts on a broker that takes writes."""
    from confluent_kafka import Producer

    start = time.monotonic()
    outcome: list[object] = []
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap_servers, "message.timeout.ms": "10000"}
    )
    while True:
        outcome.clear()
        producer.produce(PROBE_TOPIC, b"probe", on_delivery=lambda err, _: outcome.append(err))
        producer.flush(15)
        if outcome == [None]:
            return time.monotonic() - start
        assert time.monotonic() - start < bound, f"the broker took no write for {bound} s"


class _Stopped:
    """The broker stopped (SIGSTOP) for the block; resumed, and back to taking writes, after."""

    def __init__(self, broker: BrokerInfo) -> None:
        self.broker = broker

    def __enter__(self) -> None:
        os.kill(self.broker.pid, signal.SIGSTOP)

    def __exit__(self, *exc: object) -> None:
        os.kill(self.broker.pid, signal.SIGCONT)
        took = _wait_until_writable(self.broker)
        print(f"the broker took writes again {took:.1f} s after it was resumed")


def _repo(root: Path, broker: BrokerInfo, prefix: str, n: int) -> None:
    (root / "quotas").mkdir()
    (root / "kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, scope: [{{user: '{prefix}*'}}], max_removals: 100000}}\n"
    )
    lines = [
        f"  - {{match: {{user: {prefix}{i:05d}}}, set: {{consumer_byte_rate: {i + 1}}}}}\n"
        for i in range(n)
    ]
    (root / "quotas" / "main.yaml").write_text(HEADER + "".join(lines))


def _kquota(root: Path, *argv: str) -> subprocess.Popen[bytes]:
    with (root / "out.txt").open("w") as out, (root / "err.txt").open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "kquota.cli.main", *argv], cwd=root, stdout=out, stderr=err
        )


def _wait_for_first_commit(broker: BrokerInfo, proc: subprocess.Popen[bytes], prefix: str) -> None:
    with WireAdmin(broker.bootstrap_servers) as admin:
        while proc.poll() is None and not any(
            (n or "").startswith(prefix) for e in admin.describe_all() for _, n in e.parts
        ):
            time.sleep(0.05)
    assert proc.poll() is None, "apply ended before it was stopped"


def test_drift_against_a_hung_broker_ends_at_its_deadline_and_says_on_what(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    _repo(tmp_path, hung_broker, "h-", 1)
    slack = _slack()
    with _Stopped(hung_broker):
        start = time.monotonic()
        proc = _kquota(tmp_path, "drift", "--timeout", "6s")
        code = proc.wait(6 + slack + 60)
        took = time.monotonic() - start
    err = (tmp_path / "err.txt").read_text()
    assert code == 1 and took < 6 + slack, (took, err)
    assert "error: the --timeout 6s deadline ran out: it was waiting for " in err
    assert hung_broker.bootstrap_servers in err
    # Off a terminal: the message only, no indicator frames.
    assert "\r" not in err and "waiting 1 s" not in err


def test_apply_against_a_broker_that_hangs_mid_commit_ends_by_its_deadline(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    prefix = f"h{secrets.token_hex(3)}-"
    _repo(tmp_path, hung_broker, prefix, 3000)
    timeout = 25
    slack = _slack()
    start = time.monotonic()
    proc = _kquota(
        tmp_path, "apply", "--auto-approve", "--batch-size", "100", "--timeout", f"{timeout}s",
        "--no-lease",
    )  # fmt: skip
    _wait_for_first_commit(hung_broker, proc, prefix)
    with _Stopped(hung_broker):
        code = proc.wait(timeout + slack + 60)
        took = time.monotonic() - start
    out = (tmp_path / "out.txt").read_text()
    report = out[out.index("\ncommitted ") :]
    assert code == 1 and took < timeout + slack, (took, report)
    assert f"stopped: the --timeout {timeout}s deadline ran out: it was waiting for" in report
    assert "entities were not attempted" in report and "run apply again" in report
    assert "verified:" not in report
    # Resumed, the same command converges, and drift agrees.
    proc = _kquota(tmp_path, "apply", "--auto-approve", "--no-lease")
    assert proc.wait(240) == 0, (tmp_path / "out.txt").read_text()[-500:]
    assert _kquota(tmp_path, "drift").wait(120) == 0


def test_on_a_terminal_a_waiting_indicator_names_the_wait(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    _repo(tmp_path, hung_broker, "p-", 1)
    cmd = [sys.executable, "-m", "kquota.cli.main", "drift", "--timeout", "5s"]
    with _Stopped(hung_broker):
        code, text, _ = on_terminal(cmd, cwd=tmp_path, stdout_tty=False, timeout=30)
    assert code == 1
    # The first frame shows after a second's wait (later on a loaded machine: any count).
    assert re.search(r"waiting \d+ s for ", text), text
    assert "(deadline in " in text and "\x1b[2K" in text


class _PtyStderr:
    """A child's stderr on a terminal, read by a thread: the waiting indicator there says
    what the child waits on right now, which the test waits for instead of sleeping."""

    def __init__(self) -> None:
        self.leader, self.follower = pty.openpty()
        self.text = ""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        os.close(self.follower)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.leader, 4096)
            except OSError:  # the other end closed: the process ended
                return
            if not chunk:
                return
            with self._lock:
                self.text += chunk.decode(errors="replace")

    def find(self, needles: tuple[str, ...], start: int = 0) -> int:
        """find is where the first of ``needles`` shows from ``start`` on, or -1."""
        with self._lock:
            found = [at for n in needles if (at := self.text.find(n, start)) >= 0]
        return min(found, default=-1)

    def wait_for(
        self, needle: str | tuple[str, ...], proc: subprocess.Popen[bytes], bound: float
    ) -> int:
        """wait_for polls until ``needle`` (or one of them) shows (returning where), failing if
        the process ends first or ``bound`` passes (a hang detector, not a timing assertion)."""
        needles = (needle,) if isinstance(needle, str) else needle
        end = time.monotonic() + bound
        while True:
            at = self.find(needles)
            if at >= 0:
                return at
            assert proc.poll() is None, f"ended before showing {needle!r}: {self.text[-2000:]}"
            assert time.monotonic() < end, f"{needle!r} never showed: {self.text[-2000:]}"
            time.sleep(0.05)

    def close(self) -> None:
        self._reader.join(30)
        os.close(self.leader)


def test_sigint_on_a_hung_broker_then_a_second_sigint_stops_settling(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    prefix = f"s{secrets.token_hex(3)}-"
    _repo(tmp_path, hung_broker, prefix, 3000)
    err = _PtyStderr()
    with (tmp_path / "out.txt").open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kquota.cli.main", "apply", "--auto-approve",
             "--batch-size", "100", "--no-lease"],
            cwd=tmp_path, stdout=out, stderr=err.follower, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    err.start()
    try:
        _wait_for_first_commit(hung_broker, proc, prefix)
        with _Stopped(hung_broker):
            # No fixed sleeps: the child's own indicator says when a commit hangs, and then
            # when settling waits on a describe the broker will not answer (its 5 s window).
            committing = err.wait_for("for AlterClientQuotas from", proc, 120)
            proc.send_signal(signal.SIGINT)
            # Settling asks for the last committed entity first (the verify probe), then
            # describes: either wait names a describe the stopped broker will not answer.
            settles = ("for the last committed entity to show", "for DescribeClientQuotas from")
            if err.find(settles, committing) < 0:
                err.wait_for(settles, proc, 120)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        err.close()
    text = (tmp_path / "out.txt").read_text()
    report = text[text.index("\ncommitted ") :]
    assert code == 130, report + err.text[-2000:]
    assert "interrupted by SIGINT: the commit stopped" in report
    # The second signal cut settling short (settling alone would have taken its 5 s).
    assert "a second signal stopped settling the batch in flight: it stays uncertain" in report
    assert re.search(r"\n  (\d+) entities may or may not have been committed", report), report
    proc = _kquota(tmp_path, "apply", "--auto-approve", "--no-lease")
    assert proc.wait(240) == 0, (tmp_path / "out.txt").read_text()[-500:]
    assert _kquota(tmp_path, "drift").wait(120) == 0


def _wait_for_text(path: Path, needle: str, proc: subprocess.Popen[bytes], bound: float) -> None:
    end = time.monotonic() + bound
    while needle not in path.read_text():
        assert proc.poll() is None, f"ended before {needle!r}: {path.read_text()[-2000:]}"
        assert time.monotonic() < end, f"{needle!r} never showed: {path.read_text()[-2000:]}"
        time.sleep(0.05)


def test_an_apply_whose_broker_hangs_while_it_waits_for_the_lease_ends_by_its_deadline(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    # The lease is held here, so the apply is in its lease phase when the broker stops.
    _repo(tmp_path, hung_broker, f"l{secrets.token_hex(3)}-", 1)
    props = {"bootstrap.servers": hung_broker.bootstrap_servers}
    timeout = 20
    slack = _slack()
    with deadline.bounded(600, "test") as limit, apply_lease(producer_config(props), limit):
        proc = _kquota(tmp_path, "apply", "--auto-approve", "--timeout", f"{timeout}s")
        start = time.monotonic()
        _wait_for_text(tmp_path / "err.txt", "waiting for the apply lease: held by", proc, 120)
        with _Stopped(hung_broker):
            code = proc.wait(timeout + slack + 60)
            took = time.monotonic() - start
    err = (tmp_path / "err.txt").read_text()
    assert code == 1 and took < timeout + slack, (took, err)
    assert f"error: the --timeout {timeout}s deadline ran out" in err, err
    assert "nothing was written" in err and "Traceback" not in err
    # Off a terminal, a plain line named each long wait while it lasted.
    assert re.search(r"\nwaiting for .* \(\d+ s so far, deadline in \d+ s\)\n", err), err
    assert "kquota lease status" in err and "kquota lease release --force" in err
    print(f"stderr of an apply whose broker hung while it waited for the lease:\n{err}")


def test_sigint_while_taking_the_lease_from_a_hung_broker_stops_at_once(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    _repo(tmp_path, hung_broker, f"l{secrets.token_hex(3)}-", 1)
    props = {"bootstrap.servers": hung_broker.bootstrap_servers}
    slack = _slack()
    with deadline.bounded(600, "test") as limit, apply_lease(producer_config(props), limit):
        proc = _kquota(tmp_path, "apply", "--auto-approve")  # the default 10-minute deadline
        _wait_for_text(tmp_path / "err.txt", "waiting for the apply lease: held by", proc, 120)
        with _Stopped(hung_broker):
            proc.send_signal(signal.SIGINT)
            stopped = time.monotonic()
            code = proc.wait(120)
            took = time.monotonic() - stopped
    err = (tmp_path / "err.txt").read_text()
    assert code == 130, err
    assert "interrupted by SIGINT before committing; nothing was written" in err
    # It tried to withdraw its claim for a few seconds at most, not its 10-minute deadline.
    assert took < UNCONFIRMED_RELEASE + slack, (took, err)
    print(f"stderr of an apply stopped by SIGINT while taking the lease ({took:.1f} s):\n{err}")


def test_a_lease_claim_waits_out_a_broker_hung_longer_than_librdkafkas_own_bound(
    hung_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # librdkafka gives up on a record after 30 s by default; the lease's claim waits as long as
    # its deadline does (CI, stop 28: a broker slow to come back failed a 10-minute lease).
    # The broker is stopped just as the first claim is sent: a wrapper around the real append
    # only times the fault, which a real broker cannot be asked to produce on cue.
    hung_for = 35.0
    resumer = threading.Timer(hung_for, os.kill, (hung_broker.pid, signal.SIGCONT))
    append = LeaseLog.append
    claims: list[float] = []

    def stop_at_the_first_claim(log: LeaseLog, owner: str, value: bytes | None, *a: Any) -> Any:
        if value is not None and b'"renews"' not in value:  # a claim, not a release or renewal
            if not claims:
                os.kill(hung_broker.pid, signal.SIGSTOP)
                resumer.start()
            claims.append(time.monotonic())
        return append(log, owner, value, *a)

    monkeypatch.setattr(LeaseLog, "append", stop_at_the_first_claim)
    props = {"bootstrap.servers": hung_broker.bootstrap_servers}
    try:
        with (
            deadline.bounded(300, "test") as limit,
            apply_lease(producer_config(props), limit) as held,
        ):
            # Confirmed after its term, the first claim was withdrawn and made afresh.
            assert len(claims) == 2 and claims[1] - claims[0] >= hung_for, claims
            assert held.lost is None and held.expires_in > 0, held.expires_in
    finally:
        resumer.cancel()
        os.kill(hung_broker.pid, signal.SIGCONT)
    assert _wait_until_writable(hung_broker) < 60
