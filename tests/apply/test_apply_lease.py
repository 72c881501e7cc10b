"""The apply lease's replay rule: every reader of the log agrees on the holder."""

from __future__ import annotations

from kquota.apply.lease import RELEASE_CAP, RELEASE_MIN, LeaseRecord, holder_after, release_budget

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
