"""Plainly valid entries read straight from the scanner's tokens: no nodes, no field lists.

The whole-file scanner (:mod:`kquota.desired.scan`) hands each ``quotas`` entry over as its
match groups: the tokens exactly as written (``user-1``, ``"svc 1"``, ``10MiB``). Most
entries of a large file are plainly valid: user and client-id names that are short printable
ASCII strings, or one ip in its canonical spelling; quota keys allowed for them, each once;
values the walker takes. :class:`PlainEntries` reads such an entry into its
:class:`ParsedEntry` from the tokens alone, and answers None for anything else, whereupon
:class:`~kquota.desired.document.DocumentReader` reads it the long way (its field lists,
then the walker), whose answer stands. So this may decline what the long way takes, but
must never take what it declines, nor take an entry differently: the tests compare the two.

The general reader (:mod:`kquota.desired.general`) hands its plain entries over the same
way, as :data:`~kquota.desired.general.Quads` (:meth:`PlainEntries.general`).

What a file repeats is read once: a ``set`` is looked up by its tokens as written (a file
of 100k entries writes a few dozen distinct ones), so an entry costs its names and a few
dictionary lookups.
"""

from __future__ import annotations

import re

from kquota.desired.fastpath import _TOKENS, _token
from kquota.desired.format import DEFAULT_NAME
from kquota.desired.general import Profile, Quads
from kquota.desired.nodes import STR_TAG, resolve_tag
from kquota.desired.parsed import ParsedEntry
from kquota.desired.problems import SourceLocation
from kquota.desired.scan import EntryLine
from kquota.desired.values import allowed_key_set, quota_value
from kquota.model import CLIENT_ID, IP, MAX_NAME_BYTES, USER, Entity, ValuesPool, pooled
from kquota.names import canonical_ip
from kquota.quotakeys import QUOTA_KEYS

# At most 4 bytes of UTF-8 a character: a name this short is surely within the protocol's
# 32,767 bytes, whatever its characters.
SURELY_SHORT = MAX_NAME_BYTES // 4

# An IPv4 address as ipaddress spells it (no leading zeros): canonical_ip of such a name is
# the name itself, which the parser takes about 4 us a name to say. Written plain, YAML 1.1
# reads it as a string (three dots: no number, no timestamp); a test checks that too.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
CANONICAL_V4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")

Tokens = tuple[str | None, ...]
"""A flow or block mapping as written: key, value, key, value... (None past its last pair)."""
_Written = Tokens | list[str | None]  # a block mapping's, while its lines are read


def _string(raw: str) -> str | None:
    """_string is the string a token reads as (a key), or None when YAML reads it otherwise."""
    tag, value = _TOKENS.get(raw) or _token(raw)
    return value if tag == STR_TAG else None


# The spellings of the entity types (``user``, ``"user"``, ``'user'``), as the scanner
# gives them, to each type.
_ENTITY_TYPE: dict[str, str] = {
    spelling: etype
    for etype in (USER, CLIENT_ID, IP)
    for spelling in (etype, f'"{etype}"', f"'{etype}'")
    if _string(spelling) == etype
}
_ALLOWED_ONE = {etype: allowed_key_set((etype,)) for etype in (USER, CLIENT_ID, IP)}
_ALLOWED_PAIR = allowed_key_set((USER, CLIENT_ID))
_NOT_PLAIN = (None, frozenset[str]())  # a set that is not plainly valid: the long way says
_SETS_LIMIT = 4096


def _name(raw: str) -> str | None:
    """_name is the user or client-id name a token plainly gives, or None."""
    first = raw[0]
    if first == '"' or first == "'":
        # A quoted token holds no escape (the scanner's pattern): its text is the name.
        name = raw[1:-1]
        if (
            not name
            or not name.isascii()
            # unusual_name for ASCII: whitespace other than the space is not printable
            or not name.isprintable()
            or name[0] == " "
            or name[-1] == " "
        ):
            return None
    else:
        # A plain token is printable ASCII, neither starting nor ending with a space (the
        # scanner's pattern); YAML may still read it as a number, a boolean or null.
        if resolve_tag(raw, True) != STR_TAG:
            return None
        name = raw
    if len(name) > SURELY_SHORT or name == DEFAULT_NAME:
        return None
    return name


