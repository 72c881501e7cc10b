"""Every command's ``--format`` comes from the one shared option and keeps its own choices,
default and help; an unknown format is refused naming the option and what is allowed."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from kquota.cli.main import cli

PLAN_HELP = "text for a terminal, json (the plan contract), markdown for a pull request."

# command path -> (parameter name, choices, default, help)
EXPECTED: dict[str, tuple[str, list[str], str | None, str]] = {
    "describe": (
        "output_format",
        ["text", "json"],
        "text",
        "text as kafka-client-quotas shows it; json is the snapshot file format.",
    ),
    "drift": (
        "fmt",
        ["text", "json", "markdown", "prometheus"],
        "text",
        "Report format; prometheus writes a node-exporter textfile (with --out).",
    ),
    "fleet apply": ("fmt", ["text", "json", "markdown"], "text", "The rollout report's format."),
    "history": ("fmt", ["text", "json"], "text", "Output format."),
    "plan": ("fmt", ["text", "json", "markdown"], "text", PLAN_HELP),
    "recommend": (
        "fmt",
        ["text", "json", "markdown"],
        "text",
        "Output format of the proposals.",
    ),
    "resolve": ("fmt", ["text", "json"], "text", "Output format."),
    "revert": ("fmt", ["text", "json", "markdown"], "text", "How to show the inverse plan."),
    "show": ("fmt", ["text", "json", "markdown"], "text", PLAN_HELP),
    "snapshot": ("fmt", ["json", "jsonl", "parquet"], None, "Default: from --out's suffix."),
    "usage": (
        "fmt",
        ["text", "json", "markdown"],
        "text",
        "Output format (markdown for a pull request).",
    ),
}


def _command(path: str) -> click.Command:
    command: click.Command = cli
    for word in path.split():
        assert isinstance(command, click.Group)
        sub = command.get_command(click.Context(command), word)
        assert sub is not None, path
        command = sub
    return command


def _format_options(group: click.Group, prefix: str = "") -> set[str]:
    found = set()
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        assert command is not None
        path = f"{prefix} {name}".strip()
        if isinstance(command, click.Group):
            found |= _format_options(command, path)
        elif any("--format" in p.opts for p in command.params):
            found.add(path)
    return found


def test_the_table_names_every_command_with_a_format() -> None:
    assert _format_options(cli) == set(EXPECTED)


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_each_format_keeps_its_choices_default_and_help(path: str) -> None:
    name, choices, default, help_text = EXPECTED[path]
    (option,) = [p for p in _command(path).params if "--format" in p.opts]
    assert isinstance(option, click.Option) and isinstance(option.type, click.Choice)
    assert option.name == name
    assert list(option.type.choices) == choices
    assert option.help == help_text
    if default is None:
        assert not option.show_default
    else:
        assert option.default == default and option.show_default


def test_an_unknown_format_is_refused_with_what_is_allowed() -> None:
    result = CliRunner().invoke(cli, ["show", "plan.json", "--format", "yaml"])
    assert result.exit_code == 2
    assert "'--format'" in result.output and "'yaml' is not one of" in result.output
    assert "'text', 'json', 'markdown'" in result.output
