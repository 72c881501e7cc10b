"""``kquota show``: a saved plan, single or fleet, read through apply's strict reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.fleet.synth import write_fleet

CORPUS = Path(__file__).parents[1] / "planfile" / "plan_corpus"
GOOD = CORPUS / "good.json"
GUARDED = CORPUS / "guard_lies.json"


def test_show_renders_a_saved_plan_in_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = run_kquota(["show", str(GOOD)], capsys)
    assert code == 0 and err == ""
    assert text.startswith("kquota plan for cluster local")
    assert "+ {user=alice}" in text and "- {user=carol}" in text
    assert "STOPPED" not in text

    code, markdown, _ = run_kquota(["show", str(GOOD), "--format", "markdown"], capsys)
    assert code == 0 and markdown.startswith("### kquota plan for cluster `local`")
    assert "`{user=carol}`" in markdown and "[!CAUTION]" not in markdown

    code, out, _ = run_kquota(["show", str(GOOD), "--format", "json"], capsys)
    # The JSON is the plan contract, exactly as the file has it, and the changes grouped.
    data = json.loads(out)
    groups = data.pop("groups")
    assert code == 0 and data == json.loads(GOOD.read_text())
    assert sum(g["count"] for g in groups) == len(data["alterations"])


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_show_puts_a_guard_stop_first(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    # guard_lies.json says mass_removal_allowed; a file cannot allow it, show says stopped.
    code, out, _ = run_kquota(["show", str(GUARDED), "--format", fmt], capsys)
    assert code == 0
    verdict = "mass-removal guard: the plan removes 11 quota values, more than max_removals=10"
    if fmt == "json":
        data = json.loads(out)
        assert next(iter(data)) == "refusal" and data["refusal"] == verdict
        assert len(data["alterations"]) == 14
    elif fmt == "markdown":
        assert out.startswith("> [!CAUTION]\n> **Stopped: this plan will not be applied.**")
        assert "> **Mass-removal guard:** the plan removes 11 quota values, more than " in out
        assert out.count("Mass-removal guard") == 1 and "`{user=u9}`" in out
    else:
        assert out.startswith(f"STOPPED: {verdict}\n") and ", {user=u9}" in out


def test_show_uses_the_recorded_clusters_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.json"
    shutil.copy(GUARDED, plan)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
        "    policy: {max_removals: 50}\n"
    )
    code, out, _ = run_kquota(["show", str(plan)], capsys)
    assert code == 0 and "STOPPED" not in out  # within this cluster's own limit
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
        "    policy: {scope: [{user: 'team-*'}]}\n"
    )
    code, _, err = run_kquota(["show", str(plan)], capsys)
    assert code == 1 and "outside the cluster's ownership scope" in err


def test_show_gives_the_observe_mode_refusal_of_a_plan_recorded_by_its_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = json.loads(GOOD.read_text())
    doc["cluster"] = "LocalHost:1, localhost:1"  # the servers kquota.yaml has, spelled otherwise
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(doc))
    config = "clusters:\n  local:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
    (tmp_path / "kquota.yaml").write_text(config + "    policy: {mode: observe}\n")
    code, out, err = run_kquota(["show", str(plan), "--format", "json"], capsys)
    assert code == 0
    json.loads(out)  # standard output stays the plan
    assert (
        f"warning: {plan}: cluster LocalHost:1, localhost:1 is in observe mode (policy.mode: "
        "observe in kquota.yaml): plan, drift and export work as usual, apply does not write; "
        "set policy.mode: manage to apply; apply will refuse this plan\n"
    ) in err
    (tmp_path / "kquota.yaml").write_text(
        config
        + "    policy: {observe: [{user: alice}], protect: [{user: 'svc-*'}], "
        "capacity: {max_observe: 1}}\n".replace("max_observe", "max_oversubscription")
    )
    code, out, err = run_kquota(["show", str(plan)], capsys)
    assert code == 0, err
    assert "the plan alters 1 entities in an observed scope" in err
    assert "{user=alice}" in err and "apply will refuse this plan" in err
    assert (
        f"note: {plan}: apply resolves the protected principals (user=svc-*) on the live "
        "cluster; its verdict is not in the file\n"
    ) in err
    assert "apply counts the capacity guard (max_oversubscription=1) from the live brokers'" in err


HOSTILE = sorted(
    p
    for p in CORPUS.glob("*.json")
    # Not refusals of the file's content: which cluster apply targets (show has no target),
    # the guard (a verdict show displays), a null safety field (a warning, as for plan --out).
    if p.stem not in {"good", "guard_lies", "other_bootstrap", "other_cluster_name"}
    and not p.stem.endswith("_null")
)


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_a_hostile_plan_gets_applys_refusal(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_kquota(["show", str(path)], capsys)
    assert code == 1 and out == ""
    expected = path.with_suffix(".expected").read_text().rstrip("\n")
    assert err == f"error: {expected}\n".replace(f"{path.name}:", f"{path}:")
    assert "Traceback" not in err


@pytest.mark.parametrize("field", ["cluster_id", "snapshot_fingerprint"])
def test_a_null_safety_field_is_shown_with_a_warning(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(GOOD.read_text())
    data[field] = None
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(data))
    code, out, err = run_kquota(["show", str(plan)], capsys)
    assert code == 0 and "+ {user=alice}" in out
    assert f"warning: {plan}: the plan records no" in err and "apply will refuse this plan" in err
    # apply itself still refuses it.
    code, _, err = run_kquota(["apply", str(plan), "--bootstrap-server", "127.0.0.1:1"], capsys)
    assert code == 1 and f"{field}: null is not" in err


@pytest.fixture()
def fleet_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    write_fleet(tmp_path / "desired", tmp_path / "snaps", clusters=2, entities=20)
    args = ["--desired", str(tmp_path / "desired"), "--snapshots", str(tmp_path / "snaps")]
    code, _, err = run_kquota(["fleet", "plan", *args, "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    return tmp_path / "o"


def test_show_renders_a_fleet_plan(fleet_out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = fleet_out / "fleet-plan.json"
    code, text, err = run_kquota(["show", str(summary)], capsys)
    assert code == 0
    assert text.startswith("kquota fleet plan: 2 clusters, 2 with changes, 0 stopped by a guard")
    assert text.index("for cluster cluster-000") < text.index("for cluster cluster-001")
    assert err.count("no cluster id") == 2  # fleet plans record none: apply would refuse

    code, markdown, _ = run_kquota(["show", str(summary), "--format", "markdown"], capsys)
    assert code == 0 and markdown.startswith("### kquota fleet plan: 2 clusters")
    assert markdown.count("### kquota plan for cluster") == 2

    code, out, _ = run_kquota(["show", str(summary), "--format", "json"], capsys)
    data = json.loads(out)
    assert [c["cluster"] for c in data["clusters"]] == ["cluster-000", "cluster-001"]
    first = data["clusters"][0]
    assert first.pop("groups")  # printed for review, beside the plan as the fleet saved it
    assert first == json.loads((fleet_out / "cluster-000.plan.json").read_text())
    assert data["totals"] == {"clusters": 2, "clusters_with_changes": 2, "stopped": 0}

    # One cluster's plan of the fleet, on its own.
    code, out, _ = run_kquota(["show", str(fleet_out / "cluster-001.plan.json")], capsys)
    assert code == 0 and out.startswith("kquota plan for cluster cluster-001")


def test_a_fleet_plan_missing_a_cluster_or_doctored_is_refused(
    fleet_out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = fleet_out / "fleet-plan.json"
    plan = fleet_out / "cluster-001.plan.json"
    data = json.loads(plan.read_text())
    data["alterations"][0]["ops"][0]["value"] = -1
    plan.write_text(json.dumps(data))
    code, out, err = run_kquota(["show", str(summary)], capsys)
    assert code == 1 and out == "" and f"{plan}: alterations[0].ops[0].value" in err
    plan.unlink()
    code, _, err = run_kquota(["show", str(summary)], capsys)
    assert code == 1 and "no plan file beside it for 'cluster-001'" in err
    summary.write_text('{"clusters": "../../etc"}')
    code, _, err = run_kquota(["show", str(summary)], capsys)
    assert code == 1 and "not a fleet summary" in err


def test_show_says_the_protected_verdict_is_taken_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(GOOD.read_text())
    after = {"value": 1.0, "source": {"user": None}}
    data["impact"] = [
        {"principal": {"user": "svc-etl"}, "key": "producer_byte_rate",
         "before": {"value": None, "source": None}, "after": after},
    ]  # fmt: skip
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(data))
    code, out, err = run_kquota(["show", str(plan)], capsys)
    assert code == 0 and "Impact" not in out  # the file's values count for nothing
    assert f"note: {plan}: names 1 principals whose effective quotas apply checks again" in err


DENSE = 12_000
"""Values in a doctored file's padding: past the lowered limit below, a few bytes each."""


