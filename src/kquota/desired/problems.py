"""Where a desired-state problem is and what is wrong with it.

Loading never stops at the first mistake: every check appends a :class:`Problem` and the
loader raises one :class:`DesiredStateError` carrying all of them, so a reviewer fixes a
file in one pass. Positions are 1-based, as editors and ``file:line:col`` links expect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kquota.display import safe_text
from kquota.errors import KquotaError


@dataclass(frozen=True, slots=True, order=True)
class SourceLocation:
    """SourceLocation is a 1-based position in a desired-state file, as the user named it."""

    file: str
    line: int
    column: int

    # By hand, not dataclass's: the slots' own setters cost 0.25 us where a frozen
    # dataclass's ``object.__setattr__`` costs 0.4 (a location an entry, two with a
    # profile: 100k entries make 100k-200k). Frozen all the same.
    def __init__(self, file: str, line: int, column: int) -> None:
        _set_file(self, file)
        _set_line(self, line)
        _set_column(self, column)

    def __str__(self) -> str:
        return f"{safe_text(self.file)}:{self.line}:{self.column}"


# The slots' own setters (a frozen dataclass's ``__setattr__`` refuses every assignment).
_set_file: Callable[[SourceLocation, str], None] = SourceLocation.__dict__["file"].__set__
_set_line: Callable[[SourceLocation, int], None] = SourceLocation.__dict__["line"].__set__
_set_column: Callable[[SourceLocation, int], None] = SourceLocation.__dict__["column"].__set__


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """Problem is one mistake: where, what is wrong and (after ``; allowed:``) what would do."""

    file: str
    line: int
    column: int
    message: str

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, self.line, self.column)

    def __str__(self) -> str:
        # A file name comes from the tree, so it is escaped like any name: a newline or an
        # escape sequence in it must not forge or hide a line of output.
        file = safe_text(self.file)
        if self.line == 0:  # about a whole path (missing, unreadable, empty folder)
            return f"{file}: {self.message}"
        return f"{file}:{self.line}:{self.column}: {self.message}"


class DesiredStateError(KquotaError):
    """DesiredStateError carries every problem found; its text is one line per problem."""

    def __init__(self, problems: list[Problem], warnings: tuple[Problem, ...] = ()) -> None:
        self.problems = sorted(problems)
        self.warnings = warnings
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(slots=True)
class Problems:
    """Problems collects the problems of one load; checks append and carry on."""

    items: list[Problem] = field(default_factory=list)
    warned: list[Problem] = field(default_factory=list)

    def add(self, at: SourceLocation, wrong: str, allowed: str) -> None:
        self.items.append(Problem(at.file, at.line, at.column, f"{wrong}; allowed: {allowed}"))

    def add_path(self, path: str, wrong: str, allowed: str) -> None:
        """add_path records a problem with a whole path (line 0: no position)."""
        self.items.append(Problem(path, 0, 0, f"{wrong}; allowed: {allowed}"))

    def warn(self, at: SourceLocation, text: str) -> None:
        """warn records something that is probably a mistake but does not stop the load."""
        self.warned.append(Problem(at.file, at.line, at.column, text))

    def warn_path(self, path: str, text: str) -> None:
        self.warned.append(Problem(path, 0, 0, text))

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(sorted(self.warned))

    def raise_if_any(self) -> None:
        if self.items:
            raise DesiredStateError(self.items, self.warnings)
