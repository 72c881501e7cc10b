"""Principals listed in a file (``--principals FILE``): who else a plan's impact covers.

The format is the ``--principal`` flag's, one principal a line, so what works on the command
line works in a file and the other way round::

    # platform service accounts
    user=svc-billing
    user=svc-etl,client-id=loader-7
    client-id=legacy-app
    ip=203.0.113.7

- Types ``user``, ``client-id`` and ``ip``, each at most once a line, in any order; a name
  runs to the next comma (names with commas cannot be listed).
- Blank lines and lines starting with ``#`` are skipped; spaces around types are ignored,
  names are taken exactly.
- An empty name is refused (leave the type out for "no such name"); ``ip`` must be an IPv4
  or IPv6 literal.
- UTF-8, a regular file of at most :data:`MAX_FILE_BYTES`. Every problem is reported with
  ``file:line:column``, at most :data:`MAX_PROBLEMS` of them; nothing is planned with a file
  that has one.

Every ``--principals`` reads this one format: ``plan``, ``fleet plan`` (:func:`read_principals`)
and ``fleet resolve`` (:func:`read_user_clients`, which resolves user and client-id quotas, so
it refuses ``ip``).
"""

from __future__ import annotations

from pathlib import Path

from kquota.desired.loader import read_limited
from kquota.desired.problems import Problems, SourceLocation
from kquota.model import CLIENT_ID, IP, USER
from kquota.names import ip_address
from kquota.principal import Principal, unique_principals
from kquota.principals.model import Discovery, SourceReport

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest principals file read: 64 MiB, over a million principals."""
MAX_PAIRS_FILE_BYTES = 256 * 1024 * 1024
"""The largest file ``fleet resolve`` reads: it resolves millions of principals in one job."""
MAX_PROBLEMS = 100
"""A file with more problems than this is reported up to here: it is not a principals file."""

FORMAT_HELP = (
    "one principal a line: user=NAME,client-id=ID,ip=ADDRESS (each optional, one at least)"
)
_TYPES = (USER, CLIENT_ID, IP)


def principal_of(text: str) -> Principal:
    """principal_of reads ``user=alice,client-id=etl`` (and ``ip=...``) into a Principal;
    ValueError saying what is wrong. Names are taken as written, empty ones included (the
    ``--principal`` flag's rules); :func:`read_principals` is stricter."""
    names: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in _TYPES:
            raise ValueError(
                f"expected type=name pairs separated by commas, types {', '.join(_TYPES)}"
            )
        if key in names:
            raise ValueError(f"{key} given twice")
        names[key] = value
    return Principal(names.get(USER), names.get(CLIENT_ID), names.get(IP))


def read_principals(path: Path) -> Discovery:
    """read_principals reads a principals file; DesiredStateError (a KquotaError) listing
    every problem with file:line:column. Its report is ``file:PATH`` with the count."""
    problems = Problems()
    data = read_limited(
        path, problems, limit=MAX_FILE_BYTES, larger="split the principals into several files"
    )
    problems.raise_if_any()
    assert data is not None
    found = _parse(data, str(path), problems)
    problems.raise_if_any()
    unique = unique_principals(p for _, p in found)
    return Discovery(unique, (SourceReport(f"file:{path}", len(unique)),))


def read_user_clients(path: Path) -> list[tuple[str, str]]:
    """read_user_clients reads a principals file as ``fleet resolve`` takes it: (user,
    client-id) pairs in the file's order, a repeated line kept (one output line per input
    line), an absent name as the empty one (a client that sends none). DesiredStateError
    listing every problem with file:line:column; an ``ip`` is one (the fleet resolves user
    and client-id quotas)."""
    problems = Problems()
    data = read_limited(path, problems, limit=MAX_PAIRS_FILE_BYTES, larger="split the principals")
    problems.raise_if_any()
    assert data is not None
    found = _parse(data, str(path), problems)
    for n, p in found:
        if p.ip is not None:
            problems.add(
                SourceLocation(str(path), n, 1),
                "ip: fleet resolve resolves user and client-id quotas",
                "user=NAME,client-id=ID (each optional, one at least)",
            )
    problems.raise_if_any()
    return [(p.user or "", p.client_id or "") for _, p in found]


def _parse(data: bytes, name: str, problems: Problems) -> list[tuple[int, Principal]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        at = SourceLocation(name, data[: e.start].count(b"\n") + 1, 1)
        problems.add(at, "not UTF-8 text", "a UTF-8 text file")
        return []
    found: list[tuple[int, Principal]] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if len(problems.items) >= MAX_PROBLEMS:
            problems.add(
                SourceLocation(name, n, 1), f"stopped after {MAX_PROBLEMS} problems", FORMAT_HELP
            )
            break
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        at = SourceLocation(name, n, 1)
        try:
            principal = principal_of(line)
        except ValueError as e:
            problems.add(at, str(e), FORMAT_HELP)
            continue
        wrong = _wrong(principal)
        if wrong is not None:
            problems.add(at, wrong[0], wrong[1])
            continue
        found.append((n, principal))
    return found


def _wrong(p: Principal) -> tuple[str, str] | None:
    for t, name in ((USER, p.user), (CLIENT_ID, p.client_id), (IP, p.ip)):
        if name == "":
            return f"{t}: empty name", "a name, or leave the type out"
    if p.ip is not None and ip_address(p.ip) is None:
        return (
            f"ip: {p.ip!r} is not an IP literal",
            "an IPv4 or IPv6 literal such as 203.0.113.7 or 2001:db8::1",
        )
    return None
