"""The ``kquota`` command group.

Commands are loaded lazily from their own modules (one module a command, each exposing
``command``), so ``kquota --help`` and quick commands do not import the codec, Spark or the
planner they do not use.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from kquota import __version__
from kquota.errors import KquotaError

# name -> module path; each module defines a click command (or group) named `command`.
_COMMANDS: dict[str, str] = {
    "dev-broker": "kquota.cli.dev_broker",
    "fleet": "kquota.cli.fleet",
    "apply": "kquota.cli.apply",
    "drift": "kquota.cli.drift",
    "snapshot": "kquota.cli.snapshot",
    "describe": "kquota.cli.describe",
    "alter": "kquota.cli.alter",
    "validate": "kquota.cli.validate",
    "plan": "kquota.cli.plan",
    "resolve": "kquota.cli.resolve",
    "export": "kquota.cli.export",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        cmd = importlib.import_module(module).command
        assert isinstance(cmd, click.Command)
        return cmd


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kquota")
def cli() -> None:
    """GitOps for Apache Kafka client quotas."""


def main(argv: list[str] | None = None) -> Any:
    """main runs the CLI, turning KquotaError into a message and an exit code."""
    try:
        return cli.main(args=argv, prog_name="kquota", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as e:
        e.show()
        # Usage errors exit 1, never 2: 2 means "changes" for --detailed-exitcode.
        sys.exit(1)
    except KquotaError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
