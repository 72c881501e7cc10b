"""Hostile names through every renderer, read back as github.com reads markdown.

The corpus holds names that would be markup if written raw: emphasis, links, images, raw
HTML, comments, backticks of every length, ``|``, autolinks, mentions, references, headings,
newlines, invisible fillers, very long names. Each is sent as an entity name, as a quota key
(from a snapshot), as an entity type and as the cluster name through the plan (markdown,
text, JSON) and drift (markdown, text, JSON, Prometheus) renderers, and from YAML and a
snapshot file through ``kquota plan``. The markdown must have exactly the element structure
of the same document with harmless names (no link, image, HTML, heading or emphasis comes
from a name), every table aligned, no HTML comment, no ``@`` outside a code span (GitHub
mentions on the rendered text, past any backslash), and every name visible as text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import gfm
from hostile_names import HOSTILE
from kquota.cli.main import cli
from kquota.display import safe_text
from kquota.drift.report import drift_report
from kquota.model import Entity, QuotaState, display_entity
from kquota.plan.planner import plan as make_plan
from kquota.plan.resolver import Principal, resolution_changes
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render import json as plan_json
from kquota.render import markdown, text
from kquota.render.drift import render_json as drift_json
from kquota.render.drift import render_markdown as drift_markdown
from kquota.render.drift import render_prometheus, render_text
from kquota.snapshot.files import dump_snapshot

P = "producer_byte_rate"


def _names(names: list[str]) -> tuple[QuotaState, QuotaState]:
    """desired creates one user per name; the cluster has a user per name to delete, and a
    quota key per name (an odd key from a snapshot or a broker) on another user."""
    desired: QuotaState = {Entity.of({"user": "c" + n}): {P: 1024.0} for n in names}
    snapshot: QuotaState = {Entity.of({"user": "d" + n}): {P: 2048.0} for n in names}
    snapshot[Entity.of({"user": "keys"})] = {n: 1.0 for n in names}
    snapshot[Entity.of({"client-id": "stays"})] = {P: 5.0}
    desired[Entity.of({"client-id": "stays"})] = {P: 5.0}
    return desired, snapshot


def _plan(names: list[str], cluster: str) -> tuple[Plan, list[object]]:
    desired, snapshot = _names(names)
    p = make_plan(desired, snapshot, Policy(prune=True, allow_mass_removal=True), cluster=cluster)
    principals = [Principal(user="d" + names[0]), Principal(user="c" + names[-1])]
    return p, list(resolution_changes(snapshot, simulate_plan(snapshot, p), principals))


def _harmless(n: int) -> list[str]:
    return [f"name{i}" for i in range(n)]


def _structure(node: gfm.Node) -> list[str]:
    """The elements of a document, code spans left out: prose escaping may put a word with
    ``@`` or ``://`` in one, which is the escaping, not markup."""
    out = []
    for c in node.children:
        if isinstance(c, gfm.Node):
            if c.tag != "code":
                out.append(c.tag)
            out += _structure(c)
    return out


def _check(hostile_md: str, harmless_md: str) -> gfm.Doc:
    doc = gfm.assert_aligned(hostile_md)
    plain = gfm.assert_aligned(harmless_md)
    assert _structure(doc.root) == _structure(plain.root)
    assert not doc.comments
    assert not {"a", "img", "script", "b", "h1", "h2", "del", "input"} & doc.root.tags()
    # GitHub's @mention filter acts on the rendered text outside code, where cmark-gfm shows
    # no link: a name's @ is in a code span or it notifies someone.
    assert "@" not in doc.root.outside_code()
    for t in doc.tables():
        assert set(t.row_cells) <= {len(t.header)}
    return doc


def _visible(doc: gfm.Doc, shown: str) -> None:
    assert shown in doc.text(), f"{shown!r} not visible"


