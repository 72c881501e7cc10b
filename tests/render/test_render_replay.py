"""The throttle-replay section of text, markdown and JSON plans (kquota.render.replay):
harder-throttled first, censored principals marked, the summary never folded nor cut,
hostile names stay text, tables align as GitHub renders them, the budget holds."""

from __future__ import annotations

import dataclasses
import json

import gfm
from hostile_names import HOSTILE
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.plan.replay import QuotaWindow
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render import markdown, text
from kquota.render.json import render_plan as render_json
from kquota.render.verdict import json_plan
from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample

P = "producer_byte_rate"
MiB = 1024.0 * 1024
STEP = 60_000


def _rows(user: str, values: list[float], metric: str = PRODUCE_BYTE_RATE) -> list[Sample]:
    return [
        Sample("c", "1", user, None, metric, 1_764_201_600_000 + i * STEP, v)
        for i, v in enumerate(values)
    ]


NO_POLICY = Policy()


def _plan(
    state: QuotaState, desired: QuotaState, rows: list[Sample], policy: Policy = NO_POLICY
) -> Plan:
    from kquota.operations.replay import UsageInputs, with_replay
    from kquota.usage.series import group

    plan = make_plan(desired, state, policy, cluster="c")
    usage = UsageInputs(group(rows), QuotaWindow(), "prom")
    return with_replay(plan, state, policy, usage)


def _by_user(rates: dict[str | None, float]) -> QuotaState:
    """_by_user is each user's producer byte rate (None: ``{user=<default>}``)."""
    return {Entity.of({"user": u}): {P: rate} for u, rate in rates.items()}


def _lowered(users: list[str]) -> tuple[QuotaState, QuotaState, list[Sample]]:
    state: QuotaState = {Entity.of({"user": u}): {P: 10 * MiB} for u in users}
    desired: QuotaState = {Entity.of({"user": u}): {P: 1 * MiB} for u in users}
    rows = [r for u in users for r in _rows(u, [2 * MiB, 0.5 * MiB])]
    return state, desired, rows


def test_text_lists_harder_first_and_marks_the_censored() -> None:
    state = _by_user({"a": 10 * MiB, "b": 10 * MiB})
    desired = _by_user({"a": 5 * MiB, "b": 1 * MiB})
    rows = _rows("a", [2 * MiB, 2 * MiB]) + _rows("b", [2 * MiB, 0.5 * MiB])
    rows += _rows("a", [0, 250], PRODUCE_THROTTLE_TIME)
    out = text.render_plan(_plan(state, desired, rows))
    section = out[out.index("Throttle replay of prom (samples 2025-11-27 00:00 UTC to ") :]
    assert "quota window 11 x 1 s, Kafka's defaults):" in section
    lines = section.splitlines()
    assert lines[1] == (
        "  2 observed principal quotas the plan changes: 1 throttled harder, 1 already "
        "throttled (demand unknown above the current quota)"
    )
    assert lines[2].startswith(
        "  {user=b} producer_byte_rate: 10485760 (10 MiB/s) from {user=b} -> 1048576 (1 MiB/s) "
        "from {user=b}"
    )
    assert lines[2].endswith("throttled 0.0% -> 50.0%")
    assert lines[3] == (
        "    1m of 2m on broker 1; peak 1048576 (1 MiB/s) over the bound, throttle time ~11s"
    )
    assert lines[4].startswith("  {user=a} producer_byte_rate:")
    assert lines[6] == "    demand unknown above the current quota: already throttled on broker 1"


def test_a_plan_without_usage_has_no_section() -> None:
    plan = make_plan({Entity.of({"user": "a"}): {P: 1.0}}, {}, Policy(), cluster="c")
    assert "Throttle replay" not in text.render_plan(plan)
    assert "Throttle replay" not in markdown.render_plan(plan)
    assert "throttle_replay" not in json.loads(render_json(plan))


def test_the_guard_stops_in_every_format() -> None:
    state, desired, rows = _lowered(["a"])
    plan = _plan(state, desired, rows, Policy(max_throttled_fraction=0.25))
    assert not plan.applyable
    assert plan.refusal == (
        "throttle guard: {user=a} producer_byte_rate: throttled 50.0% of the observed time "
        "after the plan (was 0.0%), over max_throttled_fraction=0.25"
    )
    out = text.render_plan(plan)
    assert out.startswith("STOPPED: throttle guard: {user=a} producer_byte_rate: throttled")
    assert "  throttle guard (STOPS the plan): {user=a}" in out
    md = markdown.render_plan(plan)
    assert md.startswith("> [!CAUTION]") and "`--allow-throttling`" in md
    assert "> **Throttle guard:** " in md
    data = json.loads(json_plan(plan))
    assert data["refusal"] == plan.refusal
    assert data["throttle_replay"]["throttling_stops"] == [plan.refusal.split(": ", 1)[1]]
    allowed = _plan(
        state, desired, rows, Policy(max_throttled_fraction=0.25, allow_throttling=True)
    )
    assert allowed.applyable and allowed.refusal is None
    assert "throttle guard (overridden): {user=a}" in text.render_plan(allowed)


