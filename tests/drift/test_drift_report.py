"""Drift findings are the plan's differences, named for the operator."""

from __future__ import annotations

import dataclasses

import gfm
from kquota.drift.report import DriftKind, drift_report
from kquota.model import Entity
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy
from kquota.render.drift import (
    render_fleet_markdown,
    render_json,
    render_markdown,
    render_prometheus,
    render_text,
)

A = Entity.of({"user": "a"})
B = Entity.of({"user": "b"})
C = Entity.of({"user": "c"})
D = Entity.of({"client-id": "d"})
DEF = Entity.of({"user": None})

DESIRED = {
    A: {"producer_byte_rate": 100.0, "consumer_byte_rate": 5.0},
    B: {"producer_byte_rate": 100.0},
    C: {"request_percentage": 10.0},
}
SNAPSHOT = {
    A: {"producer_byte_rate": 200.0},  # value changed, consumer_byte_rate missing
    B: {"producer_byte_rate": 100.0, "request_percentage": 3.0},  # key added out of band
    D: {"consumer_byte_rate": 1.0},  # undeclared
    # C missing entirely
}


def _kinds(prune: bool) -> dict[tuple[Entity, str | None], DriftKind]:
    report = drift_report(make_plan(DESIRED, SNAPSHOT, Policy(prune=prune)), prune=prune)
    return {(f.entity, f.key): f.kind for f in report.findings}


def test_every_kind_of_drift_is_classified() -> None:
    kinds = _kinds(prune=True)
    assert kinds == {
        (A, "consumer_byte_rate"): DriftKind.KEY_REMOVED,
        (A, "producer_byte_rate"): DriftKind.VALUE_CHANGED,
        (B, "request_percentage"): DriftKind.KEY_ADDED,
        (C, None): DriftKind.ENTITY_MISSING,
        (D, None): DriftKind.ENTITY_UNDECLARED,
    }


def test_undeclared_entities_are_unmanaged_not_drift_when_prune_is_off() -> None:
    report = drift_report(make_plan(DESIRED, SNAPSHOT, Policy(prune=False)), prune=False)
    assert (D, None) not in {(f.entity, f.key) for f in report.findings}
    assert report.unmanaged == 1
    assert report.drifted


def test_in_sync_report_and_renderings() -> None:
    report = drift_report(make_plan(DESIRED, DESIRED, Policy()), prune=False)
    assert not report.drifted
    assert render_text(report).startswith("cluster: in sync")
    assert '"in_sync": true' in render_json(report)
    prom = render_prometheus([report], 1700000000.0)
    assert 'kquota_drift_in_sync{cluster=""} 1' in prom


def test_renderings_of_drift() -> None:
    report = drift_report(make_plan(DESIRED, SNAPSHOT, Policy(prune=True)), prune=True)
    text = render_text(report)
    assert "drift in 4 entities (5 findings)" in text
    assert "producer_byte_rate: cluster 200 (200 B/s), desired 100 (100 B/s)" in text
    doc = gfm.assert_aligned(render_markdown(report))
    totals = doc.tables()[0]
    assert totals.header == ["finding", "count"] and ["value changed", "1"] in totals.rows
    added = [t for t in doc.tables()[1:] if any("{user=b}" in r[0] for r in t.rows)]
    assert added and added[0].rows[0][1] == "request_percentage: cluster has 3, not declared"
    prom = render_prometheus([report], 1.0)
    assert 'kquota_drift_findings{cluster="",kind="value_changed"} 1' in prom
    assert 'kquota_drift_in_sync{cluster=""} 0' in prom


def test_drift_markdown_folds_and_fits_the_budget() -> None:
    many = {Entity.of({"user": f"u{i:05}"}): {"producer_byte_rate": 1.0} for i in range(5000)}
    report = drift_report(make_plan({}, many, Policy(prune=True)), prune=True)
    out = render_markdown(report, budget=20_000, full_report_at="the artifact")
    doc = gfm.assert_aligned(out)
    assert len(out) <= 20_000 and out.count("<details>") == out.count("</details>") == 1
    assert doc.tables()[0].rows == [["entity not declared (in scope, prune on)", "5000"]]
    assert "findings left out. The full report is in the artifact." in doc.text()


