"""``kquota history`` rendered: values in the plan's units, and the markdown read as github.com
reads it (cmark-gfm): a table per apply, its columns and order, the marks, the bad records,
what is folded, and every name from the trail inert."""

from __future__ import annotations

from dataclasses import replace

import pytest

import gfm
from hostile_names import HOSTILE
from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.display import safe_text
from kquota.history.applies import applies, entity_history
from kquota.history.results import History
from kquota.history.trail import BadRecord, RecordedChange
from kquota.model import Entity
from kquota.render.history import (
    render_history_markdown,
    render_history_text,
)

KIM = Entity.of({"user": "kim"})
LEE = Entity.of({"user": "lee"})
MIB = 1024.0 * 1024


def _event(
    plan_id: str,
    entity: Entity,
    *ops: AuditOp,
    offset: int = 0,
    verdict: Verdict = Verdict.VERIFIED,
) -> RecordedChange:
    return RecordedChange(
        plan_id, entity, ops, "2026-11-27T07:00:00Z", "ci-bot", "0123456789abcdef", "prod",
        0, offset, cluster_id="id-1", verdict=verdict, key_id="k1",
    )  # fmt: skip


def _trail() -> list[RecordedChange]:
    return [
        _event(
            "p1",
            KIM,
            AuditOp("consumer_byte_rate", 2 * MIB, 8 * MIB, False),
            AuditOp("producer_byte_rate", None, 1000.0, False),
        ),
        _event("p1", LEE, AuditOp("request_percentage", 10.0, None, True), offset=1),
        _event(
            "p2",
            KIM,
            AuditOp("consumer_byte_rate", 8 * MIB, 2 * MIB, False),
            offset=2,
            verdict=Verdict.UNSIGNED,
        ),
        _event(
            "p3",
            LEE,
            AuditOp("request_percentage", None, 50.0, False),
            offset=3,
            verdict=Verdict.BAD_SIGNATURE,
        ),
        _event("p4", LEE, AuditOp("request_percentage", 50.0, None, True), offset=4),
    ]


def _history(**over: object) -> History:
    found = History("audit", tuple(applies(_trail())), signed=True)
    return replace(found, **over)  # type: ignore[arg-type]


def test_history_text_shows_values_as_the_plan_does() -> None:
    entity = History("audit", (), KIM, tuple(entity_history(_trail(), KIM)), signed=True)
    out = render_history_text(entity)
    assert "consumer_byte_rate: 2097152 (2 MiB/s) → 8388608 (8 MiB/s)" in out
    assert "producer_byte_rate: unset → 1000 (1000 B/s)" in out
    assert "    consumer_byte_rate: 8388608 (8 MiB/s) → 2097152 (2 MiB/s)\n" in out


def test_history_markdown_is_a_table_per_apply_in_trail_order() -> None:
    doc = gfm.assert_aligned(render_history_markdown(_history()))
    headings = [h.text() for h in doc.root.all("h4")]
    assert [h.split()[1] for h in headings] == ["p1", "p2", "p3", "p4"]
    assert "[" not in headings[0]  # every event verified: no mark
    assert headings[1].endswith("[unverified]")
    assert headings[2].endswith("[DOES NOT VERIFY]")
    tables = doc.tables()
    assert len(tables) == 4
    first = tables[0]
    assert first.header == ["entity", "key", "before → after", "kind"]
    assert first.rows == [
        ["{user=kim}", "consumer_byte_rate", "2097152 (2 MiB/s) → 8388608 (8 MiB/s)", "~ update"],
        ["", "producer_byte_rate", "unset → 1000 (1000 B/s)", "+ create"],
        ["{user=lee}", "request_percentage", "10 → unset", "- remove"],
    ]
    assert tables[1].rows == [
        ["{user=kim}", "consumer_byte_rate", "8388608 (8 MiB/s) → 2097152 (2 MiB/s)", "~ update"]
    ]
    text = doc.text()
    # p4 undoes p3 exactly; p2 undoes only part of p1, which is no revert of it.
    assert [p.text().endswith("reverts p3") for p in doc.root.all("p")][:8].count(True) == 1
    assert "reverts p1" not in text
    assert "actor ci-bot" in text and "commit 0123456789ab " in text
    assert "No audit signing key" not in text


