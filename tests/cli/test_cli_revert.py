"""kquota revert / history / fleet apply: bad command lines refused before any connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_runner import run_kquota

# Port 1 answers nothing: a command that tried to connect would fail differently.
NOWHERE = ["--bootstrap-server", "127.0.0.1:1"]


@pytest.mark.parametrize(
    "argv",
    [["revert", *NOWHERE], ["revert", *NOWHERE, "--last", "--plan-id", "abc"]],
)
def test_revert_needs_exactly_one_choice_of_apply(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_kquota(argv, capsys)
    assert code != 0 and "revert needs one of --plan-id ID or --last (not both)" in err


def test_revert_without_an_audit_topic_says_where_to_give_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_kquota(["revert", *NOWHERE, "--last"], capsys)
    assert code == 1 and "no audit topic: give --audit-topic TOPIC" in err


@pytest.mark.parametrize(
    ("entity", "why"),
    [("user", "--names expects TYPE=NAME"), ("user=", "the user name is empty")],
)
def test_history_entity_is_checked(
    entity: str,
    why: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_kquota(
        ["history", *NOWHERE, "--audit-topic", "t", "--entity", entity], capsys
    )
    assert code != 0 and why in err and "Traceback" not in err


def test_fleet_apply_refuses_a_cluster_without_a_wave_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plans").mkdir()
    (tmp_path / "desired").mkdir()
    for name in ("eu-1", "us-1"):
        (tmp_path / "plans" / f"{name}.plan.json").write_text("{}")
    code, _, err = run_kquota(
        ["fleet", "apply", "plans", "--desired", "desired", "--wave", "eu-*", "--auto-approve"],
        capsys,
    )
    assert code != 0 and "no wave takes the clusters us-1" in err


def test_fleet_apply_reads_every_plan_before_anything_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plans").mkdir()
    (tmp_path / "desired" / "a").mkdir(parents=True)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  a: {kafka: {bootstrap.servers: '127.0.0.1:1'}}\n"
    )
    (tmp_path / "plans" / "a.plan.json").write_text("{}")
    (tmp_path / "plans" / "b.plan.json").write_text("{}")
    code, _, err = run_kquota(
        ["fleet", "apply", "plans", "--desired", "desired", "--auto-approve"], capsys
    )
    assert code != 0 and "fleet apply: nothing was applied" in err
    assert "a: plans/a.plan.json: format_version: missing" in err
    assert "kquota.yaml: no cluster named 'b' (clusters: a)" in err


def test_revert_out_never_replaces_an_input_nor_an_existing_file_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  a: {kafka: {bootstrap.servers: '127.0.0.1:1'}, audit_topic: t}\n"
    )
    (tmp_path / "undo.json").symlink_to(tmp_path / "kquota.yaml")  # planted
    code, _, err = run_kquota(["revert", "--cluster", "a", "--last", "--out", "undo.json"], capsys)
    assert code != 0 and "undo.json: is this command's config (" in err
    assert "an output never replaces an input" in err
    (tmp_path / "undo.json").unlink()
    (tmp_path / "undo.json").write_text("earlier\n")
    code, _, err = run_kquota(["revert", "--cluster", "a", "--last", "--out", "undo.json"], capsys)
    assert code != 0 and "undo.json: already exists; --force replaces it" in err
    assert (tmp_path / "undo.json").read_text() == "earlier\n"
