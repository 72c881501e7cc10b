"""The broker's rules for one entity and one quota value, applied before any network call.

The controller's checks (KAFKA-QUOTA-SEMANTICS §3.3–3.5) plus kquota's stricter ones: NaN
and infinities are refused (the controller lets NaN through), booleans and strings are
refused (YAML reads ``yes`` as true), and ``ip`` names must be IP literals. The broker would
accept a hostname for ``ip``, but it resolves it on the controller, at apply time, with the
controller's DNS; a name that resolves here may not resolve there, and a quota keyed by a
hostname silently stops matching when DNS changes. So a hostname is refused locally.

Names: at most 32,767 bytes of UTF-8 (the protocol's string limit); user and client-id
names with control characters are refused and those with surrounding whitespace or
invisible characters warned about, unless declared ``verbatim`` (:mod:`kquota.names`); ip
names are IP literals without a zone id. Values: the numbers YAML 1.1 reads other than they
look (``010``, ``0x10``, ``0b10``, ``1:30``) are refused with the reason
(:func:`number_trap`).

A problem is a :data:`Complaint`, ``(what is wrong, what is allowed)``; the checks return
``None`` when all is well, and :func:`quota_value` returns the value as a float.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from kquota import quotakeys
from kquota.confusables import invisible, invisible_chars
from kquota.desired.nodes import (
    FLOAT_TAG,
    INT_TAG,
    STR_TAG,
    Scalar,
    Unsupported,
    kind_name,
    resolve_tag,
    scalar_value,
)
from kquota.model import CLIENT_ID, ENTITY_TYPES, IP, MAX_NAME_BYTES, USER, name_bytes
from kquota.names import ip_address
from kquota.quotakeys import INT_MAX, LONG_MAX, QUOTA_KEYS, ValueType
from kquota.units import SIZE_HELP, UnitError, parse_byte_size

Complaint = tuple[str, str]

NAME_HELP = '<default> (the default entity), a non-empty name, or {name: "..."} (a literal name)'
IP_NAME_HELP = "an IPv4 or IPv6 literal such as 203.0.113.7 or 2001:db8::1, or <default>"
ENTITY_TYPES_HELP = ", ".join(ENTITY_TYPES)
COMBINATIONS_HELP = "user, client-id, user + client-id, or ip alone"


def allowed_values(key: str, *, sizes: bool = True) -> str:
    """allowed_values says, for a message, which values ``key`` takes.

    ``sizes`` False leaves out size strings such as 1MiB: JSON plan files hold plain numbers.
    """
    spec = QUOTA_KEYS[key]
    if spec.value_type is ValueType.LONG:
        whole = f"a whole number of bytes from 1 to {LONG_MAX}"
        return whole + ", or " + SIZE_HELP if sizes else whole
    if spec.value_type is ValueType.INT:
        return f"a whole number from 1 to {INT_MAX}"
    return "a finite number greater than 0"


def kind_label(types: tuple[str, ...]) -> str:
    return "ip" if IP in types else "user/client-id"


@lru_cache(maxsize=64)
def keys_help(types: tuple[str, ...]) -> str:
    """keys_help lists the keys an entity of these types takes, for a message."""
    return ", ".join(quotakeys.allowed_keys(types)) + f" (the {kind_label(types)} keys)"


def quota_value(key: str, raw: object) -> float | Complaint:
    """quota_value checks one YAML value for a known quota key and gives its float."""
    spec = QUOTA_KEYS[key]
    if isinstance(raw, bool) or raw is None or isinstance(raw, Unsupported):
        return (f"{kind_name(raw)} is not a quota value", allowed_values(key))
    if isinstance(raw, str):
        if _looks_numeric(raw):
            if resolve_tag(raw, True) != STR_TAG:
                return (f"{raw!r} is quoted, so it is a string, not a number", allowed_values(key))
            # YAML 1.1 (PyYAML) reads 1e3 as a string: floats need a dot, as in 1.0e+3.
            return (
                f"{raw!r} is a string in YAML 1.1, not a number (write 1.0e+3, not 1e3)",
                allowed_values(key),
            )
        if spec.unit != "bytes/s":
            return ("a string is not a quota value", allowed_values(key))
        try:
            raw = parse_byte_size(raw)
        except UnitError as e:
            return (str(e), allowed_values(key))
    if isinstance(raw, int):
        # Range-check the exact integer: float(2**63 - 1) rounds up to 2**63.
        if raw <= 0:
            return ("must be greater than 0", allowed_values(key))
        limit = {ValueType.LONG: LONG_MAX, ValueType.INT: INT_MAX}.get(spec.value_type)
        if limit is not None and raw > limit:
            return (
                f"must be at most {limit}, the {spec.value_type.value} maximum",
                allowed_values(key),
            )
        try:
            return float(raw)
        except OverflowError:
            return ("is too large for a double", allowed_values(key))
    if isinstance(raw, float):
        problem = quotakeys.value_problem(key, raw)
        if problem is not None:
            return (problem, allowed_values(key))
        return raw
    return (f"{kind_name(raw)} is not a quota value", allowed_values(key))


@lru_cache(maxsize=256)
def key_problem(key: str, types: tuple[str, ...]) -> Complaint | None:
    """key_problem refuses a key the broker does not know, or one for another entity kind."""
    if key in quotakeys.allowed_keys(types):
        return None
    if key in QUOTA_KEYS:
        other = "a user/client-id" if QUOTA_KEYS[key].entity_kind == "client" else "an ip"
        wrong = f"{key!r} is {other} key, not allowed for {kind_label(types)} entities"
    else:
        wrong = f"unknown quota key {key!r}"
    return (wrong, keys_help(types))


def combination_problem(types: tuple[str, ...]) -> Complaint | None:
    """combination_problem refuses ip with user or client-id (the controller's step C)."""
    if IP in types and (USER in types or CLIENT_ID in types):
        return ("ip cannot be combined with user or client-id", COMBINATIONS_HELP)
    return None


def ip_problem(name: str) -> Complaint | None:
    if "%" in name:
        return (
            f"ip {name!r} has a zone id (%...), which names an interface of one host",
            IP_NAME_HELP + " (no zone id)",
        )
    if ip_address(name) is None:
        return (
            f"ip {name!r} is not an IP address (hostnames are refused: the broker would "
            "resolve them on the controller at apply time)",
            IP_NAME_HELP,
        )
    return None


NAME_CHARS_HELP = (
    'a name without control characters, or {name: "...", verbatim: true} for a name a '
    "cluster really has"
)


def name_problem(etype: str, name: str, verbatim: bool) -> Complaint | None:
    """name_problem refuses names the broker cannot take (too long) and, unless declared
    ``verbatim``, names with control characters, which are almost always mistakes."""
    size = name_bytes(name)
    if size > MAX_NAME_BYTES:
        return (
            f"{etype} name is {size} bytes in UTF-8, longer than the protocol allows",
            f"a name of at most {MAX_NAME_BYTES} bytes in UTF-8",
        )
    if verbatim or (name.isascii() and name.isprintable()):
        return None
    controls = [c for c in name if unicodedata.category(c) == "Cc"]
    if controls:
        return (
            f"{etype} name {name!r} has control characters ({code_points(controls)})",
            NAME_CHARS_HELP,
        )
    return None


def name_warnings(etype: str, name: str) -> list[str]:
    """name_warnings lists what is odd but possible in a name: surrounding whitespace and
    invisible characters. Each warning shows the code points and the way to declare it."""
    out: list[str] = []
    how = 'if the cluster really has this name, declare it as {name: "...", verbatim: true}'
    if name != name.strip():
        ends = [c for c in (name[0], name[-1]) if c.isspace()]
        out.append(
            f"{etype} name {name!r} has leading or trailing whitespace ({code_points(ends)}); "
            + how
        )
    if not name.isascii():
        hidden = invisible_chars(name)
        if hidden:
            out.append(
                f"{etype} name {_shown(name)} has invisible characters ({code_points(hidden)}); "
                + how
            )
    return out


def _shown(name: str) -> str:
    """_shown is ``repr(name)`` with the invisible characters repr keeps (U+3164, U+2800,
    variation selectors, ...) escaped too, so the message shows where they are."""
    return "".join(
        f"\\u{ord(c):04x}" if not c.isascii() and c.isprintable() and invisible(c) else c
        for c in repr(name)
    )


def code_points(chars: list[str]) -> str:
    """code_points names characters for a message: ``U+200B ZERO WIDTH SPACE``."""
    seen = dict.fromkeys(chars)
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}" for c in seen)


_DECIMAL_INT = re.compile(r"[-+]?(0|[1-9][0-9_]*)")


def number_trap(tag: str, text: str) -> str | None:
    """number_trap explains a plain number YAML 1.1 reads differently than it looks.

    PyYAML reads ``010`` as octal 8, ``0x10`` as 16, ``0b10`` as 2 and ``1:30`` as 90
    (sexagesimal); a reviewer reads all of them as something else. None when the text means
    what it says (plain decimal, with an optional sign, dot and exponent).
    """
    if tag == INT_TAG:
        if _DECIMAL_INT.fullmatch(text):
            return None
        body = text.lstrip("+-").replace("_", "")
        if ":" in body:
            what = "a sexagesimal (base 60) number"
        elif body[:2] in ("0x", "0X"):
            what = "a hexadecimal number"
        elif body[:2] in ("0b", "0B"):
            what = "a binary number"
        else:
            what = "an octal number"
    elif tag == FLOAT_TAG and ":" in text:
        what = "a sexagesimal (base 60) number"
    else:
        return None
    value = scalar_value(Scalar(tag, text, 0, 0))
    return f"{text} is read by YAML 1.1 as {what}, {value}; write the decimal number"


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
