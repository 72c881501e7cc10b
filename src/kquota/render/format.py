"""Formatting shared by the renderers: human units beside the raw numbers.

The safe names and numbers themselves live below the renderers, in :mod:`kquota.display` and
:func:`kquota.model.display_entity`: every layer imports them from there.
"""

from __future__ import annotations

from kquota.display import number

_BYTE_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate"})
_BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human(key: str, value: float) -> str | None:
    """human is the value in units a reader takes in at a glance, or None if it adds nothing.

    Only byte rates get one: ``1048576`` is hard to read, ``1 MiB/s`` is not. The other keys
    are small numbers whose unit the key name already says (a percentage, a rate per second);
    repeating the number beside them was noise.
    """
    if key in _BYTE_KEYS:
        return _bytes_per_second(value)
    return None


def value_with_unit(key: str, value: float) -> str:
    """value_with_unit is ``1048576 (1 MiB/s)``: the raw value first, the human one beside."""
    # Plans repeat a few tiers across 100k lines. Only positive values are remembered: NaN
    # never finds itself, and 0.0 and -0.0 are one key (``number`` prints both as 0 today;
    # remembering them would tie their texts together for good).
    memo = (key, value)
    shown = _SHOWN.get(memo) if value > 0 else None
    if shown is None:
        h = human(key, value)
        shown = number(value) if h is None else f"{number(value)} ({h})"
        if value > 0 and len(_SHOWN) < 4096:
            _SHOWN[memo] = shown
    return shown


_SHOWN: dict[tuple[str, float], str] = {}


def _bytes_per_second(value: float) -> str:
    if not value >= 1024:  # also NaN
        return f"{number(value)} B/s"
    scaled, unit = value, "B"
    for u in _BINARY_UNITS:
        if scaled < 1024:
            break
        scaled, unit = scaled / 1024, u
    text = str(int(scaled)) if scaled.is_integer() else f"{scaled:.2f}".rstrip("0").rstrip(".")
    return f"{text} {unit}/s"


__all__ = ["human", "value_with_unit"]
