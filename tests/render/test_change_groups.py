"""Each change's direction and size, and repeated changes grouped, in every plan format.

Markdown is read as github.com reads it (cmark-gfm, :mod:`gfm`): the change column, one row
per group with its count, three names and the rest behind a fold; removals first.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import gfm
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from kquota.planfile.reader import load_plan_file
from kquota.policy import Policy
from kquota.render import json as render_json
from kquota.render import markdown, text
from kquota.render.change_groups import (
    change_mark,
    change_words,
    direction,
    group_alterations,
    percent,
)
from kquota.render.verdict import json_plan

P, C = "producer_byte_rate", "consumer_byte_rate"
MIB = 1048576.0


def test_direction_and_size_of_each_change() -> None:
    lower = Op(P, 2 * MIB, False, 8 * MIB)
    assert (direction(lower), percent(lower)) == ("lower", -75.0)
    assert change_mark(lower) == "▼75%" and change_words(lower) == "lower by 75%"
    higher = Op(P, 3 * MIB, False, 2 * MIB)
    assert change_mark(higher) == "▲50%" and change_words(higher) == "higher by 50%"
    assert change_mark(Op(P, 1.0, False, 3.0)) == "▼66.7%"
    assert change_mark(Op(P, 1001.0, False, 1000.0)) == "▲0.1%"
    assert change_mark(Op(P, 100001.0, False, 100000.0)) == "▲<0.1%"
    assert change_mark(Op(P, 5000.0, False, 10.0)) == "▲49900%"
    removed = Op(P, None, True, MIB)
    assert (direction(removed), percent(removed), change_mark(removed)) == (
        "removed",
        None,
        "▲\u00a0removed",
    )
    new = Op(P, MIB, False, None)
    assert (direction(new), change_mark(new), change_words(new)) == ("new", "new limit", "")
    assert change_mark(Op(P, 1.0, False, 1.0)) == "=\u00a0same"
    # where a percentage would mislead: from zero, to or from a non-finite value
    assert percent(Op(P, 5.0, False, 0.0)) is None and change_mark(Op(P, 5.0, False, 0.0)) == "▲"
    assert percent(Op(P, math.inf, False, 1.0)) is None
    assert percent(Op(P, 1.0, False, math.nan)) is None


def _users(names: range, values: dict[str, float]) -> QuotaState:
    return {Entity.of({"user": f"u{i:02}"}): dict(values) for i in names}


def _plan() -> Plan:
    """Twelve users moved from 8 to 2 MiB/s, five deleted, the default loosened, one user
    alone with another change."""
    snapshot = _users(range(12), {P: 8 * MIB}) | _users(range(20, 25), {C: MIB})
    snapshot[Entity.of({"user": None})] = {P: MIB}
    snapshot[Entity.of({"user": "solo"})] = {P: 4 * MIB}
    desired = _users(range(12), {P: 2 * MIB})
    desired[Entity.of({"user": None})] = {P: 2 * MIB}
    desired[Entity.of({"user": "solo"})] = {P: 2 * MIB}
    desired[Entity.of({"user": "other"})] = {P: 2 * MIB}
    return make_plan(desired, snapshot, Policy(prune=True, allow_mass_removal=True), cluster="c")


def test_groups_keep_defaults_and_lookalikes_apart() -> None:
    default, named = Entity.of({"user": None}), Entity.of({"user": "a"})
    ops = (Op(P, 1.0, False, 2.0),)
    alts = [
        Alteration(e, ops, ChangeKind.UPDATE) for e in (named, default, Entity.of({"user": "b"}))
    ]
    groups = group_alterations(alts)
    assert [g.entities for g in groups] == [(named, Entity.of({"user": "b"})), (default,)]
    assert [g.default for g in groups] == [False, True]
    assert [g.entities for g in group_alterations(alts, alone={named})] == [
        (named,),
        (default,),
        (Entity.of({"user": "b"}),),
    ]
    # equal values are one change (0.0 and -0.0 print alike); the same NaN too
    z = [
        Alteration(Entity.of({"user": n}), (Op(P, v, False, 1.0),), ChangeKind.UPDATE)
        for n, v in (("a", 0.0), ("b", -0.0), ("c", math.nan), ("d", math.nan))
    ]
    assert [len(g.entities) for g in group_alterations(z)] == [2, 2]


def test_markdown_groups_rows_and_marks_direction() -> None:
    out = markdown.render_plan(_plan())
    doc = gfm.assert_aligned(out)
    changes = doc.tables()[1]
    assert changes.header == ["", "entity", "key", "before", "after", "change"]
    entity, change = changes.column("entity"), changes.column("change")
    # removals first, grouped, never cut: all five names in the row
    assert entity[0].startswith("5 entities: {user=u20}, {user=u21}, {user=u22} and 2 more")
    assert "{user=u24}" in entity[0] and change[0] == "▲\u00a0removed"
    assert changes.column("after")[0] == "unlimited"
    twelve = entity.index(next(e for e in entity if e.startswith("12 entities")))
    assert change[twelve] == "▼75%"
    assert changes.column("before")[twelve] == "8388608 (8 MiB/s)"
    # the nine others behind the row's fold, folded
    fold = [d for d in doc.root.all("details") if "u03" in d.text()]
    assert len(fold) == 1 and fold[0].all("summary")[0].text() == "and 9 more"
    default = next(e for e in entity if "<default>" in e)
    assert default.endswith("(default: reaches every principal without a quota of its own)")
    assert change[entity.index(default)] == "▲100%"
    solo = entity.index("{user=solo}")
    assert change[solo] == "▼50%"
    assert changes.column("change")[-1] == "new limit"


def test_text_groups_blocks_and_marks_direction() -> None:
    out = text.render_plan(_plan())
    lines = out.splitlines()
    assert lines[2] == (
        "- 5 entities, the same change: {user=u20}, {user=u21}, {user=u22}, {user=u23}, {user=u24}"
    )
    assert lines[3] == "    - consumer_byte_rate: 1048576 (1 MiB/s) -> unlimited (removed)"
    i = lines.index(
        "~ 12 entities, the same change: {user=u00}, {user=u01}, {user=u02} and 9 more "
        "(--format json lists all)"
    )
    assert lines[i + 1] == (
        "    ~ producer_byte_rate: 8388608 (8 MiB/s) -> 2097152 (2 MiB/s), lower by 75%"
    )
    assert (
        "~ {user=<default>}  (default: reaches every principal without a quota of its own)" in lines
    )
    assert "Plan: 1 to create, 14 to update, 5 to delete (15 quota values set, 5 removed)." in out


def test_json_groups_every_entity_and_still_reads_as_a_plan(tmp_path: Path) -> None:
    p = dataclasses.replace(_plan(), cluster_id="id-1", snapshot_fingerprint="sha256:" + "0" * 64)
    assert "groups" not in json.loads(render_json.render_plan(p))  # a fleet's plan file
    out = json_plan(p)
    data = json.loads(out)
    assert [a["change"] for a in data["alterations"]]  # the contract is as it was
    groups = data["groups"]
    assert [g["change"] for g in groups][0] == "delete"
    twelve = next(g for g in groups if g["count"] == 12)
    assert len(twelve["entities"]) == 12 and twelve["default"] is False
    assert twelve["ops"] == [
        {
            "key": P,
            "value": 2 * MIB,
            "remove": False,
            "before": 8 * MIB,
            "direction": "lower",
            "percent": -75.0,
        }
    ]
    assert next(g for g in groups if g["default"])["ops"][0]["direction"] == "higher"
    assert sum(g["count"] for g in groups) == len(data["alterations"])
    (tmp_path / "plan.json").write_text(out)
    policy = Policy(prune=True, allow_mass_removal=True)
    assert load_plan_file(tmp_path / "plan.json", policy).alterations == p.alterations
    assert "groups" not in json.loads(json_plan(Plan(alterations=())))


def test_groups_are_kind_shape_and_ops_in_first_member_order() -> None:
    """Every mix of kinds, shapes (one type, two, a default in either place) and ops groups
    exactly as the definition says, whatever the one-pass grouping spells out."""
    shapes: list[dict[str, str | None]] = [
        {"user": "u"},
        {"user": None},
        {"client-id": "c"},
        {"user": "u", "client-id": "c"},
        {"user": None, "client-id": "c"},
        {"user": "u", "client-id": None},
        {"ip": "10.0.0.1"},
    ]
    ops = [(Op(P, 1.0, False, 2.0),), (Op(P, None, True, 2.0),), (Op(P, 1.0, False, None),)]
    kinds = [ChangeKind.UPDATE, ChangeKind.DELETE, ChangeKind.CREATE]
    alts = []
    for i in range(300):
        shape = {t: None if n is None else f"{n}{i}" for t, n in shapes[i % 7].items()}
        chosen = ops[i % 3 if i % 2 else 0]
        if i % 4 == 3:  # equal ops in a tuple of their own: one change all the same
            chosen = tuple([Op(o.key, o.value, o.remove, o.before) for o in chosen])
        alts.append(Alteration(Entity.of(shape), chosen, kinds[i % 5 % 3]))
    alone = {alts[10].entity, alts[11].entity}

    def signature(a: Alteration) -> tuple[object, ...]:
        if a.entity in alone:
            return (a.entity,)
        return (a.kind, tuple((t, n is None) for t, n in a.entity.parts), a.ops)

    expected: dict[tuple[object, ...], list[Alteration]] = {}
    for a in alts:
        expected.setdefault(signature(a), []).append(a)
    groups = group_alterations(alts, alone)
    assert [(g.kind, g.ops, g.entities) for g in groups] == [
        (m[0].kind, m[0].ops, tuple(a.entity for a in m)) for m in expected.values()
    ]
    assert len(groups) > 20 and max(len(g.entities) for g in groups) > 5
    assert any(len({id(a.ops) for a in m}) > 1 for m in expected.values())
