"""``kquota alter``: change one entity's quotas, as KIP-546's kafka-client-quotas drew it.

``--names``/``--defaults`` name the entity; ``--add key=value,…`` sets, ``--delete key,…``
removes; ``--validate-only`` asks the broker to check without applying. The change is checked
locally first with the broker's own rules (known keys for the entity kind, values > 0, whole
numbers for byte and connection rates), so nothing is sent when it would fail, except for an
entity type kquota does not know: that goes to the broker, whose error is then shown. A
failed alteration exits 1 with the broker's message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kquota.cli.connect_options import connect_options, entity_options, parse_entity_flags
from kquota.cli.examples import EXAMPLES
from kquota.cli.option_group import option_group
from kquota.cli.timeout_option import timeout_option
from kquota.errors import AlterationFailed, UsageError
from kquota.model import display_entity
from kquota.operations.alter import alter, checked_alteration, entity_of_parts
from kquota.target import Target

if TYPE_CHECKING:
    from kquota.operations.alter import QuotaAlteration

__all__ = ["AlterationFailed", "AlterationFlags", "alteration_options", "command"]

F = TypeVar("F", bound=Callable[..., Any])


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


@dataclass(frozen=True)
class AlterationFlags:
    """AlterationFlags is KIP-546's ``--add``, ``--delete`` and ``--validate-only`` as given."""

    adds: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    validate_only: bool = False

    @property
    def given(self) -> bool:
        """given: any of the flags was used."""
        return bool(self.adds or self.deletes or self.validate_only)

    def alteration(self, names: tuple[str, ...], defaults: tuple[str, ...]) -> QuotaAlteration:
        """alteration reads these flags and --names/--defaults into one alteration, checked
        locally with the controller's rules (a UsageError, and nothing sent, if it would
        fail)."""
        parts = parse_entity_flags(names, defaults)
        entity_of_parts(parts)  # the entity is named before its values are read
        return checked_alteration(parts, parse_adds(self.adds), _split_list(self.deletes))

    def send(self, target: Target, alteration: QuotaAlteration) -> None:
        """send writes ``alteration`` (or has the broker validate it) through the alter
        operation, the one writer path; a refusal raises AlterationFailed."""
        alter(target, alteration, validate_only=self.validate_only)


def alteration_options(f: F) -> F:
    """alteration_options adds --add, --delete and --validate-only (KIP-546's flags); the
    command receives them as one ``change: AlterationFlags`` parameter."""

    options = [
        click.option(
            "--add", "adds", multiple=True, metavar="KEY=VALUE[,KEY=VALUE]", help="Set quotas."
        ),
        click.option(
            "--delete", "deletes", multiple=True, metavar="KEY[,KEY]", help="Remove quotas."
        ),
        click.option("--validate-only", is_flag=True, help="Have the broker check, not apply."),
    ]
    return option_group("change", AlterationFlags, options)(f)


@click.command("alter", epilog=EXAMPLES["alter"])
@connect_options
@entity_options
@alteration_options
@timeout_option("alter")
def command(
    bootstrap_server: str | None,
    command_config: Path | None,
    names: tuple[str, ...],
    defaults: tuple[str, ...],
    change: AlterationFlags,
) -> None:
    """Alter one entity's client quotas."""
    alteration = change.alteration(names, defaults)
    change.send(Target.from_options(bootstrap_server, command_config), alteration)
    verb = "Validated (not applied)" if change.validate_only else "Altered"
    click.echo(f"{verb} {display_entity(alteration.entity)}")
