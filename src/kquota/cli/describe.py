"""``kquota describe``: the quotas on a live cluster, as KIP-546's kafka-client-quotas drew it.

Filter flags (KIP-546 ``--names`` / ``--defaults``):

* no flags: every entity of the cluster, ip entities included (describe-all: an empty,
  non-strict filter);
* ``--names user=alice`` matches that name exactly, ``--defaults user`` the default entity;
  as in KIP-546, an entity may have other types besides: ``--names client-id=app`` shows
  ``{user=alice, client-id=app}`` and ``{client-id=app}``;
* ``--strict`` narrows to entities with exactly the given types (``--names user=alice
  --strict`` shows ``{user=alice}``, not ``{user=alice, client-id=app}``).

Text output: the entity line ``{user=alice, client-id=<default>}`` then one indented
``key=value`` per quota (whole numbers without ``.0``). Names are shown as every human output
of kquota shows them (``kquota.model.display_entity``): control characters escaped,
and a name that could read as structure or as the default entity (the literal ``<default>``,
an empty name, one with ``,={}"`` or surrounding spaces) in double quotes, so no two entities
ever print alike. ``--format json`` writes the snapshot
contract (``kquota.snapshot.files``) that plan and drift read.
"""

from __future__ import annotations

import sys

import click

from kquota.cli.connect_options import entity_options, parse_entity_flags
from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, format_option, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.operations.describe import describe
from kquota.render.describe import render_text
from kquota.runtime.gcpause import collector_paused


@click.command("describe", epilog=EXAMPLES["describe"])
@live_targeting_options
@entity_options
@format_option(
    ["text", "json"],
    "text as kafka-client-quotas shows it; json is the snapshot file format.",
    dest="output_format",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Only entities with exactly the types given by --names/--defaults.",
)
@timeout_option("describe")
@collector_paused()  # a describe of 100k holds large acyclic data: kquota.runtime.gcpause
def command(
    where: TargetingArgs,
    names: tuple[str, ...],
    defaults: tuple[str, ...],
    output_format: str,
    strict: bool,
) -> None:
    """Describe client quotas on a cluster.

    \b
    No --names/--defaults: every entity, ip entities included.
    --names TYPE=NAME matches that name, --defaults TYPE the default entity; entities
    with other types besides match too (KIP-546), unless --strict.
    """
    parts = parse_entity_flags(names, defaults)
    state = describe(where.resolve(), parts, strict=strict)
    if output_format == "json":
        from kquota.snapshot.files import write_snapshot

        write_snapshot(state, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        click.echo(render_text(state), nl=False)
