"""The command group as a user meets it: help on every option, -V, completion, flags offered
only where they can work, and entity names refused before any connection."""

from __future__ import annotations

import click
import pytest

from cli_runner import run_kquota
from kquota import __version__
from kquota.cli.main import cli


def _commands(cmd: click.Command, path: str) -> list[tuple[str, click.Command]]:
    found = [(path, cmd)]
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, name
            found += _commands(sub, f"{path} {name}")
    return found


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"{path} {'/'.join(p.opts)}"
        for path, cmd in _commands(cli, "kquota")
        for p in cmd.params
        if isinstance(p, click.Option) and not (p.help or "").strip()
    ]
    assert missing == []


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags_print_the_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_kquota([flag], capsys)
    assert code == 0
    assert out == f"kquota, version {__version__}\n"


@pytest.mark.parametrize("command", ["snapshot", "apply"])
def test_live_only_commands_do_not_offer_snapshot(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_kquota([command, "--help"], capsys)
    assert code == 0 and "--bootstrap-server" in out
    assert "--snapshot " not in out
    code, _, err = run_kquota([command, "--snapshot", "s.json", "--out", "x.json"], capsys)
    assert code == 1
    assert "No such option '--snapshot'" in err


def test_plan_still_offers_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_kquota(["plan", "--help"], capsys)
    assert "--snapshot" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["describe", "--names", "user="],
        ["describe", "--names", "user=alice,client-id="],
        ["alter", "--names", "client-id=", "--add", "request_percentage=5"],
    ],
)
def test_an_empty_name_in_names_is_refused_before_connecting(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 1 is closed: reaching the network would be a connection error, not this message.
    code, out, err = run_kquota([*argv, "--bootstrap-server", "127.0.0.1:1"], capsys)
    assert code == 1 and out == ""
    assert "name is empty" in err and "use --defaults" in err
    assert "Traceback" not in err


def test_bash_completion_script_as_documented(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_KQUOTA_COMPLETE", "bash_source")
    code, out, _ = run_kquota([], capsys)
    assert code == 0
    assert "_kquota_completion()" in out and "complete " in out


def test_completion_lists_the_lazily_loaded_commands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_KQUOTA_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "kquota dri")
    monkeypatch.setenv("COMP_CWORD", "1")
    code, out, _ = run_kquota([], capsys)
    assert code == 0
    assert out.splitlines() == ["plain,drift"]


def test_a_command_loads_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Start-up is paid by every command: its imports run without the cyclic collector.
    import gc
    import importlib

    import click

    from kquota.cli.main import cli

    seen: list[bool] = []
    real = importlib.import_module

    def spy(name: str, package: str | None = None) -> object:
        seen.append(gc.isenabled())
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", spy)
    was_on = gc.isenabled()
    assert cli.get_command(click.Context(cli), "plan") is not None
    assert seen == [False] and gc.isenabled() == was_on
