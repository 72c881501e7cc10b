"""``--bootstrap-server`` / ``--command-config``: how the imperative commands reach a cluster.

As in Kafka's tools: the properties file holds security settings (``security.protocol``,
``sasl.*``, ``ssl.*``, see :mod:`kquota.kafka.config`), the flag the address; the flag wins
over a ``bootstrap.servers`` line in the file. Also the entity flags shared by describe and
alter (``--names type=name,…``, ``--defaults type,…``), and the principal of plan and
resolve (``user=alice,client-id=etl``), parsed here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kquota.errors import UsageError

if TYPE_CHECKING:
    from kquota.plan.resolver import Principal

F = TypeVar("F", bound=Callable[..., Any])

_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def connect_options(f: F) -> F:
    """connect_options adds --bootstrap-server and --command-config to a command."""
    f = click.option(
        "--command-config",
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        help="Client properties file, as for Kafka's tools (security.protocol, sasl.*, ssl.*).",
    )(f)
    f = click.option(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT]",
        help="Broker address(es) to connect to.",
    )(f)
    return f


def entity_options(f: F) -> F:
    """entity_options adds --names and --defaults (each repeatable and comma-separated)."""
    f = click.option(
        "--defaults",
        "defaults",
        multiple=True,
        metavar="TYPE[,TYPE]",
        help="Entity types matched by their default entity, e.g. 'user' or 'user,client-id'.",
    )(f)
    f = click.option(
        "--names",
        "names",
        multiple=True,
        metavar="TYPE=NAME[,TYPE=NAME]",
        help="Entity types with a name, e.g. 'user=alice,client-id=app' ('\\,' for a comma).",
    )(f)
    return f


def _split(value: str) -> list[str]:
    return [p.replace("\\,", ",") for p in _UNESCAPED_COMMA.split(value) if p != ""]


def parse_entity_flags(names: tuple[str, ...], defaults: tuple[str, ...]) -> dict[str, str | None]:
    """parse_entity_flags reads --names/--defaults into type -> name (None = default entity).

    Unknown types pass through: the broker's own error is the one users should see.
    """
    parts: dict[str, str | None] = {}

    def put(entity_type: str, name: str | None) -> None:
        if entity_type in parts:
            raise UsageError(f"entity type {entity_type!r} is given more than once")
        parts[entity_type] = name

    for value in names:
        for item in _split(value):
            entity_type, sep, name = item.partition("=")
            if not sep or not entity_type:
                raise UsageError(f"--names expects TYPE=NAME, got {item!r}")
            if name == "":
                # The broker stores no empty names ("Empty user not supported"): a describe
                # would silently match nothing, an alter would fail after connecting.
                raise UsageError(
                    f"--names {item!r}: the {entity_type.strip()} name is empty; "
                    f"name it, or use --defaults {entity_type.strip()} for the default entity"
                )
            put(entity_type.strip(), name)
    for value in defaults:
        for item in _split(value):
            if "=" in item:
                raise UsageError(f"--defaults expects entity types only, got {item!r}")
            put(item.strip(), None)
    return parts


def parse_principal(text: str, option: str) -> Principal:
    """parse_principal reads ``user=alice,client-id=etl`` (and ``ip=...``) into a Principal."""
    from kquota.principals.listed import principal_of

    try:
        return principal_of(text)
    except ValueError as e:
        raise UsageError(f"{option} {text!r}: {e}") from None