def _values(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b",") + data.count(b"[") + data.count(b"{")


def _dense(path: Path, data: dict[str, object], field: str) -> None:
    # An ignored field of empty lists: the cheapest bytes, the dearest memory once parsed.
    path.write_text(json.dumps({**data, field: [[]] * DENSE}))


def test_a_plan_too_dense_to_hold_in_memory_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kquota.planfile.reader as reader

    monkeypatch.setattr(reader, "MAX_PLAN_VALUES", 10_000, raising=False)
    plan = tmp_path / "plan.json"
    _dense(plan, json.loads(GOOD.read_text()), "lookalikes")
    for argv in (["show", str(plan)], ["apply", str(plan), "--bootstrap-server", "127.0.0.1:1"]):
        code, out, err = run_kquota(argv, capsys)
        assert code == 1 and out == "", out + err
        assert err == (
            f"error: {plan}: too many JSON values to read ({_values(plan)} counted, by commas "
            "and brackets; the limit is 10000, about 1.5 million alterations): a file this "
            "dense would exhaust memory before it could be checked; allowed: plan a smaller "
            "change\nnothing was applied\n"
        )


def test_a_fleet_summary_too_dense_to_hold_in_memory_is_refused(
    fleet_out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kquota.planfile.reader as reader

    monkeypatch.setattr(reader, "MAX_PLAN_VALUES", 10_000, raising=False)
    summary = fleet_out / "fleet-plan.json"
    _dense(summary, json.loads(summary.read_text()), "padding")
    code, out, err = run_kquota(["show", str(summary)], capsys)
    assert code == 1 and out == "", out + err
    assert err.startswith(f"error: {summary}: too many JSON values to read (")
