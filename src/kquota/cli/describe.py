"""``kquota describe``: the quotas on a live cluster, as KIP-546's kafka-client-quotas drew it.

Filter flags (KIP-546 ``--names`` / ``--defaults``):

* no flags: every entity of the cluster, ip entities included (describe-all: an empty,
  non-strict filter);
* ``--names user=alice`` matches that name exactly, ``--defaults user`` the default entity;
  any flag makes the filter **strict**: only entities with exactly the given types match
  (``--names user=alice`` shows ``{user=alice}``, not ``{user=alice, client-id=app}``).

Text output: the entity line ``{user=alice, client-id=<default>}`` then one indented
``key=value`` per quota (whole numbers without ``.0``). ``--format json`` writes the snapshot
contract (``kquota.snapshot``) that plan and drift read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kquota.cli.connect_options import connect_options, entity_options, parse_entity_flags
from kquota.model import DEFAULT_NAME_DISPLAY, Entity, QuotaState, sorted_entities


def format_value(value: float) -> str:
    """format_value: whole numbers without ``.0``, others in shortest round-trip form."""
    if value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    return repr(value)


def sanitize(text: str) -> str:
    """sanitize escapes control characters (and backslashes) so names cannot forge output."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029":
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def format_entity(entity: Entity) -> str:
    inner = ", ".join(
        f"{sanitize(t)}={DEFAULT_NAME_DISPLAY if n is None else sanitize(n)}"
        for t, n in entity.parts
    )
    return "{" + inner + "}"


def render_text(state: QuotaState) -> str:
    lines: list[str] = []
    for entity in sorted_entities(state):
        lines.append(format_entity(entity))
        values = state[entity]
        lines.extend(f"  {sanitize(k)}={format_value(values[k])}" for k in sorted(values))
    return "".join(line + "\n" for line in lines)


@click.command("describe")
@connect_options
@entity_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def command(
    bootstrap_server: str | None,
    command_config: Path | None,
    names: tuple[str, ...],
    defaults: tuple[str, ...],
    output_format: str,
) -> None:
    """Describe client quotas on a cluster.

    \b
    No --names/--defaults: every entity, ip entities included.
    --names TYPE=NAME matches that name, --defaults TYPE the default entity; with any of
    them the match is strict: only entities with exactly those types are shown.
    """
    from kquota.cluster import ClusterTarget
    from kquota.kafka.admin import FilterComponent

    parts = parse_entity_flags(names, defaults)
    target = ClusterTarget.from_options(bootstrap_server, command_config)
    with target.admin() as admin:
        if parts:
            components = [
                FilterComponent.default(t) if n is None else FilterComponent.exact(t, n)
                for t, n in parts.items()
            ]
            state = admin.describe(components, strict=True)
        else:
            state = admin.describe_all()
    if output_format == "json":
        from kquota.snapshot import write_snapshot

        write_snapshot(state, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        click.echo(render_text(state), nl=False)