@pytest.mark.parametrize("cluster", ["prod", "x\n<!-- hide\n# all", "`a|b` @me"])
def test_plan_markdown_from_hostile_names(cluster: str) -> None:
    hostile, changes = _plan(HOSTILE, cluster)
    harmless, plain_changes = _plan(_harmless(len(HOSTILE)), "prod")
    doc = _check(
        # Every name in a verdict too: prose, where a word is escaped, not quoted.
        markdown.render_plan(hostile, changes, verdicts=[f"refused: {' '.join(HOSTILE)}"]),
        markdown.render_plan(
            harmless, plain_changes, verdicts=[f"refused: {' '.join(_harmless(len(HOSTILE)))}"]
        ),
    )
    _visible(doc, safe_text(cluster))
    for n in HOSTILE:
        for e in (Entity.of({"user": "c" + n}), Entity.of({"user": "d" + n})):
            _visible(doc, display_entity(e))
        _visible(doc, safe_text(n))  # the key
    assert "[!CAUTION]" in doc.text()


def test_hostile_entity_types_and_a_long_plan_still_render() -> None:
    odd = {Entity.of({n: "x"}): {P: 1.0} for n in HOSTILE}
    plain = {Entity.of({f"type{i}": "x"}): {P: 1.0} for i in range(len(HOSTILE))}
    hostile = make_plan({}, odd, Policy(prune=True, allow_mass_removal=True), cluster="c")
    harmless = make_plan({}, plain, Policy(prune=True, allow_mass_removal=True), cluster="c")
    doc = _check(markdown.render_plan(hostile), markdown.render_plan(harmless))
    for e in odd:
        _visible(doc, display_entity(e))


def test_drift_markdown_from_hostile_names() -> None:
    hostile, _ = _plan(HOSTILE, "x\n<!--")
    harmless, _ = _plan(_harmless(len(HOSTILE)), "prod")
    hostile_report = drift_report(hostile, prune=True)
    doc = _check(drift_markdown(hostile_report), drift_markdown(drift_report(harmless, prune=True)))
    for n in HOSTILE:
        _visible(doc, display_entity(Entity.of({"user": "d" + n})))
        _visible(doc, safe_text(n))


def test_text_and_json_and_prometheus_stay_valid() -> None:
    hostile, changes = _plan(HOSTILE, "x\n\x1b[31m")
    report = drift_report(hostile, prune=True)
    for out in (text.render_plan(hostile, changes), render_text(report)):
        assert "\x1b" not in out and "\r" not in out
        assert "\u3164" not in out and "\u202e" not in out  # shown as \u3164, \u202e
        lines = out.split("\n")
        assert not any(line.startswith("# heading") for line in lines)
    assert json.loads(plan_json.render_plan(hostile))["cluster"] == "x\n\x1b[31m"
    assert json.loads(drift_json(report))["cluster"] == "x\n\x1b[31m"
    prom = render_prometheus([dataclasses.replace(report, cluster='a"b\\c\nd')], 1.0)
    sample = re.compile(r'^[a-z_]+(\{([a-z]+="([^"\\\n]|\\["\\n])*",?)*\})? [0-9.e+-]+$')
    for line in prom.splitlines():
        assert line.startswith("# ") or sample.match(line), line


def _yaml(name: str) -> str:
    return json.dumps("c" + name, ensure_ascii=False)  # a JSON string is a YAML flow scalar


def test_plan_from_yaml_and_a_snapshot_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same names through the real loader (YAML, verbatim where the loader asks for it)
    and the real snapshot reader, rendered by ``kquota plan --format markdown``."""
    monkeypatch.chdir(tmp_path)
    names = [n for n in HOSTILE if n == n.strip() and "\r" not in n]
    entries = "\n".join(
        f"  - match: {{user: {{name: {_yaml(n)}, verbatim: true}}}}\n"
        "    set: {producer_byte_rate: 1KiB}"
        for n in names
    )
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        f"apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n{entries}\n", encoding="utf-8"
    )
    _, snapshot = _names(names)
    (tmp_path / "snap.json").write_bytes(dump_snapshot(snapshot, meta={"cluster": "<!-- c"}))
    result = CliRunner().invoke(
        cli,
        ["plan", "--snapshot", "snap.json", "--prune", "--allow-mass-removal"]
        + ["--format", "markdown"],
    )
    assert result.exit_code == 0, result.stderr
    doc = gfm.assert_aligned(result.stdout)
    assert not doc.comments
    assert not {"a", "img", "script", "b", "h1", "h2", "del", "input"} & doc.root.tags()
    for n in names:
        _visible(doc, display_entity(Entity.of({"user": "c" + n})))
        _visible(doc, display_entity(Entity.of({"user": "d" + n})))
