"""A plan that deletes one entity and creates a look-alike says so, in every format."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import gfm
from kquota.model import Entity
from kquota.plan.lookalike import lookalikes
from kquota.plan.planner import plan as make_plan
from kquota.planfile.reader import load_plan_file
from kquota.policy import Policy
from kquota.render import json as render_json
from kquota.render import markdown, text

P = "producer_byte_rate"
REAL = Entity.of({"user": "payments"})


@pytest.mark.parametrize(
    "fake", ["payments\u3164", "payments\u2800", "payments\u034f", "p\u0430yments"]
)
def test_delete_and_create_alike_are_named_in_every_format(fake: str) -> None:
    twin = Entity.of({"user": fake})
    p = make_plan({twin: {P: 1.0}}, {REAL: {P: 1.0}}, Policy(prune=True), cluster="c")
    assert lookalikes(p.alterations) == {REAL: (twin,), twin: (REAL,)}
    out = text.render_plan(p)
    assert "- {user=payments}  <- looks like {user=" in out
    assert "+ {user=p" in out and "<- looks like {user=payments}" in out
    data = json.loads(render_json.render_plan(p))
    assert data["lookalikes"] == [{"deleted": {"user": "payments"}, "created": {"user": fake}}]
    doc = gfm.assert_aligned(markdown.render_plan(p))
    assert "Look-alike names" in doc.text()
    entity_cells = [c for c in doc.tables()[1].column("entity") if c]
    assert all("looks like" in c for c in entity_cells) and len(entity_cells) == 2


def test_unrelated_names_and_other_types_are_not_paired() -> None:
    p = make_plan(
        {Entity.of({"user": "alice"}): {P: 1.0}, Entity.of({"client-id": "payments"}): {P: 1.0}},
        {REAL: {P: 1.0}},
        Policy(prune=True),
        cluster="c",
    )
    assert lookalikes(p.alterations) == {}
    assert "lookalikes" not in json.loads(render_json.render_plan(p))
    assert "looks like" not in text.render_plan(p) + markdown.render_plan(p)


def test_a_plan_json_with_lookalikes_is_still_a_plan_file(tmp_path: Path) -> None:
    twin = Entity.of({"user": "payments\u3164"})
    p = make_plan({twin: {P: 1.0}}, {REAL: {P: 1.0}}, Policy(prune=True), cluster="c")
    p = dataclasses.replace(p, cluster_id="id-1", snapshot_fingerprint="sha256:" + "0" * 64)
    (tmp_path / "plan.json").write_text(render_json.render_plan(p))
    assert load_plan_file(tmp_path / "plan.json", Policy(prune=True)).alterations == p.alterations


def test_pairs_need_a_delete_and_a_create_and_any_iterable_will_do() -> None:
    twin = Entity.of({"user": "p\u0430yments"})
    both = make_plan({twin: {P: 1.0}}, {REAL: {P: 1.0}}, Policy(prune=True), cluster="c")
    creates = make_plan({twin: {P: 1.0}}, {}, Policy(prune=True), cluster="c")
    deletes = make_plan({}, {REAL: {P: 1.0}}, Policy(prune=True), cluster="c")
    assert lookalikes(iter(both.alterations)) == {REAL: (twin,), twin: (REAL,)}
    assert lookalikes(list(both.alterations)) == lookalikes(both.alterations)
    assert lookalikes(creates.alterations) == lookalikes(deletes.alterations) == {}
    assert lookalikes(creates.alterations + deletes.alterations) == {REAL: (twin,), twin: (REAL,)}
