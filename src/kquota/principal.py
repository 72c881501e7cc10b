"""Who asks: a principal's names (user, client-id, ip), read from saved plans, discovery and
``--principals`` files, and resolved by :mod:`kquota.plan.resolver`.

The names alone, apart from resolving them: a saved plan's reader reads them, and the guard
(:func:`kquota.plan.guard.judge`) resolves them again on the live cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kquota.model import CLIENT_ID, IP, USER, Entity


@dataclass(frozen=True, slots=True)
class Principal:
    """Principal is who asks: a user (principal name), a client-id, and/or a client ip."""

    user: str | None = None
    client_id: str | None = None
    ip: str | None = None

    def __post_init__(self) -> None:
        # The public API's door: a name that is not a str fails here, not in a sort later.
        for field_name in ("user", "client_id", "ip"):
            value = getattr(self, field_name)
            if value is not None and not isinstance(value, str):
                from kquota.argcheck import refuse

                raise refuse(f"Principal: {field_name}", "a str or None", value)

    def entity(self) -> Entity:
        """entity is the principal in the entity JSON form (only the names given)."""
        parts: dict[str, str | None] = {}
        if self.user is not None:
            parts[USER] = self.user
        if self.client_id is not None:
            parts[CLIENT_ID] = self.client_id
        if self.ip is not None:
            parts[IP] = self.ip
        return Entity.of(parts)


def unique_principals(principals: Iterable[Principal]) -> tuple[Principal, ...]:
    """unique_principals is each principal once, sorted by user, client-id, ip (absent names
    first): the one order impact, discovery and saved plans list principals in."""
    return tuple(
        sorted(
            dict.fromkeys(principals), key=lambda p: (p.user or "", p.client_id or "", p.ip or "")
        )
    )
