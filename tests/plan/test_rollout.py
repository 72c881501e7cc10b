"""Fleet rollout waves and the fleet apply report: pure, no broker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gfm import assert_aligned
from kquota.errors import UsageError
from kquota.plan.rollout import (
    ClusterOutcome,
    FleetApplyReport,
    PlannedWave,
    Wave,
    default_waves,
    parse_wave,
    plan_waves,
)
from kquota.render.fleet_apply import render_json, render_markdown, render_text

NAMES = ["canary-eu", "eu-1", "eu-2", "us-1"]


def test_a_cluster_goes_in_the_first_wave_that_takes_it() -> None:
    waves = [Wave(("canary-eu",)), Wave(("eu-*",), 2), Wave(("*",), 4)]
    planned = plan_waves(NAMES, waves)
    assert [(w.number, w.clusters) for w in planned] == [
        (1, ("canary-eu",)),
        (2, ("eu-1", "eu-2")),
        (3, ("us-1",)),
    ]


def test_a_wave_without_clusters_is_dropped_and_a_cluster_without_a_wave_refused() -> None:
    planned = plan_waves(["eu-1"], [Wave(("canary",)), Wave(("eu-*",))])
    assert [(w.number, w.clusters) for w in planned] == [(1, ("eu-1",))]
    with pytest.raises(UsageError, match="no wave takes the clusters us-1"):
        plan_waves(["eu-1", "us-1"], [Wave(("eu-*",))])


def test_default_waves_are_a_canary_then_the_rest() -> None:
    planned = plan_waves(NAMES, default_waves(NAMES))
    assert [w.clusters for w in planned] == [("canary-eu",), ("eu-1", "eu-2", "us-1")]


def test_parse_wave_reads_globs_parallelism_and_soak() -> None:
    assert parse_wave("eu-*,us-1:2:1m30s") == Wave(("eu-*", "us-1"), 2, 90.0)
    assert parse_wave("canary") == Wave(("canary",))
    for bad, why in (
        (":2", "no cluster given"),
        ("eu-*:0", "from 1 to 64"),
        ("a:1:soon", "not a duration"),
    ):
        with pytest.raises(UsageError, match=why):
            parse_wave(bad)


def _report(hostile: str) -> FleetApplyReport:
    waves = (PlannedWave(1, Wave(("a",)), ("a",)), PlannedWave(2, Wave(("*",)), (hostile, "z")))
    report = FleetApplyReport(Path("plans"), waves)
    report.clusters = [
        ClusterOutcome("a", 1, "id-a", "committed", "1 entities committed and verified"),
        ClusterOutcome(hostile, 2, "id-b", "failed", "audit topic 'x|y' does not exist @here"),
        ClusterOutcome("z", 2, "id-z"),
    ]
    report.stopped = f"{hostile} (wave 2) failed"
    return report


def test_the_report_says_what_was_done_and_how_to_resume_in_every_format() -> None:
    hostile = "eu|*[x](javascript:alert(1))"
    report = _report(hostile)
    text = render_text(report)
    assert "wave 2  z  not attempted" in text and "resume with: kquota fleet apply" in text
    data = json.loads(render_json(report))
    assert [c["status"] for c in data["clusters"]] == ["committed", "failed", "not attempted"]
    assert data["ok"] is False and data["resume"].endswith("--resume")
    doc = assert_aligned(render_markdown(report))
    (table,) = doc.tables()
    assert table.column("cluster") == ["a", hostile, "z"]
    assert table.column("status") == ["committed", "failed", "not attempted"]
    assert "<a " not in doc.html  # no link, however the name and the message are written
    assert "<code>@here</code>" in doc.html  # a mention is held in a code span


def test_an_interrupted_rollout_reports_every_cluster_and_output_stays_inert() -> None:
    waves = (PlannedWave(1, Wave(("*",), 2), ("a", "b", "c")),)
    report = FleetApplyReport(Path("plans"), waves)
    report.clusters = [
        ClusterOutcome(
            "a",
            1,
            "id-a",
            "failed",
            "committed 3 of 5 entities; 2 not attempted; interrupted by SIGINT",
        ),
        ClusterOutcome(
            "b",
            1,
            "id-b",
            "failed",
            "its apply process was killed without a result: what it committed is unknown; "
            "its last output: <script>x</script> | [y](https://e.example) @team",
        ),
        ClusterOutcome("c", 1, "id-c"),
    ]
    report.stopped, report.signal = "interrupted by SIGINT in wave 1", 2
    text = render_text(report)
    assert "rollout stopped: interrupted by SIGINT in wave 1; 0 of 3 clusters done" in text
    assert "wave 1  c  not attempted" in text
    data = json.loads(render_json(report))
    assert "signal" not in data["clusters"][0]  # the record's format is unchanged
    doc = assert_aligned(render_markdown(report))
    (table,) = doc.tables()
    assert table.column("status") == ["failed", "failed", "not attempted"]
    assert "<script>" not in doc.html and "<a " not in doc.html
    assert "<code>@team</code>" in doc.html