def test_hostile_names_stay_text_and_tables_align() -> None:
    state, desired, rows = _lowered(HOSTILE)
    plan = _plan(state, desired, rows, Policy(max_throttled_fraction=0.1, allow_throttling=True))
    md = markdown.render_plan(plan)
    doc = gfm.assert_aligned(md)
    assert doc.comments == []
    assert not {"a", "img", "script", "em", "ol"} & doc.root.tags()
    section = md[md.index("#### Throttle replay") :]
    section_doc = gfm.assert_aligned(section)
    assert not {"a", "img", "script", "h1", "h2", "h3", "em", "ol"} & section_doc.root.tags()
    (table,) = section_doc.tables()
    shown = table.column("principal")
    assert len(shown) == markdown_shown(len(HOSTILE))
    # every name is the resolver's own display of it, as text
    from kquota.model import display_entity

    assert set(shown) <= {display_entity(Entity.of({"user": n})) for n in HOSTILE}
    assert all(n == len(table.header) for n in table.row_cells)
    out = text.render_plan(plan)
    assert "\x1b" not in out and "\u202e" not in out


def markdown_shown(n: int) -> int:
    from kquota.render.replay import SHOWN

    return min(n, SHOWN)


def test_many_principals_fold_and_the_summary_is_never_folded_nor_cut() -> None:
    users = [f"user-{i:04}" for i in range(400)]
    state, desired, rows = _lowered(users)
    plan = _plan(state, desired, rows)
    md = markdown.render_plan(plan)
    doc = gfm.assert_aligned(md)
    summary = "**Throttle replay:** 400 observed principal quotas the plan changes: 400 throttled"
    assert summary in md
    assert md.index(summary) < md.index("<details>")
    assert "<summary>Principals replayed (400)</summary>" in md
    assert md.count("<details>") == md.count("</details>")
    assert "Throttle replay" in doc.text()
    # a budget the table does not fit: the summary stays, what was left out is said
    small = markdown.render_plan(plan, budget=4_000)
    assert markdown.size(small) <= 4_000
    assert summary in small
    note = next(line for line in small.splitlines() if "**Not all shown here**" in line)
    assert "throttle replay rows" in note
    assert small.count("<details>") == small.count("</details>")
    # text lists the first 50 and says where the rest are
    assert "  ... and 350 more (the JSON plan has all)" in text.render_plan(plan)
    assert len(json.loads(render_json(plan))["throttle_replay"]["principals"]) == 400


def test_a_loosened_principal_above_its_old_bound_is_not_harder() -> None:
    state: QuotaState = {Entity.of({"user": "a"}): {P: 1 * MiB}}
    desired: QuotaState = {Entity.of({"user": "a"}): {P: 3 * MiB}}
    plan = _plan(state, desired, _rows("a", [2 * MiB, 2 * MiB]))
    out = text.render_plan(plan)
    assert "0 throttled harder" in out
    assert "throttled 100.0% -> 0.0%" in out
    assert "never above the new bound (peak 2097152 (2 MiB/s))" in out


def test_a_change_at_a_default_replays_the_principals_falling_back_to_it() -> None:
    # the resolver behind --impact: a new {user=<default>} bounds every user without its own
    state: QuotaState = {Entity.of({"user": "own"}): {P: 10 * MiB}}
    desired: QuotaState = {**state, Entity.of({"user": None}): {P: 1 * MiB}}
    rows = _rows("own", [5 * MiB]) + _rows("other", [2 * MiB])
    plan = _plan(state, desired, rows)
    assert plan.replay is not None
    (r,) = plan.replay.replayed
    assert r.change.principal.user == "other"
    assert r.change.after is not None and r.change.after.source == Entity.of({"user": None})
    assert r.after.fraction == 1.0
    assert (
        "  {user=other} producer_byte_rate: unlimited -> 1048576 (1 MiB/s) from {user=<default>}:"
        in text.render_plan(plan)
    )
    md = markdown.render_plan(plan)
    assert "| unlimited → 1048576 (1 MiB/s) from `{user=<default>}` |" in md


