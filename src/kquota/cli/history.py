"""``kquota history``: the applies recorded on an audit topic, or one entity's changes."""

from __future__ import annotations

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, format_option, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError
from kquota.model import Entity


def parse_entity(text: str) -> Entity:
    """parse_entity reads ``--entity user=alice,client-id=<default>`` into an Entity."""
    from kquota.cli.connect_options import parse_entity_flags

    parts = parse_entity_flags((text,), ())
    if not parts:
        raise UsageError(f"--entity {text!r}: give TYPE=NAME[,TYPE=NAME]")
    named = {t: (None if n == "<default>" else n) for t, n in parts.items()}
    try:
        return Entity.of(named)
    except (ValueError, KeyError) as e:
        raise UsageError(
            f"--entity {text!r}: {e}; allowed: user, client-id and ip parts, "
            "each TYPE=NAME or TYPE=<default>"
        ) from None


@click.command("history", epilog=EXAMPLES["history"])
@live_targeting_options
@click.option("--audit-topic", help="The audit topic to read (default: kquota.yaml's).")
@click.option(
    "--entity",
    metavar="TYPE=NAME[,TYPE=NAME]",
    help="Every change to this entity, e.g. 'user=alice,client-id=<default>'.",
)
@format_option(
    ["text", "json", "markdown"],
    "text for a terminal, json for programs, markdown for a pull request or a ticket.",
)
@timeout_option("history")
def command(where: TargetingArgs, audit_topic: str | None, entity: str | None, fmt: str) -> None:
    """List the applies recorded on the audit topic, or every change to one entity."""
    from kquota.operations.revert import history
    from kquota.render.history import (
        render_history_json,
        render_history_markdown,
        render_history_text,
    )

    chosen = parse_entity(entity) if entity is not None else None
    target = where.resolve(require_source=False)
    if target.offline:
        raise UsageError("history reads the live cluster: give --cluster or --bootstrap-server")
    found = history(target, audit_topic=audit_topic, entity=chosen)
    render = {
        "json": render_history_json,
        "markdown": render_history_markdown,
    }.get(fmt, render_history_text)
    click.echo(render(found), nl=False)
