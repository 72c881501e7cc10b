"""The apply lease against the real broker: ``kquota lease status|release``, renewals, and a
dead holder's claim lapsing within one term.

Holders are real: this process (``apply_lease`` with its renewer thread) or a child process
that is SIGKILLed. Every wait polls under a bound derived from the lease's own term.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.apply.lease import (
    LEASE_TOPIC,
    RENEW_EVERY,
    TERM,
    HeldLease,
    LeaseLost,
    apply_lease,
)
from kquota.apply.lease_admin import lease_state, release_claim
from kquota.apply.lease_log import LeaseLog
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.librdkafka import producer_config
from kquota.runtime import deadline

pytestmark = pytest.mark.integration

CLAIM = re.compile(r"claim:  ([0-9a-f]{16})")
DATED = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def _config(broker: BrokerInfo) -> dict[str, str]:
    return producer_config({"bootstrap.servers": broker.bootstrap_servers})


def _status(broker: BrokerInfo, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run_kquota(
        ["lease", "status", "--bootstrap-server", broker.bootstrap_servers], capsys
    )
    assert code == 0, out + err
    return out


def _wait_free(broker: BrokerInfo, bound: float) -> float:
    """_wait_free polls until the lease is free and returns how long that took."""
    start = time.monotonic()
    with deadline.bounded(bound + 30, "test"):
        while True:
            limit = deadline.current()
            assert limit is not None
            if lease_state(_config(broker), limit).holder is None:
                return time.monotonic() - start
            assert time.monotonic() - start < bound, "the lease never came free"
            time.sleep(0.5)


@pytest.fixture()
def lease_free(kafka_broker: BrokerInfo) -> Iterator[BrokerInfo]:
    """The session broker, with nobody holding the lease (an earlier test's lapsed)."""
    _wait_free(kafka_broker, TERM + 30)
    yield kafka_broker


def test_status_names_the_holder_and_release_force_frees_it(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broker = lease_free
    assert _status(broker, capsys).startswith("apply lease on topic _kquota_apply_lease: free")
    addr = ["--bootstrap-server", broker.bootstrap_servers]
    with deadline.bounded(300, "test") as limit, apply_lease(_config(broker), limit) as held:
        out = _status(broker, capsys)
        assert "apply lease on topic _kquota_apply_lease: held" in out, out
        claim = held.owner
        assert CLAIM.search(out) and CLAIM.search(out).group(1) == claim  # type: ignore[union-attr]
        assert f"pid {os.getpid()}" in out
        assert re.search(rf"  since:  {DATED}\n  until:  {DATED} unless renewed", out), out
        assert f"kquota lease release --force {claim}" in out

        # Without --force: this user's claim, but its process (this one) still runs.
        code, out, err = run_kquota(["lease", "release", "--auto-approve", *addr], capsys)
        assert (
            code == 1
            and f"is held by pid {os.getpid()} on this host, which is still running" in err
        )
        # A claim id that does not hold it.
        code, out, err = run_kquota(
            ["lease", "release", "--force", "0123456789abcdef", "--auto-approve", *addr], capsys
        )
        assert code == 1, out + err
        assert "that claim does not hold the apply lease; it is held by" in err and claim in err
        # No terminal, no --auto-approve: refused before connecting.
        code, out, err = run_kquota(["lease", "release", "--force", claim, *addr], capsys)
        assert code == 1 and "there is no terminal to ask on" in err and "--auto-approve" in err

        # Renewals keep a live holder's lease past its first term.
        first_until = lease_state(_config(broker), limit).holder.until_ms  # type: ignore[union-attr]
        _eventually_renewed(broker, first_until)

        code, out, err = run_kquota(
            ["lease", "release", "--force", claim, "--auto-approve", *addr], capsys
        )
        assert code == 0, out + err
        assert "released the apply lease held by " in out and claim in out
        assert _status(broker, capsys).startswith("apply lease on topic _kquota_apply_lease: free")
        # The live holder learns it at its next renewal and would stop before its next batch.
        _eventually_lost(held)


def _eventually_renewed(broker: BrokerInfo, first_until: int) -> None:
    end = time.monotonic() + RENEW_EVERY * 6
    while True:
        limit = deadline.current()
        assert limit is not None
        holder = lease_state(_config(broker), limit).holder
        assert holder is not None
        if holder.renewed_ms is not None and holder.until_ms > first_until:
            return
        assert time.monotonic() < end, "the holder never renewed its claim"
        time.sleep(0.5)


def _eventually_lost(held: HeldLease) -> None:
    end = time.monotonic() + RENEW_EVERY * 6
    while True:
        try:
            held.check()
        except LeaseLost as e:
            assert "released by another (kquota lease release --force)" in str(e)
            return
        assert time.monotonic() < end, "the holder never noticed its claim was released"
        time.sleep(0.2)


HOLDER = """
import sys, time
from kquota.runtime import deadline
from kquota.apply.lease import apply_lease
from kquota.kafka.librdkafka import producer_config
with deadline.bounded(600, "holder") as limit:
    with apply_lease(producer_config({"bootstrap.servers": sys.argv[1]}), limit) as held:
        print(held.owner, flush=True)
        time.sleep(600)
"""


def test_a_killed_holders_claim_lapses_within_one_term_and_a_waiter_says_how_to_free_it(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = lease_free
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, broker.bootstrap_servers],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        claim = proc.stdout.readline().strip()  # the child prints once it holds the lease
        assert re.fullmatch(r"[0-9a-f]{16}", claim), claim
        time.sleep(RENEW_EVERY * 1.5)  # it lived a while and renewed: the term counts from there
        proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
    finally:
        proc.kill()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()
    with deadline.bounded(TERM + 120, "test") as limit, apply_lease(_config(broker), limit):
        took = time.monotonic() - killed
    err = capsys.readouterr().err
    # The dead holder's claim is gone one term after its last renewal at the latest (plus
    # this process's retry interval and a loaded machine's slack), never its --timeout.
    assert took < TERM + 15, took
    assert "waiting for the apply lease: held by " in err and f"(claim {claim})" in err, err
    assert "see `kquota lease status`" in err
    assert f"`kquota lease release --force {claim}` if that apply is gone" in err
    print(f"a SIGKILLed holder's claim lapsed {took:.1f} s after the kill (term {TERM:g} s)")


def _claim_as(broker: BrokerInfo, claim: str, **info: object) -> None:
    """_claim_as writes a claim record as another apply would (``info``: its user, host and
    pid), for a holder this test cannot be: an apply on another machine."""
    log = LeaseLog(_config(broker), LEASE_TOPIC)  # the session broker has the topic
    try:
        # Long enough that it cannot lapse while the test runs; the test frees it.
        value = {"ttl_ms": 600_000, **info}
        log.append(claim, json.dumps(value).encode(), 60)
    finally:
        log.close()


def _user() -> str:
    return getpass.getuser()


def test_a_claim_from_another_host_is_never_released_as_ones_own(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same user, another host: the pid in the claim is not a process of this machine, so
    neither its being alive here nor its being gone here says anything. Without --force
    release refuses it as another's claim, and --force frees it."""
    broker = lease_free
    addr = ["--bootstrap-server", broker.bootstrap_servers]
    claim = secrets.token_hex(8)
    host = f"not-{socket.gethostname()}"
    # A pid that runs here (this process): a host check that only looked at the pid would
    # call the claim alive and own.
    _claim_as(broker, claim, user=_user(), host=host, pid=os.getpid())
    try:
        code, out, err = run_kquota(["lease", "release", "--auto-approve", *addr], capsys)
        assert code == 1, out + err
        assert (
            f"error: the apply lease is held by {_user()}@{host} pid {os.getpid()} (claim "
            f"{claim}), not by you: if that apply is gone, release it with --force {claim}"
        ) in err
        assert f"holder: {_user()}@{host} pid {os.getpid()}" in _status(broker, capsys)
        code, out, err = run_kquota(
            ["lease", "release", "--force", claim, "--auto-approve", *addr], capsys
        )
        assert code == 0, out + err
        assert f"released the apply lease held by {_user()}@{host} pid {os.getpid()}" in out
        assert _status(broker, capsys).startswith("apply lease on topic _kquota_apply_lease: free")
    finally:
        _free(broker, claim)


def test_ones_own_claim_whose_process_is_gone_is_released_without_force(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = lease_free
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(60)  # exited and reaped: its pid runs nothing here
    claim = secrets.token_hex(8)
    _claim_as(broker, claim, user=_user(), host=socket.gethostname(), pid=gone.pid)
    try:
        code, out, err = run_kquota(
            ["lease", "release", "--auto-approve", "--bootstrap-server", broker.bootstrap_servers],
            capsys,
        )
        assert code == 0, out + err
        assert (
            f"released the apply lease held by {_user()}@{socket.gethostname()} pid {gone.pid}"
            in out
        )
        assert _status(broker, capsys).startswith("apply lease on topic _kquota_apply_lease: free")
    finally:
        _free(broker, claim)


def _free(broker: BrokerInfo, claim: str) -> None:
    """_free ends ``claim`` if it still holds the lease: a failed test leaves no long claim
    for the next one to wait out."""
    with deadline.bounded(120, "test") as limit:
        holder = lease_state(_config(broker), limit).holder
        if holder is not None and holder.owner == claim:
            release_claim(_config(broker), limit, claim)


def _forge(broker: BrokerInfo, records: list[tuple[bytes, bytes | None]]) -> None:
    """_forge appends records to the lease topic as anyone with Write on it could."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for key, value in records:
        producer.produce(LEASE_TOPIC, key=key, value=value, partition=0)
    assert producer.flush(60) == 0, "the forged records were not all confirmed"


def _claim(ttl: str, **holder: object) -> bytes:
    fields = {"host": "h", "pid": 1, "user": "u", **holder}
    return ("{" + f'"ttl_ms": {ttl}, ' + json.dumps(fields)[1:]).encode()


def test_claims_with_an_absurd_term_id_or_holder_are_bad_records_never_a_crash(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = lease_free
    _forge(
        broker,
        [
            (b"forged-huge-ttl", _claim(str(10**30))),  # until: a year no calendar has
            (b"forged-negative", _claim("-5")),
            (b"forged-nan", _claim("NaN")),
            (b"forged-float", _claim("1e300")),
            (b"forged-text", _claim('"30000"')),
            (b"x" * 200_000, _claim("30000")),  # an id nobody can type back
            (b"forged\x1b[2J\nclaim", _claim("30000")),
            (b"forged-user", _claim("30000", user="u" * 500_000)),
            (b"forged-pid", _claim("30000", pid=10**100)),
            (b"forged-digits", _claim("9" * 5000)),  # more digits than int() takes
            (b"forged-deep", b"[" * 100_000),  # deeper than the JSON decoder recurses
        ],
    )
    out = _status(broker, capsys)
    assert out.startswith("apply lease on topic _kquota_apply_lease: free\n"), out
    assert re.search(r"  ignored: \d+ bad records \(offset \d+: .*\); a bad record never", out)
    assert "\x1b" not in out and len(out) < 1000, out
    # An apply takes the lease at once: no bad record holds it.
    with deadline.bounded(60, "test") as limit, apply_lease(_config(broker), limit):
        pass
    assert "waiting for the apply lease" not in capsys.readouterr().err


def test_a_forged_holders_escapes_and_lines_are_shown_escaped_and_it_can_be_released(
    lease_free: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = lease_free
    forged_line = "\nwaiting for the apply lease: held by root@prod"
    _forge(
        broker,
        [(b"forged-escapes", _claim("600000", user="ev\x1b[2Jil" + forged_line, host="h\u202eq"))],
    )
    shown = "ev\\x1b[2Jil\\x0awaiting for the apply lease: held by root@prod@h\\u202eq pid 1"
    addr = ["--bootstrap-server", broker.bootstrap_servers]
    try:
        out = _status(broker, capsys)
        assert f"  holder: {shown}\n" in out, out
        assert "\x1b" not in out and "\u202e" not in out and "\nwaiting" not in out

        # The waiting line of an apply that cannot get the lease shows it the same way.
        with (
            pytest.raises(deadline.DeadlineExceeded) as caught,
            deadline.bounded(3, "test") as limit,
            apply_lease(_config(broker), limit),
        ):
            pass
        err = capsys.readouterr().err
        assert f"waiting for the apply lease: held by {shown} since " in err, err
        assert "`kquota lease release --force forged-escapes` if that apply is gone" in err
        assert "\x1b" not in err + str(caught.value) and "\nwaiting" not in err
    finally:
        code, out, err = run_kquota(
            ["lease", "release", "--force", "forged-escapes", "--auto-approve", *addr], capsys
        )
    assert code == 0, out + err
    assert out == f"released the apply lease held by {shown} (claim forged-escapes)\n"
    assert _status(broker, capsys).startswith("apply lease on topic _kquota_apply_lease: free")


def test_a_missing_lease_topic_is_refused_and_never_created(kafka_broker: BrokerInfo) -> None:
    from confluent_kafka.admin import AdminClient

    from kquota.apply.lease import LeaseTopicMissing

    topic = f"kquota-lease-typo-{secrets.token_hex(4)}"
    with deadline.bounded(120, "test") as limit, pytest.raises(LeaseTopicMissing) as e:
        held = apply_lease(_config(kafka_broker), limit, topic=topic)
        held.__enter__()  # the refusal is raised on taking the lease, before any write
    assert str(e.value) == (
        f"the apply lease topic {topic} does not exist, and apply never creates it; create it "
        "with `kquota topics create`, or run apply with --no-lease; nothing was written"
    )
    listed = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers}).list_topics(
        timeout=10
    )
    assert topic not in listed.topics
