"""The usage report and recommendation as text and markdown: names escaped per medium, and a
markdown report cut to the comment's budget by whole rows, with a visible count."""

from __future__ import annotations

import gfm
from kquota.model import Entity
from kquota.render.usage import render_usage_markdown, render_usage_text
from kquota.usage.profile import profile
from kquota.usage.report import UsageReport, usage_report
from kquota.usage.rows import PRODUCE_BYTE_RATE
from sample_rows import DAY, series, week

SNEAKY = "ev\x1b[31mil\nname"


def _report(users: list[str]) -> UsageReport:
    rows = [s for u in users for s in series(u, None, PRODUCE_BYTE_RATE, week(1024))]
    state = {Entity.of({"user": "gone\u202e"}): {"producer_byte_rate": 1.0}}
    return usage_report(profile(rows, since_ms=7 * DAY), state, "samples/\x07")


def test_text_escapes_every_name() -> None:
    text = render_usage_text(_report([SNEAKY]))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "{user=ev\\x1b[31mil\\x0aname}" in text
    assert "samples/\\x07" in text
    assert "{user=gone\\u202e}" in text


def test_markdown_is_cut_to_the_budget_by_whole_rows() -> None:
    users = [f"user-{i:04d}" for i in range(300)]
    whole = render_usage_markdown(_report(users))
    assert whole.count("| `{user=user-") == 300
    cut = render_usage_markdown(_report(users), budget=8000)
    assert len(cut) <= 8000
    kept = cut.count("| `{user=user-")
    assert 0 < kept < 300
    assert f"{300 - kept} more rows did not fit in this comment" in cut
    doc = gfm.assert_aligned(cut)
    assert "[!IMPORTANT]" in doc.html or "more rows did not fit" in doc.html
    assert cut.rstrip().endswith("`{user=gone\\u202e}`")  # the unmatched list is never cut