def test_fleet_markdown_lists_drifted_clusters_first_within_the_budget() -> None:
    one = {Entity.of({"user": f"u{i:04}"}): {"producer_byte_rate": 1.0} for i in range(800)}
    drifted = drift_report(make_plan({}, one, Policy(prune=True)), prune=True)
    clean = drift_report(make_plan({}, {}, Policy(prune=True)), prune=True)
    reports = [
        dataclasses.replace(clean, cluster="a-clean"),
        dataclasses.replace(drifted, cluster="b\n<!-- hidden `x|y`"),
        dataclasses.replace(drifted, cluster="c-drifted"),
    ]
    out = render_fleet_markdown(reports, budget=12_000, full_report_at="the artifact")
    assert len(out) <= 12_000
    doc = gfm.assert_aligned(out)
    assert not doc.comments
    table = doc.tables()[0]
    assert table.column("cluster") == ["b\\x0a<!-- hidden `x|y`", "c-drifted", "a-clean"]
    assert table.column("state") == ["drift", "drift", "in sync"]
    assert "The full report is in the artifact." in doc.text()


def test_fleet_markdown_counts_the_clusters_it_cannot_show() -> None:
    one = {Entity.of({"user": "u"}): {"producer_byte_rate": 1.0}}
    drifted = drift_report(make_plan({}, one, Policy(prune=True)), prune=True)
    reports = [dataclasses.replace(drifted, cluster=f"cluster-{i:03}") for i in range(500)]
    out = render_fleet_markdown(reports, budget=5_000)
    assert len(out) <= 5_000
    doc = gfm.assert_aligned(out)
    shown = [c for c in doc.tables()[0].column("cluster") if c.startswith("cluster-")]
    assert f"… {500 - len(shown)} more clusters not shown" in doc.text()
    assert f"{500 - len(shown)} clusters left out of the table" in doc.text()


def test_the_report_ends_with_the_next_step_only_when_there_is_one() -> None:
    from kquota.policy import ProtectMatch
    from kquota.render.drift import next_step

    in_sync = drift_report(make_plan(DESIRED, DESIRED, Policy()), prune=False)
    assert next_step(in_sync) is None and "next:" not in render_text(in_sync)
    assert "Next:" not in render_markdown(in_sync)
    unmanaged = drift_report(make_plan({}, {D: {"consumer_byte_rate": 1.0}}, Policy()), prune=False)
    assert render_text(unmanaged).splitlines()[-1] == (
        "  next: `kquota export` writes what the cluster has as desired-state files, to adopt "
        "the undeclared entities (or turn prune on to remove them)"
    )
    protect = (ProtectMatch.of({"user": "a"}),)
    plan = make_plan(DESIRED, SNAPSHOT, Policy(prune=True))
    marked = drift_report(plan, prune=True, protect=protect)
    assert {f.entity for f in marked.findings if f.protected} == {A}
    undeclared = next(f for f in marked.findings if f.kind is DriftKind.ENTITY_UNDECLARED)
    assert undeclared.values == (("consumer_byte_rate", 1.0),)
    # A default entity names no principal: a glob on every user does not mark it.
    everyone = drift_report(
        make_plan({DEF: {"request_percentage": 1.0}}, {}, Policy()),
        prune=False,
        protect=(ProtectMatch.of({"user": "*"}),),
    )
    assert not any(f.protected for f in everyone.findings)


def test_prometheus_output_of_many_clusters_reads_back_through_a_prometheus_parser() -> None:
    from prometheus_client.parser import text_string_to_metric_families

    # Cluster names are kquota.yaml keys: any string, so every character the exposition
    # format escapes in a label value, and one that is not ASCII.
    names = ['a"b', "back\\slash", "new\nline", "zürich", ""]
    drifted = drift_report(make_plan(DESIRED, SNAPSHOT, Policy(prune=True)), prune=True)
    clean = drift_report(make_plan(DESIRED, DESIRED, Policy()), prune=False)
    reports = [
        dataclasses.replace(drifted if i % 2 == 0 else clean, cluster=n)
        for i, n in enumerate(names)
    ]
    families = {f.name: f for f in text_string_to_metric_families(render_prometheus(reports, 2.5))}
    # Each metric once, with its type and help, every cluster's samples under it.
    assert sorted(families) == [
        "kquota_drift_findings",
        "kquota_drift_in_sync",
        "kquota_drift_last_check_timestamp_seconds",
        "kquota_drift_unmanaged_entities",
    ]
    assert all(f.type == "gauge" and f.documentation for f in families.values())
    in_sync = {s.labels["cluster"]: s.value for s in families["kquota_drift_in_sync"].samples}
    assert in_sync == {n: float(i % 2) for i, n in enumerate(names)}
    findings = families["kquota_drift_findings"].samples
    assert {s.labels["cluster"] for s in findings} == set(names)
    value_changed = {
        s.labels["cluster"]: s.value for s in findings if s.labels["kind"] == "value_changed"
    }
    assert value_changed == {n: float(i % 2 == 0) for i, n in enumerate(names)}
    (stamp,) = families["kquota_drift_last_check_timestamp_seconds"].samples
    assert stamp.value == 2.5 and stamp.labels == {}