def test_json_is_the_report_as_is() -> None:
    state, desired, rows = _lowered(["a"])
    plan = _plan(state, desired, rows)
    assert plan.replay is not None
    data = json.loads(render_json(plan))["throttle_replay"]
    assert data == json.loads(json.dumps(plan.replay.to_data()))
    assert dataclasses.replace(plan, replay=None).to_data().get("throttle_replay") is None


def test_durations_read_at_a_glance() -> None:
    from kquota.render.replay import _span

    assert [
        _span(ms) for ms in (0, 250.4, 5_500, 90_000, 7_200_000, 3 * 86_400_000 + 3_600_000)
    ] == [
        "0ms",
        "250ms",
        "6s",
        "1m 30s",
        "2h",
        "3d 1h",
    ]


def test_a_measured_peak_reads_in_whole_bytes_not_sixteen_digits() -> None:
    """A windowed rate is a measurement: its peak over the bound is shown rounded (text and
    markdown), while the JSON plan keeps it as computed."""
    state: QuotaState = {Entity.of({"user": "a"}): {P: 8 * MiB}}
    desired: QuotaState = {Entity.of({"user": "a"}): {P: 2 * MiB}}
    peak = 3.3 * MiB  # 3460300.8000000003: binary floating point, as the replay computes it
    plan = _plan(state, desired, _rows("a", [peak, peak]))
    over = plan.replay.replayed[0].after.peak_over if plan.replay else None
    assert over is not None and not float(over).is_integer()
    shown = f"peak {round(over)} (1.3 MiB/s) over the bound"
    assert shown in text.render_plan(plan)
    rendered = markdown.render_plan(plan)
    assert f"| {round(over)} (1.3 MiB/s) |" in rendered
    assert repr(over).split(".")[1] not in rendered
    after = json.loads(render_json(plan))["throttle_replay"]["principals"][0]["throttled_after"]
    assert after["peak_over_bound"] == over


def test_the_worst_broker_is_a_name_in_a_code_span_as_in_the_usage_report() -> None:
    """A broker is a name (an exporter's address from a Prometheus ``instance`` label): the
    markdown shows it in a code span, as ``kquota usage`` does, not as escaped prose
    (``127\\.0.0.1:9404``)."""
    state: QuotaState = {Entity.of({"user": "a"}): {P: 8 * MiB}}
    desired: QuotaState = {Entity.of({"user": "a"}): {P: 1 * MiB}}
    rows = [dataclasses.replace(r, broker="127.0.0.1:9404") for r in _rows("a", [2 * MiB, 2 * MiB])]
    rendered = markdown.render_plan(_plan(state, desired, rows))
    assert "| `127.0.0.1:9404` |" in rendered
    assert "127\\." not in rendered


def test_the_quota_column_marks_lower_and_higher_as_the_plan_s_update_lines_do() -> None:
    """The quota before -> after carries the plan's own mark of the change (text: ``lower by
    75%``; markdown: ``▼75%``), so a reader of the replay need not work it out; an unlimited
    side has no number to compare and says so in words."""
    state = _by_user({"a": 8 * MiB, "b": 1 * MiB})
    desired = _by_user({"a": 2 * MiB, "b": 3 * MiB, None: 1 * MiB})
    rows = _rows("a", [3 * MiB, 3 * MiB]) + _rows("b", [2 * MiB]) + _rows("c", [2 * MiB])
    plan = _plan(state, desired, rows)
    lines = text.render_plan(plan).splitlines()
    assert (
        "  {user=a} producer_byte_rate: 8388608 (8 MiB/s) from {user=a} -> 2097152 (2 MiB/s) "
        "from {user=a}, lower by 75%: throttled 0.0% -> 100.0%"
    ) in lines
    assert (
        "  {user=b} producer_byte_rate: 1048576 (1 MiB/s) from {user=b} -> 3145728 (3 MiB/s) "
        "from {user=b}, higher by 200%: throttled 100.0% -> 0.0%"
    ) in lines
    assert (
        "  {user=c} producer_byte_rate: unlimited -> 1048576 (1 MiB/s) from {user=<default>}: "
        "throttled 0.0% -> 100.0%"
    ) in lines
    md = markdown.render_plan(plan)
    (table,) = gfm.assert_aligned(md[md.index("#### Throttle replay") :]).tables()
    quotas = dict(zip(table.column("principal"), table.column("quota before → after"), strict=True))
    assert quotas == {
        "{user=a}": "8388608 (8 MiB/s) from {user=a} → 2097152 (2 MiB/s) from {user=a} ▼75%",
        "{user=b}": "1048576 (1 MiB/s) from {user=b} → 3145728 (3 MiB/s) from {user=b} ▲200%",
        "{user=c}": "unlimited → 1048576 (1 MiB/s) from {user=<default>}",
    }
