"""Each discovery source reads as one line: a count or why not, and what it saw aside."""

from __future__ import annotations

from kquota.plan.types import PlanImpact
from kquota.principals.model import SourceReport
from kquota.render.text import source_line


def test_a_source_line_shows_count_reason_and_note() -> None:
    wildcard = "1 ACL names User:*, which is every user, not a principal to resolve"
    assert source_line(SourceReport("acl-principals", 4, None, wildcard)) == (
        f"acl-principals: 4 found ({wildcard})"
    )
    assert source_line(SourceReport("scram-users", None, "not authorised")) == (
        "scram-users: could not look: not authorised"
    )
    assert source_line(SourceReport("group-members", 0)) == "group-members: 0 found"


def test_the_plan_json_carries_a_note_only_where_a_source_has_one() -> None:
    sources = (SourceReport("a", 1), SourceReport("b", None, "offline", "seen aside"))
    data = PlanImpact((), sources=sources).to_data()["impact_sources"]
    assert data == [
        {"source": "a", "found": 1, "reason": None},
        {"source": "b", "found": None, "reason": "offline", "note": "seen aside"},
    ]
