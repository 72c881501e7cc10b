"""Every duration and numeric option is checked before anything runs (issue 19, item 3).

Each command is pointed at the loopback ``FakeListener`` of ``test_cli_apply`` (it counts
accepted connections); every bad value must be refused with the allowed range, exit 1 (the
project's usage-error code), no traceback, and zero connections. Every time option takes one
syntax (``90s``, ``5m``, ``1h``; a bare number is seconds) through one parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_apply import FakeListener, fake_listener, repo  # noqa: F401 (fixtures)

from cli_runner import run_kquota
from kquota.runtime.deadline import parse_duration

ADDR = "ADDR"  # replaced by the listener's address

# Every command with a --timeout, as a run that would connect to the listener.
TIMEOUT_COMMANDS: dict[str, list[str]] = {
    "apply": ["apply", "--auto-approve"],
    "plan": ["plan"],
    "drift": ["drift"],
    "export": ["export"],
    "snapshot": ["snapshot", "--out", "s.json"],
    "resolve": ["resolve", "--names", "user=alice"],
    "describe": ["describe", "--bootstrap-server", ADDR],
    "alter": [
        "alter",
        "--bootstrap-server",
        ADDR,
        "--names",
        "user=a",
        "--add",
        "request_percentage=5",
    ],
}

ALTER = ["alter", "--bootstrap-server", ADDR, "--names", "user=a"]

BAD_DURATIONS = {
    "0s": "out of range; allowed: 1s to 1h",
    "0": "out of range; allowed: 1s to 1h",
    "0.5s": "out of range; allowed: 1s to 1h",
    "500h": "out of range; allowed: 1s to 1h",
    "61m": "out of range; allowed: 1s to 1h",
    "-1": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "nan": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "inf": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "1e3": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "5x": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",
    "\u0663s": "not a duration; use 90s, 5m, 1h or 1m30s; allowed: 1s to 1h",  # Arabic-Indic 3
    "9" * 400: "out of range; allowed: 1s to 1h",
}


def _run(
    argv: list[str], listener: FakeListener, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    return run_kquota([listener.address if a == ADDR else a for a in argv], capsys)


@pytest.mark.parametrize("value", list(BAD_DURATIONS), ids=repr)
@pytest.mark.parametrize("command", list(TIMEOUT_COMMANDS))
def test_a_bad_timeout_is_refused_before_any_connection(
    command: str,
    value: str,
    repo: Path,  # noqa: F811
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run([*TIMEOUT_COMMANDS[command], "--timeout", value], fake_listener, capsys)
    assert code == 1 and out == "", err
    assert BAD_DURATIONS[value] in err and "--timeout" in err, err
    assert "Traceback" not in err and len(err) < 300
    assert fake_listener.accepted == 0


@pytest.mark.parametrize("value", list(BAD_DURATIONS), ids=repr)
def test_a_bad_verify_timeout_is_refused_before_any_connection(
    value: str,
    repo: Path,  # noqa: F811
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["apply", "--auto-approve", "--verify-timeout", value]
    code, out, err = _run(argv, fake_listener, capsys)
    assert code == 1 and out == "", err
    assert f"--verify-timeout {value[:40]!r}"[:30] in err and BAD_DURATIONS[value] in err, err
    assert fake_listener.accepted == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply", "--auto-approve", "--batch-size", "0"], "0 is not in the range 1<=x<=100000"),
        (["apply", "--auto-approve", "--batch-size", "100001"], "1<=x<=100000"),
        (["apply", "--auto-approve", "--batch-size", "nan"], "'nan' is not a valid integer"),
        (["apply", "--auto-approve", "--batch-size", "-5"], "1<=x<=100000"),
        ([*ALTER, "--add", "request_percentage=nan"], "request_percentage"),
        ([*ALTER, "--add", "producer_byte_rate=-1"], "producer_byte_rate"),
        (["describe", "--bootstrap-server", "127.0.0.1:0"], "port 1 to 65535"),
        (["describe", "--bootstrap-server", "127.0.0.1:65536"], "port 1 to 65535"),
        (["describe", "--bootstrap-server", "127.0.0.1:-1"], "port 1 to 65535"),
    ],
)  # fmt: skip
def test_numeric_options_are_refused_with_their_range_before_any_connection(
    argv: list[str],
    message: str,
    repo: Path,  # noqa: F811
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(argv, fake_listener, capsys)
    assert code == 1 and out == "", err
    assert message in err and "Traceback" not in err, err
    assert fake_listener.accepted == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dev-broker", "start", "--timeout", "2h"], "--timeout '2h': out of range; allowed: 1s"),
        (["dev-broker", "start", "--timeout", "nan"], "--timeout 'nan': not a duration"),
        (["dev-broker", "start", "--timeout", "0"], "out of range; allowed: 1s to 1h"),
        (["dev-broker", "start", "--nodes", "0"], "0 is not in the range 1<=x<=9"),
        (["dev-broker", "start", "--nodes", "10"], "1<=x<=9"),
    ],
)  # fmt: skip
def test_dev_broker_options_are_refused_before_a_broker_starts(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_kquota([*argv, "--dir", str(tmp_path / "b")], capsys)
    assert code == 1 and out == "" and message in err, err
    assert not (tmp_path / "b").exists()  # nothing was started, nothing written


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("25h", "--timeout '25h': out of range; allowed: 1s to 24h"),
        ("0s", "out of range; allowed: 1s to 24h"),
    ],
)
def test_fleet_timeout_range(
    value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fleet", "plan", "--desired", str(tmp_path), "--snapshots", str(tmp_path)]
    code, _, err = run_kquota([*argv, "--out", str(tmp_path / "o"), "--timeout", value], capsys)
    assert code == 1 and message in err, err


@pytest.mark.parametrize("value", ["0", "1025", "-1", "\u0663", "many"])
def test_fleet_processes_range(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fleet", "plan", "--desired", str(tmp_path / "nope"), "--snapshots", str(tmp_path)]
    code, _, err = run_kquota([*argv, "--out", str(tmp_path / "o"), "--processes", value], capsys)
    assert code == 1 and "expected a number from 1 to 1024, or auto" in err, err
    assert "nope" not in err  # refused while reading the command line, before any file


@pytest.mark.parametrize(
    ("command", "default"),
    [
        (["apply"], "1s to 1h.  [default: 10m]"),
        (["plan"], "1s to 1h.  [default: 5m]"),
        (["describe"], "1s to 1h.  [default: 2m]"),
        (["fleet", "plan"], "1s to 24h.  [default: 1h]"),
        (["dev-broker", "start"], "1s to 1h.  [default: 3m]"),
    ],
)
def test_every_time_option_documents_one_syntax_and_its_range(
    command: list[str], default: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, _ = run_kquota([*command, "--help"], capsys)
    flat = " ".join(text.split())
    assert code == 0 and "90s, 5m, 1h or 1m30s; " + " ".join(default.split()) in flat, flat


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("90s", 90.0), ("1h", 3600.0)])
def test_one_parser_for_every_time_option(text: str, seconds: float) -> None:
    for option in ("--timeout", "--verify-timeout"):
        assert parse_duration(text, option, minimum=1, maximum=3600) == seconds
