"""Files stay where they belong (issue 19, item 4).

An output is never an input of the same command (compared by device and inode, so a symlink
or another spelling is caught); replacing needs ``--force``, except where a command replaces
its own earlier output (``plan --out`` over an earlier saved plan, a drift report, a
snapshot); cluster names never form paths outside ``snapshot --all``'s folder; modes follow
the umask; a standard output that cannot carry a name gets escapes, not a traceback.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from test_cli_apply import HEADER, FakeListener, fake_listener  # noqa: F401 (fixture)

from cli_runner import run_kquota
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

STATE = {Entity.of({"user": "alice"}): {"producer_byte_rate": 5.0}}


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snap.json").write_bytes(dump_snapshot(STATE))
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(
        HEADER + "  - {match: {user: bob}, set: {producer_byte_rate: 1MiB}}\n"
    )
    return tmp_path


@pytest.fixture()
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _plan(*extra: str) -> list[str]:
    return ["plan", "--snapshot", "snap.json", "quotas", *extra]


@pytest.mark.parametrize("spelling", ["snap.json", "./snap.json", "link.json", "ABS"])
def test_plan_out_onto_its_own_snapshot_is_refused(
    spelling: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "link.json").symlink_to("snap.json")
    before = (work / "snap.json").read_bytes()
    out = str(work / "snap.json") if spelling == "ABS" else spelling
    for force in ((), ("--force",)):
        code, stdout, err = run_kquota(_plan("--out", out, *force), capsys)
        assert code == 1 and stdout == "", err
        assert "is this command's --snapshot (snap.json); an output never replaces an input" in err
        assert (work / "snap.json").read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (_plan("--out", "quotas/main.yaml", "--force"), "is a desired-state file in this "),
        (_plan("--out", "kquota.yaml", "--force"), "is this command's config"),
        (["drift", "--snapshot", "snap.json", "quotas", "--out", "snap.json"], "--snapshot"),
        (["drift", "--snapshot", "snap.json", "quotas", "--out", "quotas/main.yaml"], "PATHS"),
        (["export", "--snapshot", "snap.json", "--out", "snap.json", "--force"], "--snapshot"),
    ],
)
def test_no_command_writes_over_its_inputs(
    argv: list[str], message: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "kquota.yaml").write_text("clusters:\n  c:\n    kafka: {bootstrap.servers: 'h:1'}\n")
    argv = [*argv[:1], *(["--cluster", "c"] if "kquota.yaml" in argv else []), *argv[1:]]
    files = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    code, _, err = run_kquota(argv, capsys)
    assert code == 1 and message in err and "an output never replaces an input" in err, err
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == files


def _unstamped(saved_plan: Path) -> dict[str, object]:
    """The saved plan without its creation time, which moves on between two runs."""
    data = json.loads(saved_plan.read_text())
    assert isinstance(data, dict)
    created = datetime.fromisoformat(data.pop("created_at"))
    assert created.tzinfo is not None and abs(datetime.now(UTC) - created) < timedelta(minutes=5)
    return data


def test_plan_out_replaces_an_earlier_plan_but_nothing_else_without_force(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_kquota(_plan("--out", "p.json"), capsys)[0] == 0
    first = _unstamped(Path("p.json"))
    assert run_kquota(_plan("--out", "p.json"), capsys)[0] == 0  # CI: plan after plan
    assert _unstamped(Path("p.json")) == first
    Path("notes.json").write_text('{"mine": true}\n')
    code, _, err = run_kquota(_plan("--out", "notes.json"), capsys)
    assert code == 1 and "notes.json: already exists; --force replaces it" in err, err
    assert Path("notes.json").read_text() == '{"mine": true}\n'
    assert run_kquota(_plan("--out", "notes.json", "--force"), capsys)[0] == 0
    assert _unstamped(Path("notes.json")) == first


def test_export_replaces_a_desired_state_file_only_with_force(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["export", "--snapshot", "snap.json", "--out", "quotas/main.yaml"]
    before = Path("quotas/main.yaml").read_text()
    code, stdout, err = run_kquota(argv, capsys)
    assert code == 1 and stdout == "" and "quotas/main.yaml: already exists; --force" in err
    assert Path("quotas/main.yaml").read_text() == before
    code, _, err = run_kquota([*argv, "--force"], capsys)
    assert code == 0, err
    assert "user: alice" in Path("quotas/main.yaml").read_text()


HOSTILE_NAMES = ["../../escaped", "/tmp/kquota-abs-escape", "a/b", "..", "back\\\\slash"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_snapshot_all_never_writes_outside_its_folder(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "deep" / "er"
    root.mkdir(parents=True)
    monkeypatch.chdir(root)
    kafka = f"{{bootstrap.servers: '{fake_listener.address}', retries: '0'}}"
    Path("kquota.yaml").write_text(f'clusters:\n  "{name}":\n    kafka: {kafka}\n')
    before = set(tmp_path.rglob("*"))
    code, out, err = run_kquota(["snapshot", "--all", "--out", "snaps"], capsys)
    assert code == 1 and "cannot be a file name" in err and "Traceback" not in err, err
    assert set(tmp_path.rglob("*")) == before  # not even the folder
    assert not Path("/tmp/kquota-abs-escape.jsonl").exists()
    assert fake_listener.accepted == 0


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_drift_and_import_files_follow_the_umask(
    mask: int, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = Path(__file__).parents[1] / "migrate" / "samples" / "strimzi"
    old = os.umask(mask)
    try:
        argv = ["drift", "--snapshot", "snap.json", "quotas", "--format", "prometheus"]
        assert run_kquota([*argv, "--out", "drift.prom"], capsys)[0] == 2
        assert (
            run_kquota(["import", "--from", "strimzi", str(samples), "--out", "i.yaml"], capsys)[0]
            == 0
        )
    finally:
        os.umask(old)
    for name in ("drift.prom", "i.yaml"):
        assert stat.S_IMODE(Path(name).stat().st_mode) == 0o666 & ~mask, name


def test_a_replaced_report_keeps_its_mode(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("drift.prom").write_text("old\n")
    Path("drift.prom").chmod(0o640)
    argv = ["drift", "--snapshot", "snap.json", "quotas", "--format", "prometheus"]
    assert run_kquota([*argv, "--out", "drift.prom"], capsys)[0] == 2
    assert stat.S_IMODE(Path("drift.prom").stat().st_mode) == 0o640
    assert "old" not in Path("drift.prom").read_text()


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "latin-1"}, {"LANG": "C", "LC_ALL": "C"}])
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_a_stdout_that_cannot_carry_a_name_gets_escapes(
    env: dict[str, str], fmt: str, work: Path
) -> None:
    (work / "quotas" / "main.yaml").write_text(
        HEADER + "  - {match: {user: 名前}, set: {producer_byte_rate: 1MiB}}\n"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "PYTHONUTF8")}
    run = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *_plan("--format", fmt), "nope-名"],
        env={**base, "PYTHONUTF8": "0", **env},
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 1 and b"Traceback" not in run.stderr, run.stderr
    assert b"nope-" in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *_plan("--format", fmt)],
        env={**base, "PYTHONUTF8": "0", **env},
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr
    assert "名前".encode() in run.stdout or b"\\u540d\\u524d" in run.stdout


def test_fleet_out_is_never_an_input_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "desired").mkdir()
    (tmp_path / "snaps").mkdir()
    (tmp_path / "snaps" / "c1.json").write_bytes(dump_snapshot(STATE))
    argv = ["fleet", "plan", "--desired", str(tmp_path / "desired")]
    code, _, err = run_kquota(
        [*argv, "--snapshots", str(tmp_path / "snaps"), "--out", str(tmp_path / "snaps")], capsys
    )
    assert code == 1 and "is the --snapshots folder; an output never goes into an input" in err
    assert [p.name for p in (tmp_path / "snaps").iterdir()] == ["c1.json"]
