"""``kafka-client-quotas``: KIP-546's command as the KIP designed it, flags and output.

Exactly one of ``--describe``, ``--resolve``, ``--alter``; the entity is given by ``--names
type=name,…`` and ``--defaults type,…`` (parsed as ``kquota describe``/``alter`` parse them).

* ``--describe`` prints each matching entity as ``{type=name, …}`` and then one ``key=value``
  a line, with a blank line between entities. Matching is the KIP's: ``--names
  client-id=app`` also shows ``{user=alice, client-id=app}``. No flags: every entity.
* ``--resolve`` prints one ``key=value {entity}`` line per quota that applies to the client
  named by ``--names``, the entity being the one the value comes from.
* ``--alter`` sets (``--add key=value,…``) and removes (``--delete key,…``) quotas of one
  entity; ``--validate-only`` has the broker check without applying. Nothing is printed on
  success; a refusal is an error message and exit code 1.

Names print as every kquota output prints them (:func:`kquota.model.display_entity`),
so an odd name can never pass for structure or for the default entity.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.alter import AlterationFlags, alteration_options
from kquota.cli.connect_options import connect_options, entity_options, parse_entity_flags
from kquota.cli.examples import EXAMPLES
from kquota.cli.main import run_command
from kquota.errors import UsageError
from kquota.render.describe import render_describe, render_resolve
from kquota.target import Target


@click.command(
    "kafka-client-quotas",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXAMPLES["kafka-client-quotas"],
)
@connect_options
@click.option("--describe", "describe", is_flag=True, help="List entities and their quotas.")
@click.option("--resolve", "resolve", is_flag=True, help="A client's effective quotas.")
@click.option("--alter", "alter", is_flag=True, help="Set or remove one entity's quotas.")
@entity_options
@alteration_options
def command(
    bootstrap_server: str | None,
    command_config: Path | None,
    describe: bool,
    resolve: bool,
    alter: bool,
    names: tuple[str, ...],
    defaults: tuple[str, ...],
    change: AlterationFlags,
) -> None:
    """Describe, resolve or alter client quotas (KIP-546)."""
    if describe + resolve + alter != 1:
        raise UsageError("give exactly one of --describe, --resolve, --alter")
    if not alter and change.given:
        raise UsageError("--add, --delete and --validate-only go with --alter")
    # Local checks before any connection: a typo is never reported as a network error.
    alteration = change.alteration(names, defaults) if alter else None
    parts = parse_entity_flags(names, defaults)
    if resolve and not parts:
        raise UsageError("--resolve needs the client: --names user=NAME,client-id=ID or ip=ADDR")
    target = Target.from_options(bootstrap_server, command_config)
    if alteration is not None:
        # kquota alter's path: the alter operation, through apply/ (the one writer).
        change.send(target, alteration)
    elif resolve:
        from kquota.api.admin import QuotaAdmin

        with QuotaAdmin(target.client_properties()) as admin:
            click.echo(render_resolve(admin.resolve(parts)), nl=False)
    else:
        from kquota.operations.describe import describe as describe_quotas

        click.echo(render_describe(describe_quotas(target, parts, strict=False)), nl=False)


def main(argv: list[str] | None = None) -> object:
    """main is the ``kafka-client-quotas`` console script."""
    return run_command(command, argv, "kafka-client-quotas")


if __name__ == "__main__":
    main()
