"""The capacity section of text, markdown and JSON plans (kquota.render.capacity): unbounded
sums are words, protected sums over capacity are warnings, hostile names stay text, the
tables are aligned as GitHub renders them, and the section keeps to the comment budget."""

from __future__ import annotations

import dataclasses
import json

import gfm
from hostile_names import HOSTILE
from kquota.model import Entity, QuotaState
from kquota.plan.capacity import BrokerFacts, DeclaredCapacity, capacity_report
from kquota.plan.planner import plan as make_plan
from kquota.plan.resolver import Principal
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render import json as render_json
from kquota.render import markdown, text
from kquota.render.verdict import json_plan

P = "producer_byte_rate"
MiB = 1024.0 * 1024
TEN_MIB = DeclaredCapacity(ingress=10 * MiB)
FACTS = BrokerFacts(brokers=3, leaders=2, io_threads=8, network_threads=3)


def _plan(
    state: QuotaState,
    desired: QuotaState,
    who: list[Principal],
    *,
    declared: DeclaredCapacity = TEN_MIB,
    protected: bool = False,
    max_oversubscription: float | None = None,
) -> Plan:
    plan = make_plan(desired, state, Policy(), cluster="c")
    report = capacity_report(
        state,
        simulate_plan(state, plan),
        who,
        declared,
        FACTS,
        protected=(lambda p: True) if protected else None,
        max_oversubscription=max_oversubscription,
    )
    return dataclasses.replace(plan, capacity=report)


def test_text_says_unbounded_and_the_known_floor() -> None:
    state: QuotaState = {Entity.of({"user": "a"}): {P: 2 * MiB}}
    desired: QuotaState = {**state, Entity.of({"user": None}): {P: 1 * MiB}}
    out = text.render_plan(_plan(state, desired, [Principal("a"), Principal("b")]))
    assert (
        "  producer_byte_rate: 2097152 (2 MiB/s), 0.20x -> unbounded of 10485760 (10 MiB/s) "
        "(declared ingress per broker)" in out
    )
    assert (
        "    unbounded: {user=<default>} applies to principals nobody can list; the 2 known add "
        "up to 3145728 (3 MiB/s)" in out
    )
    assert "controller_mutation_rate is left out of the sums" in out
    assert (
        "request_percentage: no quotas -> no quotas of 1100 ((io + network threads) x 100)" in out
    )
    assert (
        "    {user=b} producer_byte_rate: 1048576 (1 MiB/s) from {user=<default>} -> "
        "2097152 (2 MiB/s) / 3145728 (3 MiB/s)" in out
    )


def test_protected_over_capacity_is_a_warning_in_every_format() -> None:
    desired: QuotaState = {Entity.of({"user": "svc"}): {P: 20 * MiB}}
    plan = _plan({}, desired, [Principal("svc")], protected=True)
    assert plan.capacity is not None and plan.capacity.warnings
    assert "WARNING: protected principals: no quotas -> 20971520 (20 MiB/s), 2.00x" in (
        text.render_plan(plan)
    )
    md = markdown.render_plan(plan)
    assert "> [!WARNING]\n> capacity: the protected principals' producer\\_byte\\_rate" in md
    assert "**20971520 (20 MiB/s), 2.00x: over capacity**" in md
    data = json.loads(render_json.render_plan(plan))
    assert data["capacity"]["warnings"] == list(plan.capacity.warnings)
    assert data["capacity"]["keys"][0]["protected_over_capacity"] is True
    assert plan.refusal is None  # a warning, not a stop


def test_the_capacity_guard_stops_with_the_verdict_first() -> None:
    state: QuotaState = {Entity.of({"user": "a"}): {P: 10 * MiB}}
    desired: QuotaState = {Entity.of({"user": "a"}): {P: 40 * MiB}}
    plan = _plan(state, desired, [Principal("a")], max_oversubscription=3.0)
    assert not plan.applyable
    assert plan.refusal == (
        "capacity guard: producer_byte_rate: known principals' quotas add up to 4.00x one "
        "broker's capacity (was 1.00x), over max_oversubscription=3"
    )
    out = text.render_plan(plan)
    assert out.startswith(f"STOPPED: {plan.refusal}\n")
    assert "--allow-oversubscription" in out
    md = markdown.render_plan(plan)
    assert md.startswith("> [!CAUTION]") and "`--allow-oversubscription`" in md
    assert "> **Capacity guard:** producer\\_byte\\_rate: known principals" in md
    data = json.loads(json_plan(plan))
    assert data["refusal"] == plan.refusal
    assert data["capacity"]["oversubscription_stops"] == [plan.refusal.split(": ", 1)[1]]


