"""``--impact``, ``--principals FILE``, ``--protect TYPE=NAME``, ``--allow-protected-change``:
a plan's blast radius and the principals it may not throttle harder (docs/impact.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from kquota.cli.option_group import option_group
from kquota.errors import UsageError
from kquota.policy import ProtectMatch
from kquota.principals.model import Discovery

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ProtectArgs:
    """ProtectArgs is ``--protect`` (each ``TYPE=GLOB[,TYPE=GLOB]``) and its override."""

    protect: tuple[str, ...] = ()
    allow_protected_change: bool = False

    def matches(self) -> tuple[ProtectMatch, ...]:
        """matches parses every --protect; UsageError naming the one that is wrong."""
        return tuple(parse_protect(text) for text in self.protect)


def parse_protect(text: str) -> ProtectMatch:
    """parse_protect reads ``user=svc-*`` or ``user=svc-*,client-id=loader``."""
    mapping: dict[str, str] = {}
    for part in text.split(","):
        t, sep, glob = part.partition("=")
        t = t.strip()
        if not sep or t in mapping:
            raise UsageError(
                f"--protect {text!r}: expected TYPE=NAME, each type once, comma-separated; "
                "types user, client-id, ip; names may be globs as in scopes (svc-*)"
            )
        mapping[t] = glob
    try:
        return ProtectMatch.of(mapping)
    except ValueError as e:
        raise UsageError(f"--protect {text!r}: {e}") from None


def protect_options(f: F) -> F:
    """protect_options adds --protect and --allow-protected-change (as ``guard: ProtectArgs``)."""
    options = [
        click.option(
            "--protect",
            multiple=True,
            metavar="TYPE=NAME",
            help="Protect principals (repeatable; globs as in scopes): a plan that lowers or "
            "newly imposes one's effective quota stops, like a mass removal.",
        ),
        click.option(
            "--allow-protected-change",
            is_flag=True,
            help="Override the protected-principals guard (after review).",
        ),
    ]
    return option_group("guard", ProtectArgs, options)(f)


def impact_options(f: F) -> F:
    """impact_options adds --impact and --principals FILE (as ``wanted: ImpactArgs``)."""
    options = [
        click.option(
            "--impact",
            "live",
            is_flag=True,
            help="Show every known principal whose effective quota the plan changes.",
        ),
        click.option(
            "--principals",
            "principals_file",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Also resolve the principals in FILE, one 'user=NAME,client-id=ID' a line "
            "(implies the impact of the plan on them).",
        ),
    ]
    return option_group("wanted", ImpactArgs, options)(f)


@dataclass(frozen=True)
class ImpactArgs:
    """ImpactArgs is ``--impact`` and ``--principals FILE`` as given."""

    live: bool = False
    principals_file: Path | None = None

    @property
    def asked(self) -> bool:
        return self.live or self.principals_file is not None

    def listed(self) -> Discovery | None:
        """listed reads the principals file (local, before any connection), if given."""
        if self.principals_file is None:
            return None
        from kquota.principals.listed import read_principals

        return read_principals(self.principals_file)
