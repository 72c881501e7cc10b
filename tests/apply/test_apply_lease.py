"""The apply lease's replay rule (every reader of the log agrees on the holder, renewals
extend it, a lapsed claim stays lapsed) and what it tells the operator."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from kquota.apply.applier import apply_plan
from kquota.apply.lease import (
    RELEASE_CAP,
    RELEASE_MIN,
    LeaseLost,
    LeaseRecord,
    holder_after,
    release_budget,
    waiting_message,
)
from kquota.apply.lease_admin import LeaseState, status_lines
from kquota.apply.lease_log import merged_bootstrap
from kquota.errors import LEASE_LOST
from kquota.kafka.admin import AlterResult
from kquota.model import Entity, QuotaState
from kquota.operations.apply import lease_checked
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy
from kquota.render.apply_report import stop_lines

INFO = {"host": "ci", "pid": 1, "user": "bot", "ttl_ms": 1000}


def claim(owner: str, ts: int, ttl: int = 1000) -> LeaseRecord:
    return LeaseRecord(owner, ts, ttl, INFO)


def release(owner: str, ts: int) -> LeaseRecord:
    return LeaseRecord(owner, ts)


def test_the_first_claim_wins_and_a_later_one_loses_while_it_holds() -> None:
    log = [claim("a", 0), claim("b", 10)]
    holder = holder_after(log)
    assert holder is not None and holder.owner == "a" and holder.until_ms == 1000


def test_a_release_lets_the_next_claim_win() -> None:
    log = [claim("a", 0), claim("b", 10), release("b", 11), release("a", 20), claim("b", 30)]
    holder = holder_after(log)
    assert holder is not None and holder.owner == "b"


def test_a_loser_releasing_does_not_free_the_holder() -> None:
    holder = holder_after([claim("a", 0), claim("b", 10), release("b", 11)])
    assert holder is not None and holder.owner == "a"


def test_a_dead_holder_expires_at_its_ttl_by_the_broker_clock() -> None:
    assert holder_after([claim("a", 0, ttl=100), claim("b", 99)]).owner == "a"  # type: ignore[union-attr]
    assert holder_after([claim("a", 0, ttl=100), claim("b", 100)]).owner == "b"  # type: ignore[union-attr]
    assert holder_after([claim("a", 0, ttl=100), release("x", 150)]) is None


def test_an_empty_or_released_log_has_no_holder() -> None:
    assert holder_after([]) is None
    assert holder_after([claim("a", 0), release("a", 5)]) is None


def test_the_release_waits_while_the_deadline_allows_within_bounds() -> None:
    # A release after the leader of the lease partition died needs seconds (leader election):
    # it may wait while the deadline allows, never past the cap, and always tries.
    assert release_budget(600.0) == RELEASE_CAP
    assert release_budget(12.5) == 12.5
    assert release_budget(0.5) == RELEASE_MIN
    assert release_budget(-3.0) == RELEASE_MIN


def renew(owner: str, ts: int, ttl: int = 1000) -> LeaseRecord:
    return LeaseRecord(owner, ts, ttl, {"ttl_ms": ttl, "renews": True}, renews=True)


def test_a_renewal_in_time_extends_the_lease_from_its_own_timestamp() -> None:
    holder = holder_after([claim("a", 0), renew("a", 900), claim("b", 1500)])
    assert holder is not None and holder.owner == "a" and holder.until_ms == 1900
    assert holder.renewed_ms == 900


def test_a_late_renewal_does_not_revive_a_lapsed_claim() -> None:
    # The holder's renewals stopped landing: its claim lapsed, b took the lease, and a
    # renewal that arrives afterwards changes nothing.
    log = [claim("a", 0), claim("b", 1000), renew("a", 1100)]
    assert holder_after(log).owner == "b"  # type: ignore[union-attr]
    assert holder_after([claim("a", 0), renew("a", 1000)]) is None


def test_only_the_holders_own_renewal_counts_and_a_renewal_never_claims() -> None:
    assert holder_after([renew("a", 0)]) is None
    holder = holder_after([claim("a", 0), renew("b", 500)])
    assert holder is not None and holder.until_ms == 1000


def test_a_forced_release_under_the_holders_id_frees_it_for_every_reader() -> None:
    assert (
        holder_after([claim("a", 0), renew("a", 500), release("a", 600), renew("a", 700)]) is None
    )


def test_now_drops_a_holder_whose_lease_ran_out() -> None:
    assert holder_after([claim("a", 0)], now_ms=999) is not None
    assert holder_after([claim("a", 0)], now_ms=1000) is None


def test_the_lease_clients_get_every_learned_broker_after_the_operators() -> None:
    assert merged_bootstrap("n1:9092", ["n1:9092", "n2:9092", "n3:9092"]) == (
        "n1:9092,n2:9092,n3:9092"
    )
    assert merged_bootstrap(" a:1 , b:2", []) == "a:1,b:2"


def test_the_waiting_message_names_the_holder_and_both_commands() -> None:
    holder = holder_after([LeaseRecord("3f2a9c1e0b7d4a55", 0, 30_000, INFO)])
    assert holder is not None
    text = waiting_message(holder)
    assert text == (
        "waiting for the apply lease: held by bot@ci pid 1 since 1970-01-01 00:00:00 UTC, until "
        "1970-01-01 00:00:30 UTC unless renewed (claim 3f2a9c1e0b7d4a55); see `kquota lease "
        "status`, or `kquota lease release --force 3f2a9c1e0b7d4a55` if that apply is gone"
    )


def test_status_lines_show_holder_since_and_until_with_the_date() -> None:
    holder = holder_after([LeaseRecord("c1", 0, 30_000, INFO), renew("c1", 5_000, 30_000)])
    assert holder is not None
    lines = status_lines(LeaseState("_kquota_apply_lease", True, holder, 2))
    assert lines == [
        "apply lease on topic _kquota_apply_lease: held",
        "  claim:  c1",
        "  holder: bot@ci pid 1",
        "  since:  1970-01-01 00:00:00 UTC",
        "  until:  1970-01-01 00:00:35 UTC unless renewed (last renewed 1970-01-01 00:00:05 UTC;"
        " a live holder renews every 5 s)",
        "  free it if that apply is gone: kquota lease release --force c1",
    ]
    assert status_lines(LeaseState("t", True, None, 3)) == ["apply lease on topic t: free"]
    assert status_lines(LeaseState("t", False, None, 0)) == [
        "apply lease on topic t: free (the topic does not exist yet)"
    ]


def test_bad_records_are_counted_and_the_first_named_in_status() -> None:
    bad = (
        LeaseRecord("x", 0, offset=4, bad="its ttl_ms is not a whole number of milliseconds"),
        LeaseRecord("y", 0, offset=9, bad="not a kquota lease record (not JSON)"),
    )
    assert status_lines(LeaseState("t", True, None, 12, bad)) == [
        "apply lease on topic t: free",
        "  ignored: 2 bad records (offset 4: its ttl_ms is not a whole number of milliseconds "
        "and 1 more); a bad record never holds the lease",
    ]


class fake_lost_lease:  # noqa: N801 - stands for a HeldLease whose renewer found it lost
    def __init__(self, lost_at_check: int) -> None:
        self.checks, self.lost_at_check = 0, lost_at_check

    def check(self) -> None:
        self.checks += 1
        if self.checks >= self.lost_at_check:
            raise LeaseLost(f"{LEASE_LOST}: its claim was released by another (kquota lease ...)")


class fake_cluster:  # noqa: N801 - a cluster that takes every write and shows it at once
    def __init__(self) -> None:
        self.state: QuotaState = {}

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> list[AlterResult]:
        if not validate_only:
            for a in alterations:
                self.state[a.entity] = {op.key: op.value for op in a.ops}
        return [AlterResult(a.entity, 0, "NONE", None) for a in alterations]

    def describe_all(self) -> QuotaState:
        return dict(self.state)

    def describe_each_broker(self) -> list[QuotaState]:
        return [dict(self.state)]


def test_a_lost_lease_stops_the_commit_before_the_next_batch_and_says_so() -> None:
    users = {Entity.of({"user": f"u{i}"}): {"producer_byte_rate": 1.0 + i} for i in range(5)}
    cluster = fake_cluster()
    lease = fake_lost_lease(lost_at_check=2)
    report = apply_plan(
        cluster,
        make_plan(users, {}, Policy()),
        batch_size=1,
        on_batch=lease_checked(None, lease),  # type: ignore[arg-type]
        connection_errors=(LeaseLost,),
        poll_interval=0.01,
    )
    assert len(report.committed) == 2 and len(report.not_attempted) == 3
    assert not report.uncertain and len(cluster.state) == 2
    assert stop_lines(report) == [
        f"stopped: {LEASE_LOST}: its claim was released by another (kquota lease ...)"
    ]


def test_a_lease_query_is_asked_again_while_the_leader_moves() -> None:
    # librdkafka's offset queries raise NOT_LEADER_FOR_PARTITION at once while a partition's
    # leader moves (a topic just created, a failover); the lease asks again within its bound.
    from confluent_kafka import KafkaError, KafkaException

    from kquota.apply.lease_log import LeaseError, _sliced

    answers: list[Any] = [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE]

    def query(timeout: float) -> str:
        if answers:
            raise KafkaException(KafkaError(answers.pop(0)))
        return "answered"

    assert _sliced(query, 30, retry_on=(KafkaException,), what="the end") == "answered"
    assert not answers
    answers.append(KafkaError.TOPIC_AUTHORIZATION_FAILED)  # not cured by asking again
    with pytest.raises(LeaseError, match="(?i)authoriz"):
        _sliced(query, 30, retry_on=(KafkaException,), what="the end")
    assert not answers


def test_an_own_holder_that_exited_but_was_not_reaped_is_gone() -> None:
    # A zombie (exited, its parent has not waited for it) never releases its claim: `kquota
    # lease release --force` may take it, as for a holder that is gone altogether.
    import getpass
    import socket
    import subprocess
    import sys

    from kquota.apply.lease import Holder
    from kquota.apply.lease_admin import holder_alive

    def holder(pid: int) -> Holder:
        info = {"host": socket.gethostname(), "user": getpass.getuser(), "pid": pid}
        return Holder("c1", 0, 1000, info)

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert holder_alive(holder(child.pid))
        child.kill()
        # Wait for it to exit, without reaping it: it stays a zombie until child.wait().
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert not holder_alive(holder(child.pid))  # a zombie: not reaped yet
    finally:
        child.kill()
        child.wait()
    assert not holder_alive(holder(child.pid))


@pytest.mark.parametrize(("given", "used"), [({}, "20"), ({"reconnect.backoff.ms": "250"}, "250")])
def test_the_lease_clients_reconnect_after_their_bootstrap_sooner_unless_told(
    given: dict[str, str], used: str
) -> None:
    """librdkafka waits half the reconnect backoff before it connects again after dropping
    the bootstrap connection (50 ms of every lease at its default of 100 ms); an operator's
    own backoff stands."""
    from kquota.apply.lease_log import LeaseLog

    log = LeaseLog({"bootstrap.servers": "127.0.0.1:9", **given}, "_kquota_apply_lease")
    try:
        assert log._base["reconnect.backoff.ms"] == used
    finally:
        log.close()