def _ip(raw: str) -> str | None:
    """_ip is the ip name a token gives when it is its canonical spelling, else None."""
    first = raw[0]
    if first == '"' or first == "'":
        name = raw[1:-1]
    elif CANONICAL_V4.fullmatch(raw) is not None:
        return raw
    elif resolve_tag(raw, True) != STR_TAG:
        return None
    else:
        name = raw
    if CANONICAL_V4.fullmatch(name) is None and ("%" in name or canonical_ip(name) != name):
        return None  # not the one spelling kquota uses (so no zone id either)
    return name


def entity_of_quads(match: Quads) -> tuple[Entity, frozenset[str]] | None:
    """entity_of_quads is :func:`entity_of` for the general reader's ``match`` (see
    :data:`kquota.desired.general.Quads`): a name in the object form is plainly the same
    name as the token alone (a literal name, never the default entity: ``_name`` declines
    ``<default>``, and any field beside ``name`` is not read as quads)."""
    return entity_of((match[0], match[3], match[4], match[7], match[8]))


def entity_of(match: _Written) -> tuple[Entity, frozenset[str]] | None:
    """entity_of is the entity a ``match`` plainly names and the keys it may have, or None."""
    first = match[0]
    if first is None:
        return None
    etype = _ENTITY_TYPE.get(first)
    raw = match[1]
    if etype is None or raw is None:
        return None
    second = match[2] if len(match) > 2 else None
    if second is None:
        name = _ip(raw) if etype == IP else _name(raw)
        if name is None:
            return None
        return Entity(((etype, name),)), _ALLOWED_ONE[etype]
    if len(match) > 4 and match[4] is not None:
        return None  # three names: never plainly valid
    other = _ENTITY_TYPE.get(second)
    raw_other = match[3]
    if other is None or other == etype or IP in (etype, other) or raw_other is None:
        return None
    name, name_other = _name(raw), _name(raw_other)
    if name is None or name_other is None:
        return None
    if etype == USER:
        return Entity(((USER, name), (CLIENT_ID, name_other))), _ALLOWED_PAIR
    return Entity(((USER, name_other), (CLIENT_ID, name))), _ALLOWED_PAIR


