"""A hung broker (SIGSTOP: the port accepts, nothing answers) against the overall deadline.

The broker is this module's own (it gets stopped), never the session's. Each test resumes it
before it ends. Bounds: the command must end within its --timeout plus the settling grace
and process start-up, and say what it was waiting on.
"""

from __future__ import annotations

import os
import pty
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota.kafka.admin import QuotaAdmin

pytestmark = pytest.mark.integration

SLACK = 12.0
"""Start-up of a Python process (~2 s on a loaded machine), settling (5 s), margin."""
HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@pytest.fixture(scope="module")
def hung_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    broker_dir = tmp_path_factory.mktemp("hung-broker")
    info = start_broker(broker_dir, die_with_parent=True)
    try:
        yield info
    finally:
        os.kill(info.pid, signal.SIGCONT)
        stop_broker(broker_dir)


class _Stopped:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def __exit__(self, *exc: object) -> None:
        os.kill(self.pid, signal.SIGCONT)


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
    with QuotaAdmin(broker.bootstrap_servers) as admin:
        while proc.poll() is None and not any(
            (n or "").startswith(prefix) for e in admin.describe_all() for _, n in e.parts
        ):
            time.sleep(0.05)
    assert proc.poll() is None, "apply ended before it was stopped"


def test_drift_against_a_hung_broker_ends_at_its_deadline_and_says_on_what(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    _repo(tmp_path, hung_broker, "h-", 1)
    with _Stopped(hung_broker.pid):
        start = time.monotonic()
        proc = _kquota(tmp_path, "drift", "--timeout", "6s")
        code = proc.wait(6 + SLACK + 30)
        took = time.monotonic() - start
    err = (tmp_path / "err.txt").read_text()
    assert code == 1 and took < 6 + SLACK, (took, err)
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
    start = time.monotonic()
    proc = _kquota(
        tmp_path, "apply", "--auto-approve", "--batch-size", "100", "--timeout", f"{timeout}s",
        "--no-lease",
    )  # fmt: skip
    _wait_for_first_commit(hung_broker, proc, prefix)
    with _Stopped(hung_broker.pid):
        code = proc.wait(timeout + SLACK + 60)
        took = time.monotonic() - start
    out = (tmp_path / "out.txt").read_text()
    report = out[out.index("\ncommitted ") :]
    assert code == 1 and took < timeout + SLACK, (took, report)
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
    leader, follower = pty.openpty()
    with _Stopped(hung_broker.pid):
        proc = subprocess.Popen(
            [sys.executable, "-m", "kquota.cli.main", "drift", "--timeout", "5s"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=follower,
        )
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        code = proc.wait(30)
    os.close(leader)
    text = seen.decode(errors="replace")
    assert code == 1
    assert "waiting 1 s for " in text or "waiting 2 s for " in text, text
    assert "(deadline in " in text and "\x1b[2K" in text


def test_sigint_on_a_hung_broker_then_a_second_sigint_stops_settling(
    tmp_path: Path, hung_broker: BrokerInfo
) -> None:
    prefix = f"s{secrets.token_hex(3)}-"
    _repo(tmp_path, hung_broker, prefix, 3000)
    proc = _kquota(tmp_path, "apply", "--auto-approve", "--batch-size", "100", "--no-lease")
    _wait_for_first_commit(hung_broker, proc, prefix)
    with _Stopped(hung_broker.pid):
        time.sleep(1)  # a commit request is now waiting on the hung broker
        proc.send_signal(signal.SIGINT)
        time.sleep(1)  # settling now waits on a describe the broker will not answer
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(60)
        took = time.monotonic() - stopped
    out = (tmp_path / "out.txt").read_text()
    report = out[out.index("\ncommitted ") :]
    assert code == 130 and took < 5, (took, report)
    assert "interrupted by SIGINT: the commit stopped" in report
    assert "a second signal stopped settling the batch in flight: it stays uncertain" in report
    assert re.search(r"\n  (\d+) entities may or may not have been committed", report), report
    proc = _kquota(tmp_path, "apply", "--auto-approve", "--no-lease")
    assert proc.wait(240) == 0, (tmp_path / "out.txt").read_text()[-500:]
    assert _kquota(tmp_path, "drift").wait(120) == 0
