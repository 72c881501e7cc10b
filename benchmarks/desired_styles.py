"""The same desired state written the ways people write it (issue 22, goal 1).

Every style states exactly the same entities and values (the plan and its digest are the
same whichever style is read), so the styles differ only in how fast they are read:

- ``export``: what ``kquota export`` writes: ``- match: {...}`` then ``set: {...}``, plain
  names, byte rates with units where exact (``10MiB``), a comment heading each group;
- ``flow-line``: a whole entry on one line, ``- {match: {...}, set: {...}}``, plain numbers;
- ``flow-double`` / ``flow-single``: the export form with every name double / single quoted;
- ``block``: ``match:`` and ``set:`` on lines of their own, one key a line below them;
- ``units``: the export form with byte rates in ``MiB``, ``KiB`` and ``KB`` (SI) units,
  some written with a space (``1024 KiB``);
- ``comments``: the export form with a comment line before every entry and a trailing
  comment on every ``set``;
- ``profiles``: a ``profiles`` section of the rate tiers, each entry ``profile: NAME`` with
  a per-entry ``set`` override where its values differ from the tier;
- ``files``: the export form split into 10 files;
- ``profiles-block``: ``profiles`` as people often write them, each profile a block mapping
  of its own (``gold:`` then one key a line below it), entries as in ``profiles``.

The styles above were written beside the fast reader. The ``docs-*`` styles (issue 34,
:data:`DOC_STYLES`) are written from ``docs/desired-state.md`` and ``examples/desired/``
instead, each mixing in one file what people write: every entity shape, names plain, quoted
and in the object form, units with spaces and ``/s``, comments, profiles with overrides,
block mappings two levels deep, flow mappings spaced as formatters write them, ``---``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from kquota.model import Entity, sorted_entities

STYLES = (
    "export",
    "flow-line",
    "flow-double",
    "flow-single",
    "block",
    "units",
    "comments",
    "profiles",
    "files",
    "profiles-block",
    "docs-mixed",
    "docs-block",
    "docs-spaced",
    "docs-profiles",
)
HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
MIB = 1048576


def write_style(
    style: str, desired: Mapping[Entity, Mapping[str, float]], folder: Path
) -> list[Path]:
    """write_style writes ``desired`` in ``style`` under ``folder``; the files it wrote."""
    from kquota.desired.writer import render_desired

    if style == "export":
        return [_write(folder / "desired.yaml", render_desired(desired, "benchmark"))]
    entities = sorted_entities(desired)
    if style == "files":
        paths = []
        for part in range(10):
            chunk = {e: desired[e] for e in entities[part::10]}
            paths.append(_write(folder / f"desired-{part}.yaml", render_desired(chunk)))
        return paths
    if style in _DOC_WRITERS:
        return [_write(folder / "desired.yaml", _DOC_WRITERS[style](desired, entities))]
    if style in ("profiles", "profiles-block"):
        text = _profiles(desired, entities, block=style == "profiles-block")
        return [_write(folder / "desired.yaml", text)]
    entry = _ENTRIES[style]
    body = "".join(entry(e, desired[e]) for e in entities)
    return [_write(folder / "desired.yaml", HEADER + "quotas:\n" + body)]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _number(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)


def _flow(pairs: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs.items()) + "}"


def _names(entity: Entity, quote: str = "") -> dict[str, str]:
    return {t: f"{quote}{n}{quote}" for t, n in entity.parts}


def _plain_set(values: Mapping[str, float]) -> dict[str, str]:
    return {k: _number(v) for k, v in values.items()}


def _unit(k: str, v: float, i: int) -> str:
    if not k.endswith("byte_rate") or v % 1024:
        return _number(v)
    if v % MIB == 0 and i % 4 == 0:
        return f"{int(v) // MIB}MiB"
    if i % 4 == 1:
        return f"{_number(v / 1000)}KB"  # SI: 1048.576KB is 1048576 bytes, exactly
    return f"{int(v) // 1024} KiB" if i % 4 == 2 else f"{int(v) // 1024}KiB"


def _flow_line(e: Entity, values: Mapping[str, float]) -> str:
    return f"  - {{match: {_flow(_names(e))}, set: {_flow(_plain_set(values))}}}\n"


def _quoted(quote: str) -> Callable[[Entity, Mapping[str, float]], str]:
    def entry(e: Entity, values: Mapping[str, float]) -> str:
        return f"  - match: {_flow(_names(e, quote))}\n    set: {_flow(_plain_set(values))}\n"

    return entry


def _block(e: Entity, values: Mapping[str, float]) -> str:
    lines = ["  - match:\n"]
    lines += [f"      {t}: {n}\n" for t, n in _names(e).items()]
    lines.append("    set:\n")
    lines += [f"      {k}: {v}\n" for k, v in _plain_set(values).items()]
    return "".join(lines)


def _units(e: Entity, values: Mapping[str, float]) -> str:
    i = sum(map(ord, e.parts[0][1]))
    pairs = {k: _unit(k, v, i + j) for j, (k, v) in enumerate(values.items())}
    return f"  - match: {_flow(_names(e))}\n    set: {_flow(pairs)}\n"


def _comments(e: Entity, values: Mapping[str, float]) -> str:
    return (
        f"  # owner: team-{len(e.parts[0][1]) % 7}, ticket QUOTA-{sum(map(ord, e.parts[0][1]))}\n"
        f"  - match: {_flow(_names(e))}\n"
        f"    set: {_flow(_plain_set(values))}  # reviewed\n"
    )


_ENTRIES: dict[str, Callable[[Entity, Mapping[str, float]], str]] = {
    "flow-line": _flow_line,
    "flow-double": _quoted('"'),
    "flow-single": _quoted("'"),
    "block": _block,
    "units": _units,
    "comments": _comments,
}

_TIER_KEYS = ("producer_byte_rate", "consumer_byte_rate")


def _profiles(
    desired: Mapping[Entity, Mapping[str, float]], entities: list[Entity], block: bool = False
) -> str:
    """_profiles names each (producer, consumer) rate pair a tier; entries use their tier and
    set the rest (request_percentage, or everything for ip entries) themselves."""
    tiers: dict[tuple[float, float], str] = {}
    body = []
    for e in entities:
        values = desired[e]
        pair = tuple(values.get(k) for k in _TIER_KEYS)
        if None in pair:
            body.append(f"  - match: {_flow(_names(e))}\n    set: {_flow(_plain_set(values))}\n")
            continue
        tier = tiers.setdefault(pair, f"tier-{len(tiers)}")  # type: ignore[arg-type]
        rest = {k: v for k, v in values.items() if k not in _TIER_KEYS}
        line = f"  - match: {_flow(_names(e))}\n    profile: {tier}\n"
        if rest:
            line += f"    set: {_flow(_plain_set(rest))}\n"
        body.append(line)
    if block:
        profiles = "".join(
            f"  {name}:\n    producer_byte_rate: {_number(p)}\n"
            f"    consumer_byte_rate: {_number(c)}\n"
            for (p, c), name in tiers.items()
        )
    else:
        profiles = "".join(
            f"  {name}: {{producer_byte_rate: {_number(p)}, consumer_byte_rate: {_number(c)}}}\n"
            for (p, c), name in tiers.items()
        )
    return HEADER + "profiles:\n" + profiles + "quotas:\n" + "".join(body)


# Issue 34: styles written from ``docs/desired-state.md`` and ``examples/desired/``, not from
# the fast reader's patterns. Each mixes what people write in one file: every entity shape,
# units, comments, profiles with per-entry overrides, block mappings two levels deep, flow
# mappings spaced as formatters write them, and unusual but valid spacing.
DOC_STYLES = ("docs-mixed", "docs-block", "docs-spaced", "docs-profiles")


def _doc_unit(v: float) -> str:
    """_doc_unit writes a byte rate as the docs do: a unit where exact, with or without a
    space and ``/s``, else the plain number."""
    n = int(v)
    if n % MIB == 0:
        return (f"{n // MIB}MiB", f"{n // MIB} MiB/s", f"{n // MIB}MiB/s")[n // MIB % 3]
    if n % 1024 == 0:
        return f"{n // 1024}KiB"
    return _number(v)


def _doc_values(values: Mapping[str, float]) -> dict[str, str]:
    return {k: _doc_unit(v) if k.endswith("byte_rate") else _number(v) for k, v in values.items()}


def _doc_names(e: Entity, i: int) -> dict[str, str]:
    """_doc_names writes names plain, quoted, or in the object form, by turns."""
    out = {}
    for t, n in e.parts:
        if t == "ip":
            out[t] = n
        elif i % 5 == 1:
            out[t] = f'"{n}"'
        elif i % 5 == 2:
            out[t] = f"'{n}'"
        elif i % 5 == 3:
            out[t] = f"{{name: {n}}}"
        else:
            out[t] = n
    return out


def _doc_entry(e: Entity, values: Mapping[str, float], i: int, shape: int) -> str:
    names, vals = _doc_names(e, i), _doc_values(values)
    if shape == 0:  # the docs' first example
        return f"  - match: {_flow(names)}\n    set: {_flow(vals)}\n"
    if shape == 1:  # a whole entry on one line, set first
        return f"  - {{set: {_flow(vals)}, match: {_flow(names)}}}\n"
    if shape == 2:  # block mappings two levels deep
        lines = ["  - match:\n"] + [f"      {t}: {n}\n" for t, n in names.items()]
        lines += ["    set:\n"] + [f"      {k}: {v}\n" for k, v in vals.items()]
        return "".join(lines)
    # set before match, with a trailing comment
    return f"  - set: {_flow(vals)}   # {len(vals)} keys\n    match: {_flow(names)}\n"


def _docs_mixed(desired: Mapping[Entity, Mapping[str, float]], entities: list[Entity]) -> str:
    body = []
    for i, e in enumerate(entities):
        if i % 50 == 0:
            body.append(f"\n  # --- team {i // 50}: owners in CODEOWNERS ---\n")
        body.append(_doc_entry(e, desired[e], i, i % 4))
    return HEADER + "quotas:\n" + "".join(body)


def _docs_block(desired: Mapping[Entity, Mapping[str, float]], entities: list[Entity]) -> str:
    """The block style of the docs' corpus: ``---``, the list at the key's indentation,
    every mapping a block, comments on their own lines and after values."""
    body = ["---\n# quotas for the cluster, one entity per entry\n", HEADER, "quotas:\n"]
    for i, e in enumerate(entities):
        body.append("- match:\n")
        for t, n in _doc_names(e, i).items():
            if n.startswith("{"):
                body.append(f"    {t}:\n      name: {n[7:-1]}\n")  # the object form, in block
            else:
                body.append(f"    {t}: {n}\n")
        body.append("  set:\n")
        for k, v in _doc_values(desired[e]).items():
            body.append(f"    {k}: {v}" + ("  # reviewed\n" if i % 3 == 0 else "\n"))
        if i % 10 == 9:
            body.append("\n")
    return "".join(body)


def _docs_spaced(desired: Mapping[Entity, Mapping[str, float]], entities: list[Entity]) -> str:
    """Flow mappings spaced as formatters write them (``{ user: alice }``), aligned values,
    a wider list indentation and ``-`` followed by more than one space."""
    body = []
    for i, e in enumerate(entities):
        names = ", ".join(f"{t}: {n}" for t, n in _doc_names(e, i).items())
        vals = " ,  ".join(f"{k}:  {v}" for k, v in _doc_values(desired[e]).items())
        body.append(f"    -   match:  {{ {names} }}\n        set:    {{ {vals} }}\n")
    return HEADER + "quotas:\n" + "".join(body)


def _docs_profiles(desired: Mapping[Entity, Mapping[str, float]], entities: list[Entity]) -> str:
    """Profiles as ``examples/desired/base/profiles.yaml`` writes them (block mappings, units,
    comments), entries naming one and overriding keys, in flow and in block."""
    tiers: dict[tuple[float, ...], str] = {}
    body = []
    for i, e in enumerate(entities):
        values = desired[e]
        names = _flow(_doc_names(e, i))
        pair = tuple(values.get(k, 0.0) for k in _TIER_KEYS)
        if 0.0 in pair:
            body.append(f"  - match: {names}\n    set: {_flow(_doc_values(values))}\n")
            continue
        tier = tiers.setdefault(pair, f"tier-{len(tiers)}")
        rest = _doc_values({k: v for k, v in values.items() if k not in _TIER_KEYS})
        entry = f"  - match: {names}\n    profile: {tier}\n"
        if rest and i % 2:
            entry += "    set:   # overrides the profile for these keys\n"
            entry += "".join(f"      {k}: {v}\n" for k, v in rest.items())
        elif rest:
            entry += f"    set: {_flow(rest)}\n"
        body.append(entry)
    profiles = "".join(
        f"  {name}:\n    producer_byte_rate: {_doc_unit(p)}      # {p / MIB:g} MiB\n"
        f"    consumer_byte_rate: {_doc_unit(c)}\n"
        for (p, c), name in tiers.items()
    )
    return HEADER + "profiles:\n" + profiles + "\nquotas:\n" + "".join(body)


_DOC_WRITERS = {
    "docs-mixed": _docs_mixed,
    "docs-block": _docs_block,
    "docs-spaced": _docs_spaced,
    "docs-profiles": _docs_profiles,
}
