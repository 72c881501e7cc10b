"""Java ``.properties`` files (``--command-config``), read as Kafka's own tools read them.

A file format, not the wire: kept outside :mod:`kquota.kafka` so that commands and targets can
read a properties file without loading the Kafka layer.
"""

from __future__ import annotations

import re
from pathlib import Path

from kquota.errors import UsageError
from kquota.localfile import MiB, UnreadableFile, read_text

MAX_CONFIG_BYTES = MiB
"""The largest client properties file read: a config, not data."""


def read_properties(path: Path) -> dict[str, str]:
    """read_properties parses a Java ``.properties`` file as ``java.util.Properties.load`` does.

    Comments start with ``#`` or ``!``; the key ends at the first unescaped ``=``, ``:`` or
    whitespace; a line ending in an odd number of backslashes continues on the next line
    (whose leading whitespace is dropped); ``\\t \\n \\r \\f \\uXXXX`` and ``\\x`` escapes are
    decoded. Values are never echoed in errors.
    """
    try:
        text = read_text(path, limit=MAX_CONFIG_BYTES, larger="a client config")
    except UnreadableFile as e:
        raise UsageError(e.message(path, "properties file")) from None
    return parse_properties(text)


def parse_properties(text: str) -> dict[str, str]:
    """parse_properties parses the text of a Java properties file (see read_properties)."""
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):
            line = line[:-1]
        key, value = _split_logical_line(line)
        props[_unescape(key)] = _unescape(value)
    return props


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split_logical_line(line: str) -> tuple[str, str]:
    j = 0
    while j < len(line):
        c = line[j]
        if c == "\\":
            j += 2
            continue
        if c in "=: \t\f":
            break
        j += 1
    key = line[:j]
    rest = line[j:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    j = 0
    while j < len(s):
        c = s[j]
        if c != "\\" or j + 1 >= len(s):
            out.append(c)
            j += 1
            continue
        n = s[j + 1]
        if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[j + 2 : j + 6]):
            out.append(chr(int(s[j + 2 : j + 6], 16)))
            j += 6
            continue
        out.append(_ESCAPES.get(n, n))
        j += 2
    return "".join(out)