class PlainEntries:
    """PlainEntries reads the plainly valid entries of one file from their tokens.

    ``pool`` shares equal value dicts, as the walker's own pool does (it is the walker's).
    """

    __slots__ = ("_file", "_pool", "_sets", "_quad_sets")

    def __init__(self, file: str, pool: ValuesPool) -> None:
        self._file = file
        self._pool = pool
        self._sets: dict[Tokens, tuple[dict[str, float] | None, frozenset[str]]] = {}
        self._quad_sets: dict[Quads, tuple[dict[str, float] | None, frozenset[str]]] = {}

    def general(
        self,
        match: Quads | None,
        set_: Quads | None,
        profile: Profile | None,
        line: int,
        col: int,
    ) -> ParsedEntry | None:
        """general reads an entry the general reader hands over as tokens (see
        :data:`kquota.desired.general.EntryTaker`)."""
        if match is None:
            return None
        found = entity_of_quads(match)
        if found is None:
            return None
        if set_ is None:
            if profile is None:
                return None
            values: dict[str, float] = {}  # its own values: none (the walker's too)
        else:
            got, keys = self._quad_sets.get(set_) or self._read_quads(set_)
            if got is None or not keys <= found[1]:
                return None
            values = got
        entry = ParsedEntry(found[0], values, SourceLocation(self._file, line, col))
        if profile is not None:
            raw, at_line, at_col = profile
            tag, name = _TOKENS.get(raw) or _token(raw)
            if tag != STR_TAG or not name:
                return None
            entry.profile, entry.profile_line, entry.profile_column = name, at_line, at_col
        return entry

    def flow(self, groups: tuple[str | None, ...], col: int, line: int) -> ParsedEntry | None:
        """flow reads ``- {match: {...}, set: {...}}`` from the scanner's groups (see
        :data:`kquota.desired.scan.ENTRY_KEYS`)."""
        first, second = groups[13], groups[22]
        if first == "match" and second == "set":
            return self.take(groups[14:22], groups[23:31], line, col)
        if first == "set" and second == "match":
            return self.take(groups[23:31], groups[14:22], line, col)
        return None

    def lines(self, lines: list[EntryLine]) -> ParsedEntry | None:
        """lines reads an entry of ``match``, ``set`` and ``profile`` lines, ``match`` and
        ``set`` as flow mappings or as block mappings of scalars on the lines below them."""
        _, line, col = lines[0]
        match: _Written | None = None
        set_: _Written | None = None
        profile: str | None = None
        profile_line = profile_column = 0
        block: list[str | None] | None = None
        for groups, at, c in lines:
            if c > col:  # a line of the block mapping opened above it
                value = groups[11]
                if value is None or block is None:
                    return None
                block.append(groups[2])
                block.append(value)
                continue
            key = groups[2]
            block = None
            if key == "profile":
                value = groups[11]
                if profile is not None or value is None:
                    return None
                tag, name = _TOKENS.get(value) or _token(value)
                if tag != STR_TAG or not name:
                    return None
                profile, profile_line, profile_column = name, at, c + 9
                continue
            if groups[3] is not None:
                tokens: _Written = groups[3:11]
            elif groups[11] is None:
                tokens = block = []
            else:
                return None  # match or set written as a scalar: the walker's to word
            if key == "match" and match is None:
                match = tokens
            elif key == "set" and set_ is None:
                set_ = tokens
            else:
                return None  # another field, or one written twice
        if match is None:
            return None
        if set_ is None:
            if profile is None:
                return None
            found = entity_of(match)
            if found is None:
                return None
            values: dict[str, float] = {}  # its own values: none (the walker's too)
        else:
            taken = self.take(match, tuple(set_), line, col)
            if taken is None or profile is None:
                return taken
            taken.profile, taken.profile_line, taken.profile_column = (
                profile,
                profile_line,
                profile_column,
            )
            return taken
        at_entry = SourceLocation(self._file, line, col)
        return ParsedEntry(found[0], values, at_entry, profile, profile_line, profile_column)

    def take(self, match: _Written, set_: Tokens, line: int, col: int) -> ParsedEntry | None:
        """take reads the entry of ``match`` and ``set`` at ``line``, ``col``, or None."""
        found = entity_of(match)
        if found is None:
            return None
        values, keys = self._sets.get(set_) or self._read_set(set_)
        if values is None or not keys <= found[1]:
            return None
        return ParsedEntry(found[0], values, SourceLocation(self._file, line, col))

    def _read_set(self, set_: Tokens) -> tuple[dict[str, float] | None, frozenset[str]]:
        """_read_set reads a ``set`` written as ``set_``, once a spelling (see ``_sets``)."""
        got = self._judged(_set_values(set_))
        if len(self._sets) < _SETS_LIMIT:
            self._sets[set_] = got
        return got

    def _read_quads(self, set_: Quads) -> tuple[dict[str, float] | None, frozenset[str]]:
        """_read_quads is :meth:`_read_set` for the general reader's quads."""
        got = self._judged(_set_values(set_, 4))
        if len(self._quad_sets) < _SETS_LIMIT:
            self._quad_sets[set_] = got
        return got

    def _judged(
        self, values: dict[str, float] | None
    ) -> tuple[dict[str, float] | None, frozenset[str]]:
        return _NOT_PLAIN if not values else (pooled(values, self._pool), frozenset(values))


def _set_values(set_: Tokens, step: int = 2) -> dict[str, float] | None:
    """_set_values is what ``set_`` sets when each key is a known quota key written once and
    each value one the walker takes, else None. ``step`` 4: quads (a value in the object
    form is a mapping, never plainly a value)."""
    values: dict[str, float] = {}
    for i in range(0, len(set_), step):
        raw_key, raw = set_[i], set_[i + step - 1]
        if raw_key is None:
            break  # past a flow mapping's last pair
        if step == 4 and set_[i + 1] is not None:
            return None
        key = _string(raw_key)
        if raw is None or key is None or key not in QUOTA_KEYS or key in values:
            return None
        value = quota_value(key, *(_TOKENS.get(raw) or _token(raw)))
        if type(value) is not float:
            return None
        values[key] = value
    return values
