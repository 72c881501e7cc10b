"""The public Python API's arguments, checked at the door.

A caller who passes a ``str`` where a list belongs, ``None``, or a mapping of the wrong shape
gets kquota's own :class:`~kquota.errors.UsageError` naming the function, the parameter, what
is allowed and what was given, instead of a ``TypeError`` or ``AttributeError`` from deep
inside. What was given is named by its type, never its value: it may be a secret.

Only the door is checked (``kquota.*`` functions and constructors); the layers behind it trust
their types, so the hot paths (a million entities) pay nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from kquota.errors import UsageError

T = TypeVar("T")


def given(value: object) -> str:
    """given names what a caller passed, by type only (``str``, ``None``, ``list``)."""
    return "None" if value is None else type(value).__name__


def refuse(where: str, allowed: str, value: object) -> UsageError:
    """refuse is the one message: ``make_plan: principals must be …, not str``."""
    return UsageError(f"{where} must be {allowed}, not {given(value)}")


def instance(value: Any, kind: type[T] | tuple[type, ...], where: str, allowed: str) -> T:
    """instance returns ``value`` when it is a ``kind``, else raises :func:`refuse`."""
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise refuse(where, allowed, value)
    return value  # type: ignore[return-value]


def optional(value: Any, kind: type[T] | tuple[type, ...], where: str, allowed: str) -> T | None:
    """optional is :func:`instance` that also accepts None."""
    return None if value is None else instance(value, kind, where, f"{allowed} or None")


def flag(value: Any, where: str) -> bool:
    """flag: ``True`` or ``False`` (not 1, not "yes")."""
    if not isinstance(value, bool):
        raise refuse(where, "True or False", value)
    return value


def optional_flag(value: Any, where: str) -> bool | None:
    """optional_flag: ``True``, ``False`` or ``None`` (the default, e.g. the policy's own)."""
    if value is not None and not isinstance(value, bool):
        raise refuse(where, "True, False or None", value)
    return value


def whole(value: Any, where: str, minimum: int, maximum: int) -> int:
    """whole: an int (not a bool) within ``minimum..maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise refuse(where, f"a whole number from {minimum} to {maximum}", value)
    if not minimum <= value <= maximum:
        raise UsageError(f"{where} must be from {minimum} to {maximum}, not {value}")
    return value


def number(value: Any, where: str, minimum: float, maximum: float, *, above: bool = False) -> float:
    """number: an int or float (not a bool, not NaN) within the range (``above``: more than
    ``minimum``)."""
    low = f"more than {minimum:g}" if above else f"from {minimum:g}"
    allowed = f"a number {low} to {maximum:g}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise refuse(where, allowed, value)
    if math.isnan(value) or value > maximum or value < minimum or (above and value == minimum):
        raise UsageError(f"{where} must be {allowed}, not {value!r}")
    return float(value)


def items(value: Any, kind: type[T] | tuple[type, ...], where: str, allowed: str) -> tuple[T, ...]:
    """items: a list or tuple (any iterable but a string, bytes or a mapping) of ``kind``."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise refuse(where, f"a list of {allowed}", value)
    out = tuple(value)
    for i, item in enumerate(out):
        instance(item, kind, f"{where}[{i}]", allowed)
    return out


def path(value: Any, where: str) -> Path:
    """path: a ``str`` or ``os.PathLike`` naming a file or folder."""
    if isinstance(value, bytes) or not isinstance(value, str | os.PathLike):
        raise refuse(where, "a path (str or pathlib.Path)", value)
    return Path(value)


def paths(value: Any, where: str) -> list[Path]:
    """paths: a list of paths; a lone path is refused (say ``[path]``), so that a ``str`` is
    never taken for a list of one-character paths."""
    if isinstance(value, str | bytes | os.PathLike):
        raise UsageError(
            f"{where} must be a list of paths, not a single {given(value)} (write [path])"
        )
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise refuse(where, "a list of paths (str or pathlib.Path)", value)
    return [path(p, f"{where}[{i}]") for i, p in enumerate(value)]


def string_mapping(value: Any, where: str, values: tuple[type, ...] = (str,)) -> Mapping[str, Any]:
    """string_mapping: a mapping whose keys are ``str`` and values one of ``values``.

    A key is named only when its value is acceptable (a key may be a misplaced secret)."""
    if not isinstance(value, Mapping):
        raise refuse(where, "a mapping (dict)", value)
    allowed = " or ".join(t.__name__ for t in values)
    for key, item in value.items():
        if not isinstance(key, str):
            raise UsageError(f"{where}: every key must be str, not {given(key)}")
        if not isinstance(item, values):
            from kquota.secrets import looks_like_property_name

            shown = repr(key) if looks_like_property_name(key) else "(a key not shown)"
            raise UsageError(f"{where}[{shown}] must be {allowed}, not {given(item)}")
    return value


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
