"""Desired-state YAML from a state: what ``kquota export`` writes.

The output is the canonical file shape (one flow-mapping line per entity, which the desired
loader's fast path reads), grouped by entity kind with a comment heading each group, entities
in :func:`~kquota.model.sorted_entities` order, keys in the broker's key order. Byte rates
use an exact unit where one exists (``10MiB``, ``500KB``; the loader accepts them), else
plain integers. The contract, tested: loading the output gives back exactly the same doubles,
so export followed by plan shows no changes.

YAML 1.1 (PyYAML) details handled here: a name that would not read back as the same string
(``true``, ``010``, ``null``, anything with ``:`` or ``,`` ...) is double-quoted; a name that
literally reads ``<default>`` is written ``{name: "<default>"}``; a name with control or
invisible characters or surrounding whitespace is written ``{name: "...", verbatim: true}``;
floats always carry a dot and a signed exponent (``1.0e-05``), because PyYAML reads ``1e-05``
as a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import yaml

from kquota.model import CLIENT_ID, DEFAULT_NAME_DISPLAY, IP, USER, Entity, sorted_entities
from kquota.names import unusual_name
from kquota.quotakeys import LONG_MAX, QUOTA_KEYS, ValueType
from kquota.units import format_byte_size

_GROUPS: tuple[tuple[tuple[str, ...], str], ...] = (
    ((USER,), "users"),
    ((USER, CLIENT_ID), "user + client-id"),
    ((CLIENT_ID,), "client-ids"),
    ((IP,), "ip addresses"),
)
_KEY_ORDER = {k: i for i, k in enumerate(QUOTA_KEYS)}
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./@+=-]*\Z")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


def render_desired(state: Mapping[Entity, Mapping[str, float]], header: str = "") -> str:
    """render_desired writes a state as one desired-state YAML document."""
    return render_desired_lines(state, header)[0]


def render_desired_lines(
    state: Mapping[Entity, Mapping[str, float]], header: str = "", kind: str = "ClientQuotas"
) -> tuple[str, dict[int, Entity]]:
    """render_desired_lines is :func:`render_desired` plus the entity on each entry line
    (1-based; an entry's ``match`` and ``set`` lines), for checking what was written.
    ``kind`` ``ClientQuotasOverlay`` writes an overlay (``kquota recommend``'s patch)."""
    at: dict[int, Entity] = {}
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += ["apiVersion: kquota/v1", f"kind: {kind}"]
    if not state:
        return "\n".join([*lines, "quotas: []"]) + "\n", at
    lines.append("quotas:")
    groups: dict[str, list[Entity]] = {}
    for entity in sorted_entities(state):
        groups.setdefault(_group(entity.types), []).append(entity)
    first = True
    for title in [t for _, t in _GROUPS] + ["other entity types"]:
        members = groups.get(title)
        if not members:
            continue
        if not first:
            lines.append("")
        first = False
        lines.append(f"  # {title}")
        for entity in members:
            at[len(lines) + 1] = at[len(lines) + 2] = entity
            lines.append(f"  - match: {_match(entity)}")
            lines.append(f"    set: {_set(state[entity])}")
    return "\n".join(lines) + "\n", at


def _group(types: tuple[str, ...]) -> str:
    return next((title for t, title in _GROUPS if t == types), "other entity types")


def _match(entity: Entity) -> str:
    return "{" + ", ".join(f"{_scalar(t)}: {_name(n)}" for t, n in entity.parts) + "}"


def _name(name: str | None, scalar: Callable[[str], str] | None = None) -> str:
    """_name writes an entity name as the loader reads it back: ``scalar`` (plain where YAML
    keeps it a string, by default) for an ordinary name."""
    if name is None:
        return DEFAULT_NAME_DISPLAY
    if name == DEFAULT_NAME_DISPLAY:
        return '{name: "<default>"}'
    if unusual_name(name):
        return "{name: " + double_quoted(name) + ", verbatim: true}"
    return (scalar or _scalar)(name)


def quoted_name(name: str | None) -> str:
    """quoted_name is :func:`_name` with an ordinary name always double-quoted (the default
    entity too: ``"<default>"``), the way people often write them."""
    if name is None:
        return double_quoted(DEFAULT_NAME_DISPLAY)
    return _name(name, double_quoted)


def _scalar(text: str) -> str:
    """_scalar writes a string plain when YAML reads it back as that same string."""
    if _PLAIN.match(text) and _resolves_to_str(text):
        return text
    return double_quoted(text)


def double_quoted(text: str) -> str:
    """double_quoted escapes everything YAML would not read back verbatim inside quotes."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif _verbatim(code):
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)


def _resolves_to_str(text: str) -> bool:
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return bool(tag == _STR_TAG)


def _set(values: Mapping[str, float]) -> str:
    keys = sorted(values, key=lambda k: (_KEY_ORDER.get(k, len(_KEY_ORDER)), k))
    return "{" + ", ".join(f"{_scalar(k)}: {_value(k, values[k])}" for k in keys) + "}"


def _value(key: str, value: float) -> str:
    spec = QUOTA_KEYS.get(key)
    if value.is_integer() and abs(value) < 2**63:
        whole = int(value)
        if spec is not None and spec.value_type is ValueType.LONG and whole > 0:
            sized = format_byte_size(whole)
            return str(whole) if sized == f"{whole}B" else sized
        return str(whole)
    if value == 2.0**63 and spec is not None and spec.value_type is ValueType.LONG:
        return str(LONG_MAX)  # the loader reads Long.MAX_VALUE as this very double
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        text = f"{mantissa}e{exponent}"
    return text


def _verbatim(code: int) -> bool:
    """_verbatim: YAML's printable set, minus the characters it reads as line breaks or BOM."""
    if 0x20 <= code <= 0x7E or code >= 0x10000:
        return True
    if 0xA0 <= code <= 0xD7FF:
        return code not in (0x2028, 0x2029)
    return 0xE000 <= code <= 0xFFFD and code != 0xFEFF
