"""Merging parsed files into one desired state: profiles, duplicates and overlays.

Rules, in order:

1. Profiles are one namespace across all files read; a profile name declared twice is a
   problem naming both places.
2. An entry's values are its profile's values, then its own ``set`` on top (key by key).
3. Among base files (``kind: ClientQuotas``) an entity may be declared once; the same holds
   among overlay files (``kind: ClientQuotasOverlay``). A second declaration is a problem
   naming both places.
4. An overlay entry replaces the base entry for the same entity *whole*: keys the base set
   and the overlay does not are gone, exactly as if the base entry had never been written.
   An overlay entry for an entity no base file declares simply adds it.
"""

from __future__ import annotations

import unicodedata

from kquota.desired import rules
from kquota.desired.format import KIND_OVERLAY
from kquota.desired.parsed import ParsedEntry, ParsedFile
from kquota.desired.problems import Problems, SourceLocation
from kquota.display import safe_text
from kquota.model import IP, Entity, QuotaState, QuotaValues, ValuesPool, display_entity, pooled
from kquota.quotakeys import allowed_keys

Sources = dict[Entity, SourceLocation]
_Merged = dict[tuple[str, tuple[str, ...], tuple[tuple[str, float], ...]], QuotaValues]
_MERGED_LIMIT = 1 << 16


def merge(files: list[ParsedFile], problems: Problems) -> tuple[QuotaState, Sources]:
    """merge combines parsed files into quotas and sources; problems go to ``problems``."""
    profiles = _profiles(files, problems)
    pool: ValuesPool = {}
    merged: _Merged = {}
    # Each layer is two dicts, an entity's values and where it is declared, as returned.
    base: tuple[QuotaState, Sources] = ({}, {})
    overlay: tuple[QuotaState, Sources] = ({}, {})
    written: dict[SourceLocation, str] = {}
    non_ascii: list[Entity] = []  # ASCII is NFKC-normal: only these can be look-alikes
    for parsed in files:
        layer = overlay if parsed.kind == KIND_OVERLAY else base
        layer_values, layer_at = layer
        for entry in parsed.entries:
            values = entry.values
            if entry.profile is not None:
                with_profile = _values(entry, profiles, problems, pool, merged)
                if with_profile is None:
                    continue
                values = with_profile
            if entry.written is not None:
                written[entry.at] = entry.written
            entity = entry.entity
            # Two lookups an entity, not three (each hashes it in Python): a new entity grows
            # the values, a duplicate leaves them as the first declaration set them.
            size = len(layer_values)
            layer_values.setdefault(entity, values)
            if len(layer_values) == size:
                first = layer_at[entity]
                what = "overlay " if layer is overlay else ""
                problems.add(
                    entry.at,
                    f"duplicate {what}entity {shown(entity)}: also declared at {first}"
                    + _spellings(entity, written.get(entry.at), written.get(first)),
                    "each entity once among base files and once among overlays "
                    "(an overlay replaces the base entry)",
                )
                continue
            layer_at[entity] = entry.at
            if entry.non_ascii:
                non_ascii.append(entity)
    quotas, sources = base
    quotas.update(overlay[0])
    sources.update(overlay[1])
    _warn_lookalikes(sources, [e for e in non_ascii if e in sources], problems)
    return quotas, sources


def _spellings(entity: Entity, here: str | None, there: str | None) -> str:
    """_spellings explains an ip duplicate written two ways: the broker keys by address."""
    if here is None and there is None:
        return ""
    canonical = entity.name(IP) or ""
    return (
        f" (written {safe_text(here or canonical)} here and {safe_text(there or canonical)} "
        "there: one address, which the broker enforces as one entity)"
    )


def _warn_lookalikes(layer: Sources, non_ascii: list[Entity], problems: Problems) -> None:
    """_warn_lookalikes warns about names that differ but are equal after Unicode NFKC
    normalisation (``ﬁle`` and ``file``, full-width letters): the broker keeps them apart,
    a reviewer cannot tell them apart. ``non_ascii`` are the entities with a non-ASCII name
    (the others are NFKC-normal already)."""
    groups: dict[tuple[tuple[str, str | None], ...], list[Entity]] = {}
    for entity in dict.fromkeys(non_ascii):
        key = tuple((t, n and unicodedata.normalize("NFKC", n)) for t, n in entity.parts)
        groups.setdefault(key, []).append(entity)
    for key, members in groups.items():
        normal = Entity(key)
        if normal in layer and normal not in members:
            members.append(normal)  # the plain spelling, declared too
        first = members[0]
        for other in members[1:]:
            problems.warn(
                layer[other],
                f"{shown(other)} and {shown(first)} (at {layer[first]}) are equal after "
                f"Unicode normalisation (NFKC), but the broker keeps them apart "
                f"({_points(other)} vs {_points(first)})",
            )


def _points(entity: Entity) -> str:
    names = [n for _, n in entity.parts if n is not None and not n.isascii()]
    return "; ".join(" ".join(f"U+{ord(c):04X}" for c in n) for n in names) or "ASCII"


def shown(entity: Entity) -> str:
    """shown names an entity in a desired-state message: :func:`display_entity`, with a
    literal ``<default>`` name as the YAML that declares it."""
    return display_entity(entity, as_yaml=True)


def _profiles(
    files: list[ParsedFile], problems: Problems
) -> dict[str, tuple[QuotaValues, SourceLocation]]:
    out: dict[str, tuple[QuotaValues, SourceLocation]] = {}
    for parsed in files:
        for name, (values, at) in parsed.profiles.items():
            first = out.get(name)
            if first is not None:
                problems.add(
                    at,
                    f"duplicate profile {name!r}: also declared at {first[1]}",
                    "each profile name once across all files",
                )
                continue
            out[name] = (values, at)
    return out


def _values(
    entry: ParsedEntry,
    profiles: dict[str, tuple[QuotaValues, SourceLocation]],
    problems: Problems,
    pool: ValuesPool,
    merged: _Merged,
) -> QuotaValues | None:
    """_values is the values of an entry naming a profile: the profile's, then its own."""
    name = entry.profile
    assert name is not None and entry.profile_at is not None
    parts = entry.entity.parts
    types = (parts[0][0],) if len(parts) == 1 else tuple(t for t, _ in parts)
    # Entries repeat a few (profile, own values) pairs: each is checked and merged once.
    key = (name, types, tuple(entry.values.items()))
    done = merged.get(key)
    if done is not None:
        return done
    found = profiles.get(name)
    if found is None:
        known = ", ".join(sorted(profiles)) or "none are declared"
        problems.add(entry.profile_at, f"unknown profile {name!r}", f"profiles: {known}")
        return None
    allowed = allowed_keys(types)
    wrong = [k for k in found[0] if k not in allowed]
    if wrong:
        problems.add(
            entry.profile_at,
            f"profile {name!r} (at {found[1]}) sets {', '.join(wrong)}, "
            f"which {shown(entry.entity)} cannot have",
            rules.keys_help(types),
        )
        return None
    # Shared like the entries' own values: a million entries of a few tiers, one dict each
    # (about 200 MB at 1M) otherwise.
    values = pooled({**found[0], **entry.values}, pool)
    if len(merged) < _MERGED_LIMIT:
        merged[key] = values
    return values
