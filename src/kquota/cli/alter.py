"""``kquota alter``: change one entity's quotas, as KIP-546's kafka-client-quotas drew it.

``--names``/``--defaults`` name the entity; ``--add key=value,…`` sets, ``--delete key,…``
removes; ``--validate-only`` asks the broker to check without applying. The change is checked
locally first with the broker's own rules (known keys for the entity kind, values > 0, whole
numbers for byte and connection rates), so nothing is sent when it would fail, except for an
entity type kquota does not know: that goes to the broker, whose error is then shown. A
failed alteration exits 1 with the broker's message.
"""

from __future__ import annotations

import math
from pathlib import Path

import click

from kquota.cli.connect_options import connect_options, entity_options, parse_entity_flags
from kquota.cli.describe import format_entity
from kquota.errors import KquotaError, UsageError
from kquota.model import ENTITY_TYPES, Entity
from kquota.quotakeys import allowed_keys, entity_kind, value_problem


class AlterationFailed(KquotaError):
    """AlterationFailed: the broker rejected the alteration; the message is the broker's."""


def _split_list(values: tuple[str, ...]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def parse_adds(values: tuple[str, ...]) -> dict[str, float]:
    adds: dict[str, float] = {}
    for item in _split_list(values):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--add expects key=value, got {item!r}")
        try:
            value = float(raw.strip())
        except ValueError:
            raise UsageError(f"--add {key}: {raw.strip()!r} is not a number") from None
        if key in adds:
            raise UsageError(f"--add sets {key} more than once")
        adds[key] = value
    return adds


def local_problems(entity: Entity, adds: dict[str, float], deletes: list[str]) -> list[str]:
    """local_problems applies the controller's rules before anything is sent."""
    problems: list[str] = []
    for key in sorted(set(adds) & set(deletes)):
        problems.append(f"{key} is both added and deleted")
    for t, n in entity.parts:
        if n == "":
            problems.append(f"empty {t} name (use --defaults {t} for the default entity)")
    if not all(t in ENTITY_TYPES for t in entity.types):
        return problems  # the broker judges unknown types; its message is the one to show
    if entity_kind(entity.types) is None:
        problems.append("an ip entity cannot be combined with user or client-id")
        return problems
    allowed = allowed_keys(entity.types)
    for key, value in adds.items():
        if key not in allowed:
            problems.append(
                f"{key} is not a quota key for this entity (allowed: {', '.join(allowed)})"
            )
            continue
        if math.isnan(value) or math.isinf(value):
            problems.append(f"{key}: {value_problem(key, value)}")
            continue
        problem = value_problem(key, value)
        if problem is not None:
            problems.append(f"{key}={value!r}: {problem}")
    return problems


@click.command("alter")
@connect_options
@entity_options
@click.option("--add", "adds", multiple=True, metavar="KEY=VALUE[,KEY=VALUE]", help="Set quotas.")
@click.option("--delete", "deletes", multiple=True, metavar="KEY[,KEY]", help="Remove quotas.")
@click.option("--validate-only", is_flag=True, help="Have the broker check, not apply.")
def command(
    bootstrap_server: str | None,
    command_config: Path | None,
    names: tuple[str, ...],
    defaults: tuple[str, ...],
    adds: tuple[str, ...],
    deletes: tuple[str, ...],
    validate_only: bool,
) -> None:
    """Alter one entity's client quotas."""
    parts = parse_entity_flags(names, defaults)
    if not parts:
        raise UsageError("name the entity with --names TYPE=NAME and/or --defaults TYPE")
    entity = Entity.of(parts)
    to_set = parse_adds(adds)
    to_delete = _split_list(deletes)
    if not to_set and not to_delete:
        raise UsageError("nothing to alter: give --add and/or --delete")
    if len(to_delete) != len(set(to_delete)):
        raise UsageError("--delete names a key more than once")
    problems = local_problems(entity, to_set, to_delete)
    if problems:
        raise UsageError(
            f"invalid alteration of {format_entity(entity)} (nothing sent): " + "; ".join(problems)
        )

    from kquota.cluster import ClusterTarget
    from kquota.kafka.admin import QuotaAlteration, QuotaOp

    ops = tuple(QuotaOp.set(k, v) for k, v in to_set.items()) + tuple(
        QuotaOp.delete(k) for k in to_delete
    )
    target = ClusterTarget.from_options(bootstrap_server, command_config)
    with target.admin() as admin:
        (result,) = admin.alter([QuotaAlteration(entity, ops)], validate_only=validate_only)
    if not result.ok:
        raise AlterationFailed(
            f"{format_entity(entity)}: {result.error_message} ({result.error_name})"
        )
    verb = "Validated (not applied)" if validate_only else "Altered"
    click.echo(f"{verb} {format_entity(entity)}")
