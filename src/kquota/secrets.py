"""Which Kafka client properties hold secrets: one rule for every place that prints them.

``sasl.jaas.config`` counts (``jaas``): it carries the password inside a longer value.
Over-masking (``ssl.key.location`` is a path) is the safe side of this rule.
"""

from __future__ import annotations

from collections.abc import Mapping

MASK = "***"
_SECRET_WORDS = ("password", "secret", "token", "key", "jaas")


def is_secret(name: str) -> bool:
    """is_secret says whether a property's value must never be shown."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def mask(props: Mapping[str, str]) -> dict[str, str]:
    """mask hides the values of secret properties, for printing."""
    return {k: MASK if is_secret(k) else v for k, v in props.items()}
