"""load_desired: from paths (files and folders) to one validated :class:`DesiredState`.

The discovery rule (``docs/desired-state.md``, "Which files are read"):

- A path named on the command line that is a file is read, whatever its name.
- A folder is walked recursively, in sorted order. Every file whose name ends in ``.yaml``
  or ``.yml``, in any letter case (``.YAML``, ``.Yml``), is read.
- Hidden folders (``.git``) are not entered. Hidden files, symlinked folders (not followed,
  so that a tree cannot loop or reach outside itself) and names that merely contain
  ``.yaml``/``.yml`` (``a.yaml.bak``, ``a.yml~``) are not read, and each is named in a
  warning: with prune on, a file skipped in silence would mean deleted quotas.
- Only regular files are read, at most :data:`MAX_FILE_BYTES` each. A FIFO, device or
  socket, a symlink loop, an unreadable or an oversized file is a problem with its path,
  never a hang: a file is opened non-blocking and checked on the open descriptor.

Every problem of every file is collected, then raised once as :class:`DesiredStateError`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from kquota.desired.merge import merge
from kquota.desired.parsed import ParsedFile
from kquota.desired.problems import Problems
from kquota.desired.reader import read_file
from kquota.desired.state import DesiredState
from kquota.localfile import UnreadableFile, os_problem, read_regular
from kquota.runtime.gcpause import collector_paused

SUFFIXES = (".yaml", ".yml")
"""Read in any letter case: the check lower-cases the name first."""

MAX_FILE_BYTES = 256 * 1024 * 1024
"""The largest desired-state file read: 256 MiB, about 2.5 million entries in the canonical
shape (loading one takes several GiB of memory). It stops a log or a device named ``.yaml``
from exhausting memory; larger desired state can be split into several files."""


def load_desired(paths: Sequence[Path]) -> DesiredState:
    """load_desired reads, validates and merges desired-state files.

    Raises DesiredStateError listing every problem, each with ``file:line:column``.
    """
    with collector_paused():
        return _load(paths)


def _load(paths: Sequence[Path]) -> DesiredState:
    problems = Problems()
    files = expand_paths(paths, problems)
    parsed: list[ParsedFile] = []
    for path in files:
        name = str(path)
        data = read_limited(path, problems)
        if data is None:
            continue
        _parse_into(parsed, name, data, problems)
    return _merged(parsed, problems, tuple(str(f) for f in files))


def load_desired_data(files: Sequence[tuple[str, bytes]]) -> DesiredState:
    """load_desired_data is :func:`load_desired` for files already read, ``(name, bytes)``.

    The Spark engine reads files through Hadoop's file systems and parses them here, so a
    cluster folder on ``hdfs://`` validates exactly like one on local disk.
    """
    with collector_paused():
        problems = Problems()
        parsed: list[ParsedFile] = []
        for name, data in files:
            _parse_into(parsed, name, data, problems)
        return _merged(parsed, problems, tuple(name for name, _ in files))


def _parse_into(parsed: list[ParsedFile], name: str, data: bytes, problems: Problems) -> None:
    found = read_file(name, data, problems)
    if found is not None:
        parsed.append(found)


def _merged(parsed: list[ParsedFile], problems: Problems, files: tuple[str, ...]) -> DesiredState:
    quotas, sources = merge(parsed, problems)
    problems.raise_if_any()
    return DesiredState(quotas, sources, files, problems.warnings)


def read_limited(
    path: Path,
    problems: Problems,
    *,
    limit: int = MAX_FILE_BYTES,
    larger: str = "split larger desired state into several files",
) -> bytes | None:
    """read_limited reads one regular file of at most ``limit`` bytes, or records why not
    (``larger`` says what to do with a larger file)."""
    try:
        return read_regular(path, limit=limit, larger=larger)
    except UnreadableFile as e:
        problems.add_path(str(path), e.what, e.allowed)
        return None


def expand_paths(paths: Sequence[Path], problems: Problems) -> list[Path]:
    """expand_paths lists the files to read, each once, in the order given (folders sorted)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except OSError as e:
            _missing(path, e, problems)
            continue
        if is_dir:
            found = _walk(path, problems)
            if not found:
                problems.add_path(
                    str(path),
                    "no *.yaml or *.yml files in this folder",
                    "a folder with desired-state files "
                    "(an empty desired state needs a file with quotas: [])",
                )
        else:
            found = [path]
        for f in found:
            try:
                key = f.resolve()
            except (OSError, RuntimeError):  # a symlink loop: read_limited names it
                key = f.absolute()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _missing(path: Path, e: OSError, problems: Problems) -> None:
    if e.errno == errno.ELOOP:
        problems.add_path(str(path), os_problem(e), "an existing file or folder")
    elif path.is_symlink():
        problems.add_path(
            str(path), "a symlink to a missing file or folder", "an existing file or folder"
        )
    elif e.errno == errno.ENOENT:
        problems.add_path(str(path), "no such file or folder", "an existing path")
    else:
        problems.add_path(str(path), f"cannot read: {e.strerror or e}", "an existing path")


def is_desired_name(name: str) -> bool:
    """is_desired_name: the folder-walk rule, ``.yaml`` or ``.yml`` in any letter case."""
    return name.lower().endswith(SUFFIXES) and not name.startswith(".")


def _walk(folder: Path, problems: Problems) -> list[Path]:
    found: list[Path] = []

    def unreadable(e: OSError) -> None:  # os.walk would skip an unreadable folder silently
        problems.add_path(str(e.filename or folder), os_problem(e), "a readable folder")

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable):
        kept = []
        for d in dirnames:
            if d.startswith("."):
                continue  # .git, .github: documented as never read
            if os.path.islink(os.path.join(dirpath, d)):
                problems.warn_path(
                    str(Path(dirpath, d)),
                    "not read: a symlinked folder (folders are walked without following "
                    "symlinks; name it on the command line to read it)",
                )
                continue
            kept.append(d)
        dirnames[:] = kept
        for f in filenames:
            if is_desired_name(f):
                found.append(Path(dirpath, f))
            elif _looks_desired(f):
                problems.warn_path(str(Path(dirpath, f)), _skipped_why(f))
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def _looks_desired(name: str) -> bool:
    lower = name.lower()
    return ".yaml" in lower or ".yml" in lower


def _skipped_why(name: str) -> str:
    if name.startswith(".") and name.lower().endswith(SUFFIXES):
        return "not read: a hidden file (names starting with '.' are skipped)"
    return "not read: the name does not end in .yaml or .yml"
