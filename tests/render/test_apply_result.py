"""The apply's outcome as data: each outcome from the applier's own report."""

from __future__ import annotations

from kquota.apply.applier import ApplyReport, EntityFailure
from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op
from kquota.render.apply_result import result_data

A, B, C = (Entity.of({"user": n}) for n in "abc")
LOWER = Alteration(A, (Op("producer_byte_rate", 1024.0, False, 4096.0),), ChangeKind.UPDATE)


def test_partial_failure_says_what_was_committed_and_what_was_not() -> None:
    report = ApplyReport(
        committed=[LOWER],
        failed=[EntityFailure(B, "INVALID_REQUEST", "bad key")],
        not_attempted=[C],
        interrupted="the connection broke",
        stopped_by="connection",
    )
    data = result_data(cluster="prod", total=3, report=report, audit=None, error=None, exit_code=1)
    assert data["outcome"] == "failed" and data["total"] == 3
    assert data["committed"] == [
        {
            "entity": {"user": "a"},
            "change": "update",
            "ops": [
                {
                    "key": "producer_byte_rate",
                    "value": 1024.0,
                    "remove": False,
                    "before": 4096.0,
                    "direction": "lower",
                    "percent": -75.0,
                }
            ],
        }
    ]
    assert data["failed"] == [
        {"entity": {"user": "b"}, "error": "INVALID_REQUEST", "message": "bad key"}
    ]
    assert data["not_attempted"] == [{"user": "c"}] and data["stopped"] == "the connection broke"


def test_outcomes() -> None:
    ok = ApplyReport(committed=[LOWER])
    applied = result_data(cluster=None, total=1, report=ok, audit=(True, "1 event"), error=None,
                          exit_code=0)  # fmt: skip
    assert (applied["outcome"], applied["verified"]) == ("applied", True)
    assert applied["audit"] == {"confirmed": True, "message": "1 event"}
    unaudited = result_data(cluster=None, total=1, report=ok, audit=(False, "not confirmed"),
                            error="not confirmed", exit_code=3)  # fmt: skip
    assert unaudited["outcome"] == "failed" and unaudited["committed"]
    nothing = result_data(cluster=None, total=0, report=None, audit=None, error=None, exit_code=0)
    assert nothing["outcome"] == "nothing to do"
    refused = result_data(cluster=None, total=None, report=None, audit=None, error="no",
                          exit_code=1)  # fmt: skip
    assert (refused["outcome"], refused["verified"]) == ("refused", None)
    unverified = ApplyReport(committed=[LOWER], unconverged=[A])
    data = result_data(cluster=None, total=1, report=unverified, audit=None, error=None,
                       exit_code=1)  # fmt: skip
    assert data["verified"] is False and data["unconverged"] == [{"user": "a"}]
