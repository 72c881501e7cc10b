"""What reading one desired-state document gives: its entries and profiles, valid so far.

Both readers of a document fill these: the walker (:mod:`kquota.desired.document`), and the
shortcut for plainly valid entries (:mod:`kquota.desired.plain`); merging
(:mod:`kquota.desired.merge`) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kquota.desired.format import KIND_BASE
from kquota.desired.problems import SourceLocation
from kquota.model import Entity


@dataclass(slots=True)
class ParsedEntry:
    """ParsedEntry is one valid-so-far entry: its entity, its own ``set`` and its profile."""

    entity: Entity
    values: dict[str, float]
    at: SourceLocation
    profile: str | None = None
    profile_at: SourceLocation | None = None
    written: str | None = None  # an ip name as written, when that is not its canonical form
    non_ascii: bool = False  # a name has non-ASCII characters (NFKC look-alikes are checked)


@dataclass(slots=True)
class ParsedFile:
    file: str
    kind: str = KIND_BASE
    profiles: dict[str, tuple[dict[str, float], SourceLocation]] = field(default_factory=dict)
    entries: list[ParsedEntry] = field(default_factory=list)
