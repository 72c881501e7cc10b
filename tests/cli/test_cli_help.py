"""Every command's --help ends with examples that work, and --cluster completes the cluster
names of kquota.yaml."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from kquota.cli.client_quotas import command as client_quotas
from kquota.cli.examples import EXAMPLES
from kquota.cli.main import cli


def _commands(group: click.Group, prefix: str) -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        path = f"{prefix} {name}".strip()
        yield path, command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


ALL = [*_commands(cli, ""), ("kafka-client-quotas", client_quotas)]


@pytest.mark.parametrize(("path", "command"), ALL, ids=[p for p, _ in ALL])
def test_every_command_has_examples_in_its_help(path: str, command: click.Command) -> None:
    assert command.epilog == EXAMPLES[path]
    text = command.get_help(click.Context(command, info_name=path))
    assert "Examples:" in text
    # \b keeps each example on its own line, unwrapped.
    for line in EXAMPLES[path].splitlines()[2:]:
        assert line in text, line


def test_the_group_help_has_examples_and_the_habits() -> None:
    text = cli.get_help(click.Context(cli, info_name="kquota"))
    for needle in ("Examples:", "-v, --verbose", "-q, --quiet", "--no-color", "NO_COLOR"):
        assert needle in text


def _example_argvs() -> Iterator[tuple[str, list[str]]]:
    for path, text in EXAMPLES.items():
        for line in text.splitlines()[2:]:
            words = shlex.split(line.split(" > ")[0])
            if words[0] == "kquota" and '"$(' not in line or words[0] == "kafka-client-quotas":
                yield path, words[1:]


@pytest.mark.parametrize(("path", "argv"), list(_example_argvs()), ids=lambda v: str(v)[:60])
def test_every_example_parses(
    path: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each example's options exist and take the values shown (parsed, not run); the
    directories an example names (``desired/``) exist, for options that require one."""
    monkeypatch.chdir(tmp_path)
    for word in argv:
        if word.endswith("/") and not word.startswith("/"):
            (tmp_path / word).mkdir(parents=True, exist_ok=True)
    command: click.Command = client_quotas if path == "kafka-client-quotas" else cli
    words = list(argv)
    while isinstance(command, click.Group):
        sub = command.get_command(click.Context(command), words.pop(0))
        assert sub is not None, argv
        command = sub
    command.make_context(path, words, resilient_parsing=False)


def test_cluster_completes_from_kquota_yaml(tmp_path: Path) -> None:
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  prod:\n    kafka: {bootstrap.servers: 'p:9092'}\n"
        "  staging:\n    kafka: {bootstrap.servers: 's:9092'}\n"
        "  stage-eu:\n    kafka: {bootstrap.servers: 'e:9092'}\n"
    )
    (tmp_path / "other.yaml").write_text(
        "clusters:\n  only:\n    kafka: {bootstrap.servers: 'o:1'}\n"
    )

    def complete(line: str, cwd: Path = tmp_path) -> list[str]:
        words = line.split(" ")
        env = {
            **os.environ,
            "_KQUOTA_COMPLETE": "bash_complete",
            "COMP_WORDS": line,
            "COMP_CWORD": str(len(words) - 1),
        }
        proc = subprocess.run(
            [sys.executable, "-c", "from kquota.cli.main import cli; cli(prog_name='kquota')"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.stderr == "", proc.stderr
        # "plain,NAME" a line; no completions is an empty line.
        return [item.split(",", 1)[1] for item in proc.stdout.splitlines() if item]

    assert complete("kquota plan --cluster ") == ["prod", "stage-eu", "staging"]
    assert complete("kquota drift --cluster st") == ["stage-eu", "staging"]
    assert complete("kquota plan --config other.yaml --cluster ") == ["only"]
    (tmp_path / "kquota.yaml").write_text("clusters: [not, a, mapping]\n")
    assert complete("kquota apply --cluster ") == []  # a broken file: nothing, no traceback
    assert complete("kquota plan --cluster ", cwd=tmp_path / "..") == []