def test_hostile_names_stay_text_and_tables_align() -> None:
    desired: QuotaState = {Entity.of({"user": n}): {P: 20 * MiB} for n in HOSTILE}
    desired[Entity.of({"user": None})] = {P: MiB}
    who = [Principal(n) for n in HOSTILE]
    md = markdown.render_plan(_plan({}, desired, who))
    section = md[md.index("#### Capacity") :]
    doc = gfm.assert_aligned(section)
    assert doc.comments == []
    assert not {"a", "img", "script", "h1", "h2", "h3", "em"} & doc.root.tags()
    key_table, ceilings = doc.tables()
    assert key_table.column("key")[0] == P
    assert all(n == len(ceilings.header) for n in ceilings.row_cells)
    # every user over one broker's capacity is named as text, as the resolver shows it
    assert "can never throttle" in doc.text()


def test_the_section_keeps_to_the_budget_and_says_what_it_left_out() -> None:
    who = [Principal(f"user-{i:05}") for i in range(3000)]
    desired: QuotaState = {p.entity(): {P: MiB} for p in who}
    md = markdown.render_plan(_plan({}, desired, who), budget=20_000)
    assert markdown.size(md) <= 20_000
    gfm.assert_aligned(md)
    note = next(line for line in md.splitlines() if "**Not all shown here**" in line)
    assert "capacity" in note
    assert md.count("<details>") == md.count("</details>")


def _users(n: int, value: float) -> QuotaState:
    return {Entity.of({"user": f"u{i}"}): {P: value} for i in range(n)}


def test_a_verdict_and_a_bar_per_key_in_every_format() -> None:
    who = [Principal(user=f"u{i}") for i in range(3)]
    p = _plan(_users(3, 2 * MiB), _users(3, 5 * MiB), who)  # 0.60x -> 1.50x of 10 MiB/s
    doc = gfm.assert_aligned(markdown.render_plan(p))
    [keys] = [t for t in doc.tables() if t.header[:2] == ["key", "verdict"]]
    assert keys.column("verdict")[0] == "oversubscribed 1.5x"
    assert set(keys.column("verdict")[1:]) == {"no quotas"}
    [bars] = [c.text() for c in doc.root.all("code") if "before" in c.text() and "│" in c.text()]
    before, after = bars.splitlines()
    # 24 cells to the capacity mark: 0.60x is 14.4 cells, 1.50x runs 12 past the mark
    assert before == f"{P}  before {'█' * 14}▍{'░' * 9}│ 0.60x"
    assert after == f"{' ' * len(P)}  after  {'█' * 24}│{'█' * 12} 1.50x  oversubscribed 1.5x"
    out = text.render_plan(p)
    assert "of 10485760 (10 MiB/s) (declared ingress per broker): oversubscribed 1.5x" in out
    assert f"    {before}" in out and f"    {after}" in out

    fits = _plan(_users(3, 2 * MiB), _users(3, 3 * MiB), who)
    assert "(declared ingress per broker): fits" in text.render_plan(fits)
    default = dict(_users(3, 2 * MiB))
    default[Entity.of({"user": None})] = {P: MiB}
    unknown = _plan(_users(3, 2 * MiB), default, who)
    doc = gfm.assert_aligned(markdown.render_plan(unknown))
    [keys] = [t for t in doc.tables() if t.header[:2] == ["key", "verdict"]]
    assert keys.column("verdict")[0] == "cannot tell: a default applies to unknown principals"


def test_a_quota_that_can_never_throttle_is_a_warning() -> None:
    p = _plan({}, _users(1, 20 * MiB), [Principal(user="u0")])
    out = markdown.render_plan(p)
    doc = gfm.assert_aligned(out)
    warning = next(q for q in doc.root.all("blockquote") if "can never throttle" in q.text())
    assert warning.text().strip().startswith("[!WARNING]")
    assert not [li for li in doc.root.all("li") if "can never throttle" in li.text()]
    assert "    warning: can never throttle: {user=u0}" in text.render_plan(p)
