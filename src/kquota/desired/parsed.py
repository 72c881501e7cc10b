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
    # Where ``profile`` names it, in ``at``'s file: two numbers, not a location, as only a
    # message needs one (a location is 0.23 us, and most entries of a file name a profile).
    profile_line: int = 0
    profile_column: int = 0
    written: str | None = None  # an ip name as written, when that is not its canonical form
    non_ascii: bool = False  # a name has non-ASCII characters (NFKC look-alikes are checked)

    @property
    def profile_at(self) -> SourceLocation | None:
        """profile_at is where the entry names its profile (None: it names none)."""
        if self.profile is None:
            return None
        return SourceLocation(self.at.file, self.profile_line, self.profile_column)


@dataclass(slots=True)
class ParsedFile:
    file: str
    kind: str = KIND_BASE
    profiles: dict[str, tuple[dict[str, float], SourceLocation]] = field(default_factory=dict)
    entries: list[ParsedEntry] = field(default_factory=list)
