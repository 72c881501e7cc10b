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

from kquota.desired import rules
from kquota.desired.document import ParsedEntry, ParsedFile
from kquota.desired.models import DEFAULT_NAME, KIND_OVERLAY
from kquota.desired.problems import Problems, SourceLocation
from kquota.model import Entity, QuotaState, QuotaValues
from kquota.quotakeys import allowed_keys

Layer = dict[Entity, tuple[QuotaValues, SourceLocation]]


def merge(
    files: list[ParsedFile], problems: Problems
) -> tuple[QuotaState, dict[Entity, SourceLocation]]:
    """merge combines parsed files into quotas and sources; problems go to ``problems``."""
    profiles = _profiles(files, problems)
    base: Layer = {}
    overlay: Layer = {}
    for parsed in files:
        layer = overlay if parsed.kind == KIND_OVERLAY else base
        for entry in parsed.entries:
            values = _values(entry, profiles, problems)
            if values is None:
                continue
            first = layer.get(entry.entity)
            if first is not None:
                what = "overlay " if layer is overlay else ""
                problems.add(
                    entry.at,
                    f"duplicate {what}entity {shown(entry.entity)}: also declared at {first[1]}",
                    "each entity once among base files and once among overlays "
                    "(an overlay replaces the base entry)",
                )
                continue
            layer[entry.entity] = (values, entry.at)
    base.update(overlay)
    return {e: v for e, (v, _) in base.items()}, {e: at for e, (_, at) in base.items()}


def shown(entity: Entity) -> str:
    """shown is the entity as a message names it; a literal ``<default>`` name is marked
    ``{name: <default>}`` so that it cannot be mistaken for the default entity."""
    parts = (
        f"{t}=" + ("<default>" if n is None else "{name: <default>}" if n == DEFAULT_NAME else n)
        for t, n in entity.parts
    )
    return "{" + ", ".join(parts) + "}"


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
) -> QuotaValues | None:
    if entry.profile is None:
        return entry.values
    assert entry.profile_at is not None
    found = profiles.get(entry.profile)
    if found is None:
        known = ", ".join(sorted(profiles)) or "none are declared"
        problems.add(entry.profile_at, f"unknown profile {entry.profile!r}", f"profiles: {known}")
        return None
    allowed = allowed_keys(entry.entity.types)
    wrong = [k for k in found[0] if k not in allowed]
    if wrong:
        problems.add(
            entry.profile_at,
            f"profile {entry.profile!r} (at {found[1]}) sets {', '.join(wrong)}, "
            f"which {shown(entry.entity)} cannot have",
            rules.keys_help(entry.entity.types),
        )
        return None
    return {**found[0], **entry.values}
