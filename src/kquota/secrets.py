"""Which Kafka client properties hold secrets: one rule for every place that prints them.

``sasl.jaas.config`` counts (``jaas``): it carries the password inside a longer value.
Over-masking (``ssl.key.location`` is a path) is the safe side of this rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MASK = "***"
_SECRET_WORDS = ("password", "secret", "token", "key", "jaas")


def is_secret(name: str) -> bool:
    """is_secret says whether a property's value must never be shown."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def mask(props: Mapping[str, str]) -> dict[str, str]:
    """mask hides the values of secret properties, for printing."""
    return {k: MASK if is_secret(k) else v for k, v in props.items()}


_PROPERTY_NAME = re.compile(r"[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+")


def looks_like_property_name(key: str) -> bool:
    """looks_like_property_name: ``key`` is spelled like a Kafka client property (lower case,
    dotted: ``ssl.truststore.location``), so a message may show it. Anything else
    (``Sup3rS3cret``, ``hunter2``) may be a value that lost its key: a message names only
    where it stands."""
    return _PROPERTY_NAME.fullmatch(key) is not None


@dataclass(frozen=True)
class Provenance:
    """Provenance is where client properties came from, for messages that must not show them.

    ``where``: property -> ``file:line`` (a properties file, kquota.yaml). ``variables``:
    property -> the ``${VAR}`` names its value was expanded from; such a value is never shown,
    whatever the property (a secret put in ``security.protocol`` by mistake is still a secret).
    """

    where: Mapping[str, str] = field(default_factory=dict)
    variables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def hides(self, prop: str) -> bool:
        """hides: the value of ``prop`` must not be shown."""
        return is_secret(prop) or prop in self.variables

    def name(self, prop: str) -> str:
        """name is ``prop`` as messages say it: ``security.protocol (from ${X})``."""
        names = self.variables.get(prop)
        if not names:
            return prop
        return f"{prop} (from {', '.join('${' + n + '}' for n in names)})"

    def show(self, prop: str, value: object) -> str:
        """show is ``prop 'value'``, or the property's name alone when its value is hidden."""
        return self.name(prop) if self.hides(prop) else f"{prop} {value!r}"

    def at(self, prop: str) -> str:
        """at is ``file:line: `` for ``prop`` when known, else empty."""
        where = self.where.get(prop)
        return f"{where}: " if where else ""

    def merged(self, other: Provenance, keys: Iterable[str]) -> Provenance:
        """merged: ``other``'s provenance wins for ``keys`` (a later source overrode them)."""
        replaced = set(keys)
        where = {k: v for k, v in self.where.items() if k not in replaced}
        variables = {k: v for k, v in self.variables.items() if k not in replaced}
        where.update(other.where)
        variables.update(other.variables)
        return Provenance(where, variables)


NO_PROVENANCE = Provenance()
