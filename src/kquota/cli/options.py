"""Flags shared by several commands: targeting, and ``--format``.

``--snapshot FILE``, ``--bootstrap-server HOST:PORT``, ``--command-config FILE``,
``--cluster NAME`` and ``--config PATH`` are collected into one :class:`TargetingArgs` and
resolved into a :class:`kquota.target.Target` (which documents what each one means and how
they combine). :func:`format_option` is the one ``--format`` flag; each command passes its own
choices and help. This module only parses flags and prints warnings; the work is in
:mod:`kquota.operations`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import click
import click.shell_completion

from kquota.cli.option_group import option_group
from kquota.operations.desired import LoadedDesired, load_desired_state
from kquota.target import Target

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class TargetingArgs:
    """TargetingArgs is the targeting flags as given; :meth:`resolve` checks and loads them."""

    snapshot: Path | None = None
    bootstrap_server: str | None = None
    command_config: Path | None = None
    cluster_name: str | None = None
    config_path: Path | None = None
    live_only: ClassVar[bool] = False

    def resolve(self, *, require_source: bool = True) -> Target:
        """resolve is the target these flags name; a kquota.yaml present that has no cluster
        with the servers given is warned of on standard error (standard output keeps its
        format)."""
        target = Target.resolve(
            snapshot=self.snapshot,
            bootstrap_server=self.bootstrap_server,
            command_config=self.command_config,
            cluster_name=self.cluster_name,
            config_path=self.config_path,
            require_source=require_source,
            live_only=self.live_only,
        )
        if target.unmatched is not None:
            echo_warnings([target.unmatched])
        return target

    def inputs(self) -> list[tuple[str, Path | None]]:
        """inputs are the files these flags read, labelled for messages (an output must never
        be one of them: :func:`kquota.cli.output.refuse_inputs`)."""
        from kquota.config.file import find_config

        return [
            ("--snapshot", self.snapshot),
            ("--command-config", self.command_config),
            ("config", self.config_path or find_config()),
        ]

    def named(self, cluster_name: str, config_path: Path) -> TargetingArgs:
        """named: these flags for one cluster of kquota.yaml (``--all``)."""
        return dataclasses.replace(self, cluster_name=cluster_name, config_path=config_path)


@dataclass(frozen=True)
class LiveTargetingArgs(TargetingArgs):
    """LiveTargetingArgs: the targeting flags of a command that takes no ``--snapshot``."""

    live_only: ClassVar[bool] = True


def targeting_options(f: F) -> F:
    """targeting_options adds the shared targeting flags to a click command.

    The command receives them as one ``where: TargetingArgs`` parameter.
    """
    return _with_targeting(f, offline=True)


def live_targeting_options(f: F) -> F:
    """live_targeting_options: the targeting flags without ``--snapshot``, for commands that
    only make sense against a live cluster (apply writes to it, snapshot captures it): a flag
    the command would always reject is not offered at all."""
    return _with_targeting(f, offline=False)


def _with_targeting(f: F, *, offline: bool) -> F:
    snapshot_option = click.option(
        "--snapshot",
        "snapshot",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Offline: read the current state from a snapshot file (JSON or JSON Lines).",
    )
    options = [snapshot_option] if offline else []
    options += [
        click.option("--bootstrap-server", help="Live: the cluster to describe (HOST:PORT,...)."),
        click.option(
            "--command-config",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Kafka client properties file (security.protocol, sasl.*, ssl.*).",
        ),
        click.option(
            "--cluster",
            "cluster_name",
            help="A cluster named in kquota.yaml.",
            shell_complete=complete_cluster,
        ),
        click.option(
            "--config",
            "config_path",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Project config (default: ./kquota.yaml if present).",
        ),
    ]
    return option_group("where", TargetingArgs if offline else LiveTargetingArgs, options)(f)


PLAN_FORMAT_HELP = "text for a terminal, json (the plan contract), markdown for a pull request."


def format_option(
    choices: Sequence[str],
    help: str,
    *,
    default: str | None = "text",
    dest: str = "fmt",
) -> Callable[[F], F]:
    """format_option is ``--format`` with a command's own choices and help, received as
    ``dest``; the default is shown in ``--help`` when there is one (``snapshot`` has none: it
    takes the format from ``--out``'s suffix)."""
    defaults: dict[str, Any] = {} if default is None else {"default": default, "show_default": True}
    return click.option("--format", dest, type=click.Choice(list(choices)), help=help, **defaults)


def complete_cluster(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    """complete_cluster offers the cluster names of kquota.yaml (``--config`` if given on the
    line, else ./kquota.yaml) that start with what is typed; nothing if there is none or it
    does not load (completion never prints an error into the shell)."""
    from kquota.config.file import find_config
    from kquota.config.project import load_config

    given = ctx.params.get("config_path")
    path = Path(given) if given else find_config()
    if path is None:
        return []
    try:
        clusters = load_config(path).clusters
    except Exception:  # a broken file: no completions, the command itself will say why
        return []
    return [
        click.shell_completion.CompletionItem(name)
        for name in sorted(clusters)
        if name.startswith(incomplete)
    ]


def load_desired_quotas(paths: list[Path]) -> LoadedDesired:
    """load_desired_quotas loads desired-state YAML and prints the loader's warnings (those of
    a load that fails are printed with its error, by :func:`kquota.cli.main.run_command`)."""
    loaded = load_desired_state(paths)
    echo_warnings(loaded.warnings)
    return loaded


def echo_warnings(warnings: Sequence[object]) -> None:
    """echo_warnings prints the loader's warnings on standard error, one line each.

    Standard error only: standard output keeps its format (plans, JSON) whatever is warned.
    """
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
