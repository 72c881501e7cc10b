"""``kquota plan`` offline: outputs, saved plans, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli, main
from kquota.model import Entity
from kquota.planfile.reader import load_plan_file
from kquota.policy import Policy
from kquota.snapshot.files import dump_snapshot

DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 2MiB}
  - match: {user: bob, client-id: <default>}
    set: {consumer_byte_rate: 1048576}
"""


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(DESIRED)
    state = {
        Entity.of({"user": "alice"}): {"producer_byte_rate": 1048576.0},
        Entity.of({"user": "bob", "client-id": None}): {"consumer_byte_rate": 1048576.0},
        Entity.of({"user": "carol"}): {"producer_byte_rate": 5.0},
    }
    (tmp_path / "snap.json").write_bytes(dump_snapshot(state))
    in_sync = {
        Entity.of({"user": "alice"}): {"producer_byte_rate": 2097152.0},
        Entity.of({"user": "bob", "client-id": None}): {"consumer_byte_rate": 1048576.0},
    }
    (tmp_path / "same.jsonl").write_bytes(dump_snapshot(in_sync, "jsonl"))
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = str(result.exception) if result.exception and result.exit_code == 1 else ""
    return result.exit_code, result.stdout, result.stderr + err


def test_text_plan_default_paths(repo: Path) -> None:
    code, out, _ = run("plan", "--snapshot", "snap.json")
    assert code == 0
    assert "~ {user=alice}" in out
    assert "~ producer_byte_rate: 1048576 (1 MiB/s) -> 2097152 (2 MiB/s)" in out
    assert "carol" not in out  # prune is off by default
    assert "Left alone: 1 declared unchanged, 1 not declared (prune is off)." in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_detailed_exitcode(repo: Path) -> None:
    assert run("plan", "--snapshot", "snap.json", "--detailed-exitcode")[0] == 2
    assert run("plan", "quotas", "--snapshot", "same.jsonl", "--detailed-exitcode")[0] == 0
    code, _, err = run("plan", "--snapshot", "missing.json", "--detailed-exitcode")
    assert code == 1 and "cannot read snapshot" in err


def test_prune_and_json_format(repo: Path) -> None:
    code, out, _ = run("plan", "--snapshot", "snap.json", "--prune", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["format_version"] == 1
    assert data["alterations"][-1] == {
        "entity": {"user": "carol"},
        "change": "delete",
        "ops": [{"key": "producer_byte_rate", "value": None, "remove": True, "before": 5.0}],
    }
    assert data["desired_digest"] and data["kquota_version"] and data["created_at"]


def test_out_writes_a_loadable_plan(repo: Path) -> None:
    code, _, _ = run(
        "plan", "--snapshot", "snap.json", "--out", "plan.json", "--format", "markdown"
    )
    assert code == 0
    # The one strict reader, as kquota show reads it (a snapshot plan records no cluster).
    plan = load_plan_file(repo / "plan.json", Policy(), review=True)
    assert [a.entity for a in plan.alterations] == [Entity.of({"user": "alice"})]
    assert plan.snapshot_fingerprint and plan.snapshot_fingerprint.startswith("sha256:")


def test_guard_stopped_plan_is_shown_verdict_first_and_saved_for_review(repo: Path) -> None:
    (repo / "quotas" / "main.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n"
    )
    code, out, err = run("plan", "--snapshot", "snap.json", "--prune", "--out", "p.json")
    assert code == 1
    # The verdict is the first thing read, and the whole plan follows it.
    assert out.startswith("STOPPED: mass-removal guard: the desired state is empty")
    assert "--allow-mass-removal" in out.splitlines()[1]
    assert "- {user=carol}" in out and "Plan: 0 to create" in out
    assert "mass-removal guard" in err and "saved in p.json for review only" in err
    saved = json.loads((repo / "p.json").read_text())
    assert saved["summary"]["guard_violation"] and "refusal" not in saved  # the plain contract
    assert len(saved["alterations"]) == 3
    code, out, _ = run(
        "plan", "--snapshot", "snap.json", "--prune", "--allow-mass-removal", "--detailed-exitcode"
    )
    assert code == 2 and "Mass-removal guard overridden" in out and "STOPPED" not in out


def test_guard_stopped_plan_without_out_saves_nothing(repo: Path) -> None:
    (repo / "quotas" / "main.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n"
    )
    code, _, err = run("plan", "--snapshot", "snap.json", "--prune")
    assert code == 1 and err.rstrip().endswith("; nothing saved")


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_guard_stopped_plan_has_its_verdict_first_in_every_format(repo: Path, fmt: str) -> None:
    (repo / "quotas" / "main.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n"
    )
    code, out, _ = run("plan", "--snapshot", "snap.json", "--prune", "--format", fmt)
    assert code == 1
    if fmt == "json":
        data = json.loads(out)
        assert next(iter(data)) == "refusal"
        assert data["refusal"].startswith("mass-removal guard: the desired state is empty")
        assert len(data["alterations"]) == 3
    else:
        lines = out.splitlines()
        assert lines[0] == "> [!CAUTION]"
        assert "will not be applied" in lines[1] and "`--allow-mass-removal`" in lines[1]
        assert lines[2] == ">"
        assert lines[3].startswith("> **Mass-removal guard:** the desired state is empty")
        assert lines[4] == "" and lines[5].startswith("### kquota plan")
        assert out.count("Mass-removal guard") == 1 and "carol" in out


def test_principal_effects(repo: Path) -> None:
    code, out, _ = run("plan", "--snapshot", "snap.json", "--principal", "user=alice,client-id=etl")
    assert code == 0
    assert "Effective quotas of the named principals:" in out
    assert "{user=alice, client-id=etl}" in out


def test_desired_errors_exit_1(repo: Path) -> None:
    (repo / "quotas" / "main.yaml").write_text("apiVersion: kquota/v1\nkind: Nope\n")
    code, _, err = run("plan", "--snapshot", "snap.json", "--detailed-exitcode")
    assert code == 1 and "main.yaml" in err


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--snapshot", "snap.json", "--format", "yaml", "--detailed-exitcode"],
        ["plan", "--no-such-flag", "--detailed-exitcode"],
        ["plan", "--principal", "usr=alice", "--snapshot", "snap.json", "--detailed-exitcode"],
        ["plan", "--detailed-exitcode"],  # no source for the current state
        ["plan", "--snapshot", "snap.json", "--bootstrap-server", "x:9092"],
        ["plan", "--cluster", "prod", "--detailed-exitcode"],  # no kquota.yaml
    ],
)
def test_usage_errors_exit_1_never_2(
    repo: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _main(argv, capsys)
    assert code == 1, err
    assert err


def test_main_detailed_exitcode_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["plan", "--snapshot", "snap.json", "--detailed-exitcode"], capsys)[0] == 2