def test_history_markdown_lists_bad_records_marks_disagreement_and_an_unsigned_trail() -> None:
    bad = tuple(BadRecord(0, 100 + i, f"field 'ops' is not a list ({i})") for i in range(22))
    other = replace(_trail()[1], actor="someone-else", offset=9)
    found = History("audit", tuple(applies([*_trail(), other])), bad=bad, skipped=3)
    doc = gfm.assert_aligned(render_history_markdown(found))
    first = doc.root.all("h4")[0].text()
    assert "[inconsistent: its events name 2 different actors" in first
    items = [li.text() for li in doc.root.all("li")]
    assert items[0] == "partition 0 offset 100: field 'ops' is not a list (0)"
    assert len(items) == 21 and items[-1] == "… and 2 more"
    text = doc.text()
    assert "22 records claim to be quota.altered events and are not valid:" in text
    assert "3 records on the topic are not quota.altered events: skipped." in text
    assert "No audit signing key is configured" in doc.root.all("blockquote")[0].text()


def test_history_markdown_of_one_entity_is_one_table_of_its_changes() -> None:
    found = History("audit", (), KIM, tuple(entity_history(_trail(), KIM)), signed=True)
    doc = gfm.assert_aligned(render_history_markdown(found))
    assert "Changes to {user=kim} on audit topic audit: 2" in doc.text()
    (table,) = doc.tables()
    assert table.header == ["time", "plan id", "actor", "key", "before → after", "signature"]
    assert table.column("plan id") == ["p1", "p1", "p2"]
    assert table.column("signature") == ["verified", "verified", "[unverified]"]
    assert table.column("before → after")[2] == "8388608 (8 MiB/s) → 2097152 (2 MiB/s)"


def test_a_big_apply_is_folded_and_the_budget_counts_what_is_left_out() -> None:
    many = [
        _event("big", Entity.of({"user": f"u{i:04}"}), AuditOp("request_percentage", None, 5.0,
               False), offset=i)
        for i in range(400)
    ]  # fmt: skip
    found = History("audit", tuple(applies(many)), signed=True)
    doc = gfm.assert_aligned(render_history_markdown(found))
    assert [s.text() for s in doc.root.all("summary")] == ["400 changes"]
    assert len(doc.tables()[0].rows) == 400

    small = render_history_markdown(found, budget=10_000)
    assert len(small) <= 10_000
    doc = gfm.assert_aligned(small)
    shown = doc.tables()[0].rows
    assert shown[-1][0].startswith("… ") and shown[-1][0].endswith(" more not shown")
    left = int(shown[-1][0].split()[1])
    assert left + len(shown) - 1 == 400
    assert f"{left} changes are not shown here" in doc.text()
    assert small.count("<details>") == small.count("</details>") == 1


def _structure(node: gfm.Node) -> list[str]:
    """The elements of a document, code spans left out (prose escaping may put a word with
    ``@`` or ``://`` in one: that is the escaping, not markup)."""
    out = []
    for c in node.children:
        if isinstance(c, gfm.Node):
            if c.tag != "code":
                out.append(c.tag)
            out += _structure(c)
    return out


def _named(name: str) -> list[str]:
    """The trail of one apply whose every field is ``name``, rendered both ways."""
    entity = Entity.of({"user": name, "client-id": name})
    event = replace(
        _event("p1", entity, AuditOp("producer_byte_rate", None, MIB, False)),
        plan_id=name[:64],
        actor=name,
        cluster=name,
        git_commit=name,
    )
    # Two events that disagree, so the inconsistent mark (which quotes a name) is shown.
    other = replace(event, actor=name + "2", offset=1, verdict=Verdict.UNKNOWN_KEY)
    found = History(name, tuple(applies([event, other])), bad=(BadRecord(0, 1, f"bad {name}"),))
    one = History(name, (), entity, tuple(entity_history([event], entity)))
    return [render_history_markdown(found), render_history_markdown(one)]


@pytest.mark.parametrize("name", HOSTILE)
def test_history_markdown_keeps_every_name_from_the_trail_inert(name: str) -> None:
    for hostile, harmless in zip(_named(name), _named("harmless"), strict=True):
        doc = gfm.assert_aligned(hostile)
        assert _structure(doc.root) == _structure(gfm.parse(harmless).root)
        assert not doc.comments
        assert "@" not in doc.root.outside_code()
        assert safe_text(name)[:30] in doc.text()
