"""The house's text-safety core: names and numbers as every output shows them.

Names come from a cluster or a YAML file and may hold anything. Printed to a terminal or a
pull-request comment, control and format characters (ANSI escapes, bidi overrides, newlines)
could forge or hide lines, so they are shown escaped (``\\x1b``, ``\\u202e``). A name that
would be ambiguous in the ``{type=name, ...}`` form (empty, the literal ``<default>``, or with
``,={}"`` or surrounding spaces) is shown in double quotes. An entity is shown by
:func:`kquota.model.display_entity`, next to the entity; every layer imports both from
here and there, the renderers too.

Numbers: whole values print without ``.0`` (``1048576``), others as Python's shortest
round-trip ``repr`` (``0.1``, ``1e-05``), never a fixed ``%f`` that hides or invents digits.
A byte rate reads with its human unit beside it, ``1048576 (1 MiB/s)`` (:func:`value_with_unit`):
here, below both the plan and the renderers, so a guard's verdict built by the plan reads in
the units the rendered plan shows.
"""

from __future__ import annotations

import re

from kquota.confusables import invisible

DEFAULT_NAME_DISPLAY = "<default>"
"""How the default entity's name is shown (and written in YAML matches)."""

_AMBIGUOUS = frozenset(',={}"')

PLAIN_NAME = re.compile(r"[!#-+\--<>-\[\]-z|~]+")
"""Printable ASCII but the space, ``\\`` and ``,={}"``: a name made only of these shows as
itself (unless it is ``<default>``): one C call decides what :func:`display_name`'s rules
decide in several passes, for plans that show 100k names."""

_plain = PLAIN_NAME.fullmatch


def number(value: float, *, long_range: bool = False) -> str:
    """number prints a quota value: whole numbers without ``.0``, else shortest repr.

    ``long_range``: whole numbers print as integers only below 2**63, as kafka-client-quotas
    prints them (describe, resolve, a stale plan's values); larger ones in exponent form.
    """
    if value.is_integer() and (not long_range or abs(value) < 2**63):
        return str(int(value))
    return repr(value)


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


def cut(shown: str, limit: int) -> str:
    """cut is text already made safe, no longer than ``limit`` characters: a field read from
    somewhere anyone can write (the audit trail) is shown at a readable length, with ``…``
    where it was cut."""
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _hides(text: str) -> bool:
    return any(invisible(c) for c in text)


def safe_text(text: str) -> str:
    """safe_text escapes control, format and other invisible characters (default-ignorable
    ones too, such as U+3164 HANGUL FILLER, which Python counts as printable), and
    backslashes."""
    if text.isprintable() and "\\" not in text and (text.isascii() or not _hides(text)):
        return text
    out: list[str] = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() and (ch.isascii() or not invisible(ch)):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
            )
    return "".join(out)


def display_name(name: str | None, *, as_yaml: bool = False) -> str:
    """display_name shows an entity name: ``<default>`` for the default, escaped otherwise.

    ``as_yaml``: a name literally ``<default>`` shows as the YAML that declares it, ``{name:
    <default>}``, for messages about desired-state files (which point at that YAML).
    """
    if name is None:
        return DEFAULT_NAME_DISPLAY
    if _plain(name) is not None and name != DEFAULT_NAME_DISPLAY:
        return name  # as the rules would (tests/test_display_fast.py holds them to it)
    return name_by_rules(name, as_yaml=as_yaml)


def name_by_rules(name: str, *, as_yaml: bool = False) -> str:
    """name_by_rules is :func:`display_name` of a name, without the shortcut for
    :data:`PLAIN_NAME` names: the rules themselves, which that shortcut must agree with."""
    if as_yaml and name == DEFAULT_NAME_DISPLAY:
        return "{name: <default>}"
    safe = safe_text(name)
    if (
        not name
        or name == DEFAULT_NAME_DISPLAY
        or name != name.strip()
        or not _AMBIGUOUS.isdisjoint(name)
    ):
        return '"' + safe.replace('"', '\\"') + '"'
    return safe