def test_cluster_config_supplies_paths_and_policy(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        "clusters:\n  prod:\n    kafka: {bootstrap.servers: 'localhost:1'}\n"
        "    desired: [quotas]\n    policy: {prune: true, scope: [{user: carol}, {user: alice}]}\n"
    )
    code, out, _ = run("plan", "--snapshot", "snap.json", "--detailed-exitcode")
    assert code == 2
    assert out.startswith("kquota plan for cluster prod")
    assert "- {user=carol}" in out and "~ {user=alice}" in out
    assert "bob" not in out and "1 declared but outside the ownership scope" in out


def test_live_mode_against_a_closed_port_is_a_clean_error(repo: Path) -> None:
    code, _, err = run("plan", "--bootstrap-server", "127.0.0.1:1")
    assert code == 1
    assert "127.0.0.1:1" in err and "Traceback" not in err


def test_colorize_only_marks_op_lines() -> None:
    from kquota.cli.plan import colorize

    text = "kquota plan\n\n~ {user=a}\n    + k: 1\n    - k: 2 -> (removed)\nPlan: 1 to create\n"
    out = colorize(text)
    assert "\x1b[32m    + k: 1\n\x1b[0m" in out and "\x1b[33m~ {user=a}\n\x1b[0m" in out
    assert "Plan: 1 to create\n" in out and "\x1b[" not in out.split("Plan:")[1]


def test_several_clusters_need_a_name(repo: Path) -> None:
    (repo / "kquota.yaml").write_text(
        "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n"
        "  b:\n    kafka: {bootstrap.servers: 'y:1'}\n"
    )
    code, _, err = run("plan", "--snapshot", "snap.json")
    assert code == 1 and "choose one with --cluster" in err
    assert run("plan", "--snapshot", "snap.json", "--cluster", "b")[0] == 0


LOADED = """
import sys
from kquota.cli.main import main
try:
    main(sys.argv[1:])
finally:
    unused = ("kquota.kafka", "asyncio", "kquota.plan.capacity", "kquota.usage.series")
    print("loaded:", *sorted(m for m in sys.modules if m.startswith(unused)))
"""


def test_an_offline_plan_loads_no_kafka_client_and_no_event_loop(repo: Path) -> None:
    # Start-up is a fixed cost of every offline plan (a CI check runs one per change): the
    # client layer and asyncio are imported only by the commands that connect, the capacity
    # report and the usage replay only when asked for.
    argv = ["plan", "--snapshot", "snap.json", "--prune", "--format", "json", "--out", "p.json"]
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, check=True
    )
    assert json.loads((repo / "p.json").read_text())["alterations"]
    assert done.stdout.rstrip().rsplit("\n", 1)[-1] == "loaded:"


@pytest.mark.parametrize(
    ("env", "written"),
    [
        ({"PYTHONIOENCODING": "utf-8"}, "名前".encode()),
        ({"PYTHONIOENCODING": "latin-1"}, b"\\u540d\\u524d"),
        # JSON's escapes, not backslashreplace's: \U0001f600 and \xe9 are not JSON.
        ({"PYTHONIOENCODING": "latin-1"}, b"\\ud83d\\ude00"),
        ({"PYTHONIOENCODING": "cp1251"}, b"caf\\u00e9"),
    ],
)
def test_a_json_plan_is_written_in_standard_outputs_encoding(
    repo: Path, env: dict[str, str], written: bytes
) -> None:
    # The JSON goes out as orjson's UTF-8 bytes only where standard output is UTF-8; another
    # encoding gets the text with its escapes, as every other output does.
    (repo / "quotas" / "main.yaml").write_text(
        DESIRED
        + "  - {match: {user: 名前}, set: {producer_byte_rate: 1MiB}}\n"
        + "  - {match: {user: 😀}, set: {producer_byte_rate: 1MiB}}\n"
        + "  - {match: {user: café}, set: {producer_byte_rate: 1MiB}}\n"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "PYTHONUTF8")}
    done = subprocess.run(
        [sys.executable, "-m", "kquota", "plan", "--snapshot", "snap.json", "--format", "json"],
        env={**base, "PYTHONUTF8": "0", **env},
        capture_output=True,
        check=True,
    )
    assert written in done.stdout
    data = json.loads(done.stdout.decode(env["PYTHONIOENCODING"]))
    assert {a["entity"]["user"] for a in data["alterations"]} >= {"名前", "😀", "café"}
