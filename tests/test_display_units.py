"""Number and name formatting shared by the renderers."""

import pytest

import gfm
from kquota.display import display_name, number, value_with_unit
from kquota.model import Entity, display_entity
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from kquota.render import markdown


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1048576.0, "1048576"),
        (0.1 + 0.2, "0.30000000000000004"),
        (12.5, "12.5"),
        (1e-05, "1e-05"),
        (9.223372036854776e18, "9223372036854775808"),
    ],
)
def test_number(value: float, text: str) -> None:
    assert number(value) == text


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [
        ("producer_byte_rate", 1048576.0, "1048576 (1 MiB/s)"),
        ("consumer_byte_rate", 500000.0, "500000 (488.28 KiB/s)"),
        ("consumer_byte_rate", 1000.0, "1000 (1000 B/s)"),
        ("producer_byte_rate", 10 * 1024.0**4, "10995116277760 (10 TiB/s)"),
        ("request_percentage", 150.0, "150"),
        ("connection_creation_rate", 10.0, "10"),
    ],
)
def test_value_with_unit(key: str, value: float, text: str) -> None:
    assert value_with_unit(key, value) == text


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (None, "<default>"),
        ("alice", "alice"),
        ("<default>", '"<default>"'),
        ("", '""'),
        ("a,b=c", '"a,b=c"'),
        (" pad", '" pad"'),
        ("evil\x1b[31m", "evil\\x1b[31m"),
        ("line\nbreak", "line\\nbreak".replace("\\n", "\\x0a")),
        ("rtl\u202eoverride", "rtl\\u202eoverride"),
        ("back\\slash", "back\\\\slash"),
        ("café", "café"),
    ],
)
def test_display_name(name: str | None, shown: str) -> None:
    assert display_name(name) == shown


def test_display_entity_escapes_types_too() -> None:
    assert display_entity(Entity.of({"user": "a", "x\x07": "b"})) == "{user=a, x\\x07=b}"


def test_markdown_escapes_and_truncates() -> None:
    alt = Alteration(
        Entity.of({"user": "a|<b>"}),
        (Op("producer_byte_rate", 1.0, False, None),),
        ChangeKind.CREATE,
    )
    doc = gfm.assert_aligned(markdown.render_plan(Plan(alterations=(alt,))))
    assert doc.tables()[1].column("entity") == ["{user=a|<b>}"]
    assert "b" not in doc.root.tags()
    many = tuple(
        Alteration(
            Entity.of({"user": f"u{i}"}),
            (Op("producer_byte_rate", float(i + 1), False, None),),
            ChangeKind.CREATE,
        )
        for i in range(50)
    )
    out = markdown.render_plan(Plan(alterations=many), budget=1500, full_plan_at="the artifact")
    doc = gfm.assert_aligned(out)
    assert len(out) <= 1500
    assert "more change" in doc.text() and "The full plan is in the artifact" in doc.text()
    # the same change: one row, its names cut to fit and counted in the note
    same = tuple(
        Alteration(Entity.of({"user": f"u{i}"}), alt.ops, ChangeKind.CREATE) for i in range(50)
    )
    out = markdown.render_plan(Plan(alterations=same), budget=1500, full_plan_at="the artifact")
    doc = gfm.assert_aligned(out)
    assert len(out) <= 1500
    [cell] = doc.tables()[1].column("entity")
    assert cell.startswith("50 entities: {user=u0}, {user=u1}, {user=u2} and 47 more")
    assert "entity names left out. The full plan is in the artifact" in doc.text()
