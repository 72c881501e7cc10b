"""Java ``.properties`` files (``--command-config``), read as Kafka's own tools read them.

A file format, not the wire: kept outside :mod:`kquota.kafka` so that commands and targets can
read a properties file without loading the Kafka layer.

The parsing itself is ``javaproperties``' (``java.util.Properties.load`` to the letter:
``=``, ``:`` or whitespace separators, backslash continuations, ``\\uXXXX``, ``#``/``!``
comments). On top, kquota refuses what Java would silently read as a nonsense property and
what is most often a secret out of place: a line holding a key and nothing else (a password
moved to a line of its own, or a value continued without a trailing backslash). Such a line
is named by file and line number only, never shown: it may be the password.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kquota.errors import UsageError
from kquota.localfile import MiB, UnreadableFile, read_text

MAX_CONFIG_BYTES = MiB
"""The largest client properties file read: a config, not data."""

_NOT_SHOWN = "the line is not shown: it may hold a secret"


@dataclass(frozen=True)
class PropertiesFile:
    """PropertiesFile is a parsed properties file: its properties and the line each is on."""

    properties: dict[str, str]
    lines: dict[str, int]


def read_properties(path: Path) -> dict[str, str]:
    """read_properties parses a Java ``.properties`` file as ``java.util.Properties.load`` does.

    Values are never echoed in errors; see :func:`read_properties_file` for line numbers.
    """
    return read_properties_file(path).properties


def read_properties_file(path: Path) -> PropertiesFile:
    """read_properties_file reads ``path`` and also says on which line each property is."""
    try:
        text = read_text(path, limit=MAX_CONFIG_BYTES, larger="a client config")
    except UnreadableFile as e:
        raise UsageError(e.message(path, "properties file")) from None
    return parse_properties_file(text, str(path))


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """parse_properties parses the text of a Java properties file (see read_properties)."""
    return parse_properties_file(text, source).properties


def parse_properties_file(text: str, source: str = "<properties>") -> PropertiesFile:
    """parse_properties_file parses ``text``; errors say ``source:line``, never the line."""
    props: dict[str, str] = {}
    lines: dict[str, int] = {}
    # Imported here, not at the top: every connecting command imports this module (for
    # MAX_CONFIG_BYTES) but few read a properties file, and javaproperties costs about
    # 0.05 s of start-up CPU (it loads xml.sax).
    import javaproperties

    line = 1
    elements = javaproperties.parse(text)
    while True:
        try:
            element = next(elements)
        except StopIteration:
            break
        except javaproperties.InvalidUEscapeError:
            raise UsageError(
                f"{source}:{line}: a malformed \\uXXXX escape ({_NOT_SHOWN})"
            ) from None
        if isinstance(element, javaproperties.KeyValue):
            if element.value == "" and not _has_separator(element.source_stripped):
                raise UsageError(
                    f"{source}:{line}: a key with no value cannot be a client property "
                    f"(a value on a line of its own, or a continuation without a trailing "
                    f"backslash?); {_NOT_SHOWN}"
                )
            props[element.key] = element.value
            lines[element.key] = line
        line += len(element.source.splitlines()) or 1
    return PropertiesFile(props, lines)


def _has_separator(logical: str) -> bool:
    """_has_separator: the logical line has a ``=``, ``:`` or whitespace after its key.

    ``key=`` is a property with an empty value (``ssl.endpoint.identification.algorithm=``
    is one); ``key`` alone is not, to kquota."""
    text = logical.lstrip(" \t\f")
    j = 0
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c in "=: \t\f":
            return True
        j += 1
    return False
