"""One desired-state document, walked node by node into entries with their positions.

This is the local validator: it checks the shape (known fields, no duplicate keys, no
empty match or set) and each entity and value against the broker's rules
(:mod:`kquota.desired.rules`), and records every problem with its ``file:line:column``
instead of stopping. What it returns holds only valid parts, so merging can carry on and
report cross-file problems (duplicate entities, unknown profiles) in the same run.

``match`` values: ``<default>`` is the default entity; any other string is a name; the
object form ``{name: "..."}`` is always a literal name, so ``{name: "<default>"}`` is the
entity whose name reads ``<default>``.
"""

from __future__ import annotations

from functools import lru_cache

from kquota.desired import rules
from kquota.desired.fastpath import _TOKENS, _token
from kquota.desired.format import (
    API_VERSION,
    DEFAULT_NAME,
    ENTRY_FIELDS,
    KINDS,
    LITERAL_FIELDS,
    TOP_FIELDS,
)
from kquota.desired.general import Profile, Quads
from kquota.desired.nodes import (
    MERGE_TAG,
    STR_TAG,
    MapNode,
    Node,
    Scalar,
    SeqNode,
    kind_name,
    scalar_value,
)
from kquota.desired.parsed import ParsedEntry as ParsedEntry
from kquota.desired.parsed import ParsedFile as ParsedFile
from kquota.desired.plain import CANONICAL_V4 as _CANONICAL_V4
from kquota.desired.plain import SURELY_SHORT as _SURELY_SHORT
from kquota.desired.plain import PlainEntries
from kquota.desired.problems import Problems, SourceLocation
from kquota.desired.scan import ENTRY_KEYS, EntryLine
from kquota.desired.values import allowed_key_set, quota_value
from kquota.display import safe_text
from kquota.model import (
    CLIENT_ID,
    ENTITY_TYPES,
    IP,
    USER,
    Entity,
    ValuesPool,
    pooled,
)
from kquota.names import canonical_ip, unusual_name
from kquota.quotakeys import QUOTA_KEYS

_TOP_FIELDS = TOP_FIELDS
_ENTRY_FIELDS = ENTRY_FIELDS
_LITERAL_FIELD, _VERBATIM_FIELD = LITERAL_FIELDS
_PLAIN_NAME_TYPES = frozenset({USER, CLIENT_ID})
_UNREAD: dict[str, float] = {}  # a ``set`` not yet in DocumentReader._sets
_SETS_LIMIT = 4096
_Pair = tuple[str | None, str, str]  # a flow pair: its key (None: not a string), value tag, text


def _plain_key(raw: str) -> str | None:
    tag, value = _TOKENS.get(raw) or _token(raw)
    return value if tag == STR_TAG else None


_LITERAL_HELP = '{name: "..."} or {name: "...", verbatim: true}'
_ENTITY_TYPES = frozenset(ENTITY_TYPES)
_ALL_KEYS = ", ".join(QUOTA_KEYS)
_ENTRY_FIELDS_HELP = ", ".join(_ENTRY_FIELDS)
_MATCH_HELP = f"a mapping of entity type ({rules.ENTITY_TYPES_HELP}) to a name"


class _Bad:
    """_Bad marks a name whose problem is already reported (None means the default entity)."""


_BAD = _Bad()


class _Walker:
    def __init__(self, file: str, problems: Problems) -> None:
        self.file = file
        self.problems = problems
        self.pool: ValuesPool = {}
        self.verbatim: set[int] = set()  # ids of name scalars declared verbatim: true
        self.written: dict[int, str] = {}  # id of a match -> its ip name, when not canonical
        self.non_ascii = False  # set by checked_name for the entity being read

    def at(self, node: Node) -> SourceLocation:
        return SourceLocation(self.file, node.line, node.col)

    def add(self, node: Node, wrong: str, allowed: str) -> None:
        self.problems.add(self.at(node), wrong, allowed)

    def pairs(self, node: MapNode, allowed: str) -> list[tuple[str, Scalar, Node]]:
        """pairs gives a mapping's string keys, reporting non-string and duplicate keys."""
        out: list[tuple[str, Scalar, Node]] = []
        seen: set[str] = set()
        for k, v in node.pairs:
            if type(k) is Scalar and k.tag == STR_TAG and k.value not in seen:
                seen.add(k.value)
                out.append((k.value, k, v))
            else:
                self.bad_key(k, out, allowed)
        return out

    def bad_key(self, k: Node, out: list[tuple[str, Scalar, Node]], allowed: str) -> None:
        if isinstance(k, Scalar) and k.tag == STR_TAG:
            first = next(f for name, f, _ in out if name == k.value)
            self.add(
                k,
                f"duplicate key {k.value!r} (first at line {first.line}, column {first.col})",
                "each key once in a mapping",
            )
        elif isinstance(k, Scalar) and k.tag == MERGE_TAG:
            self.add(k, "YAML merge keys (<<) are not supported", allowed)
        else:
            self.add(k, f"key {self.shown(k)} is not a string", allowed)

    def document(self, root: Node | None, parsed: ParsedFile) -> None:
        if root is None:
            self.problems.add(
                SourceLocation(self.file, 1, 1),
                "the file has no YAML document",
                f"a mapping with apiVersion: {API_VERSION}, kind and quotas",
            )
            return
        if not isinstance(root, MapNode):
            self.add(root, "the document is not a mapping", f"fields {', '.join(_TOP_FIELDS)}")
            return
        fields = {name: (k, v) for name, k, v in self.pairs(root, ", ".join(_TOP_FIELDS))}
        for name, (k, _) in fields.items():
            if name not in _TOP_FIELDS:
                self.add(k, f"unknown field {name!r}", ", ".join(_TOP_FIELDS))
        api = fields.get("apiVersion")
        if api is None:
            self.add(root, "missing apiVersion", f"apiVersion: {API_VERSION}")
        elif not self.is_text(api[1], API_VERSION):
            self.add(api[1], f"unknown apiVersion {self.shown(api[1])}", API_VERSION)
        kind = fields.get("kind")
        if kind is None:
            self.add(root, "missing kind", " or ".join(KINDS))
        elif isinstance(kind[1], Scalar) and kind[1].value in KINDS and kind[1].tag == STR_TAG:
            parsed.kind = kind[1].value
        else:
            self.add(kind[1], f"unknown kind {self.shown(kind[1])}", " or ".join(KINDS))
        if "profiles" in fields:
            self.profiles(fields["profiles"][1], parsed)
        if "quotas" in fields:
            self.quotas(fields["quotas"][1], parsed)

    @staticmethod
    def is_text(node: Node, text: str) -> bool:
        return isinstance(node, Scalar) and node.tag == STR_TAG and node.value == text

    @staticmethod
    def shown(node: Node) -> str:
        if isinstance(node, Scalar):
            return repr(node.value) if node.tag == STR_TAG else node.value or "null"
        return "(a list)" if isinstance(node, SeqNode) else "(a mapping)"

    def profiles(self, node: Node, parsed: ParsedFile) -> None:
        allowed = "a mapping of profile name to quota keys and values"
        if not isinstance(node, MapNode):
            self.add(node, f"profiles is {self.shown(node)}, not a mapping", allowed)
            return
        for name, k, v in self.pairs(node, allowed):
            values = self.quota_set(v, None, f"profile {name!r}")
            if values is not None:
                parsed.profiles[name] = (values, self.at(k))

    def quotas(self, node: Node, parsed: ParsedFile) -> None:
        if not isinstance(node, SeqNode):
            self.add(node, f"quotas is {self.shown(node)}, not a list", "a list of entries")
            return
        entries = parsed.entries
        for item in node.items:
            entry = self.entry(item)
            if entry is not None:
                entries.append(entry)

    def entry(self, node: Node) -> ParsedEntry | None:
        fields_help = _ENTRY_FIELDS_HELP
        if not isinstance(node, MapNode):
            self.add(node, f"an entry is {self.shown(node)}, not a mapping", fields_help)
            return None
        match = set_ = profile = None
        for name, k, v in self.pairs(node, fields_help):
            if name == "match":
                match = v
            elif name == "set":
                set_ = v
            elif name == "profile":
                profile = v
            else:
                self.add(k, f"unknown field {name!r} in an entry", fields_help)
        if match is None:
            self.add(node, "entry has no match", "match: {user: ..., client-id: ...} or {ip: ...}")
            return None
        entity = self.entity(match)
        if set_ is None and profile is None:
            self.add(node, "entry sets nothing", "set: {key: value, ...} and/or profile: NAME")
            return None
        if entity is None:
            if set_ is not None:
                self.quota_set(set_, None, "set")  # still report its value problems
            return None
        values: dict[str, float] | None = {}
        if set_ is not None:
            values = self.quota_set(set_, tuple(t for t, _ in entity.parts), "set")
        if values is None:
            return None
        out = ParsedEntry(
            entity,
            values,
            self.at(node),
            written=self.written.get(id(match)),
            non_ascii=self.non_ascii,
        )
        if profile is not None:
            if isinstance(profile, Scalar) and profile.tag == STR_TAG and profile.value:
                out.profile, out.profile_line, out.profile_column = (
                    profile.value,
                    profile.line,
                    profile.col,
                )
            else:
                self.add(profile, f"profile is {self.shown(profile)}", "the name of a profile")
                return None
        return out

    def entity(self, node: Node) -> Entity | None:
        allowed = _MATCH_HELP
        if not isinstance(node, MapNode):
            self.add(node, f"match is {self.shown(node)}, not a mapping", allowed)
            return None
        if not node.pairs:
            self.add(node, "empty match", rules.COMBINATIONS_HELP)
            return None
        ok = True
        self.non_ascii = False
        parts: dict[str, str | None] = {}
        for etype, k, v in self.pairs(node, allowed):
            if etype not in _ENTITY_TYPES:
                self.add(k, f"unknown entity type {etype!r}", rules.ENTITY_TYPES_HELP)
                ok = False
                continue
            name = self.entity_name(etype, v)
            if isinstance(name, str) and etype != IP:
                name = self.checked_name(etype, v, name)
            if isinstance(name, _Bad):
                ok = False
            else:
                parts[etype] = name
        if not ok or len(parts) != len(node.pairs):
            return None
        types = tuple(parts)
        bad = rules.combination_problem(types)
        if bad is not None:
            self.add(node, *bad)
            return None
        ip = parts.get(IP)
        if ip is not None:
            bad = rules.ip_problem(ip)
            if bad is not None:
                self.add(node.pairs[0][1], *bad)
                return None
            # One address, one name: the broker enforces by address (kquota.names).
            parts[IP] = canonical_ip(ip) or ip
            if parts[IP] != ip:
                self.written[id(node)] = ip
        return Entity.of_checked(parts)

    def entity_name(self, etype: str, node: Node) -> str | None | _Bad:
        """entity_name is the name (None for the default entity), or _BAD after a problem."""
        if isinstance(node, Scalar):
            if node.tag == STR_TAG:
                if node.value == DEFAULT_NAME:
                    return None
                if node.value:
                    return node.value
                self.add(node, f"empty {etype} name", rules.NAME_HELP)
                return _BAD
            value = scalar_value(node)
            if value is None:
                self.add(node, f"{etype} name is missing (null)", rules.NAME_HELP)
                return _BAD
            self.add(
                node,
                f"{etype} name {self.shown(node)} is read by YAML as {kind_name(value)}"
                + f'; quote it: "{node.value}"',
                rules.NAME_HELP,
            )
            return _BAD
        if isinstance(node, MapNode):
            return self.literal_name(etype, node)
        allowed = rules.IP_NAME_HELP if etype == IP else rules.NAME_HELP
        self.add(node, f"{etype} name is {self.shown(node)}", allowed)
        return _BAD

    def literal_name(self, etype: str, node: MapNode) -> str | _Bad:
        """literal_name reads ``{name: "..."}`` (and ``verbatim: true``): always a name."""
        fields = {k: (kn, v) for k, kn, v in self.pairs(node, _LITERAL_HELP)}
        unknown = [
            kn for k, (kn, _) in fields.items() if k not in (_LITERAL_FIELD, _VERBATIM_FIELD)
        ]
        for kn in unknown:
            self.add(kn, f"unknown field {kn.value!r} in a literal {etype} name", _LITERAL_HELP)
        if unknown or len(fields) != len(node.pairs):
            return _BAD
        if _LITERAL_FIELD not in fields:
            self.add(node, f"literal {etype} name has no field name", _LITERAL_HELP)
            return _BAD
        name = fields[_LITERAL_FIELD][1]
        if not (isinstance(name, Scalar) and name.tag == STR_TAG and name.value):
            self.add(name, f"literal {etype} name is {self.shown(name)}", "a non-empty string")
            return _BAD
        flag = fields.get(_VERBATIM_FIELD)
        if flag is not None:
            value = scalar_value(flag[1]) if isinstance(flag[1], Scalar) else None
            if not isinstance(value, bool):
                self.add(flag[1], f"verbatim is {self.shown(flag[1])}", "true or false")
                return _BAD
            if value and etype == IP:
                self.add(flag[1], "verbatim is for user and client-id names", "an IP literal")
                return _BAD
            if value:
                self.verbatim.add(id(name))
        return name.value

    def checked_name(self, etype: str, node: Node, name: str) -> str | _Bad:
        """checked_name applies the name rules (length, control characters) and warns about
        surrounding whitespace and invisible characters, unless the name is verbatim."""
        if isinstance(node, Scalar) and len(name) <= _SURELY_SHORT and not unusual_name(name):
            # Nearly every name: a plain scalar (never verbatim), short, printable, trimmed.
            self.non_ascii = self.non_ascii or not name.isascii()
            return name
        at = node
        if isinstance(node, MapNode):
            at = next(v for k, v in node.pairs if isinstance(k, Scalar) and k.value == "name")
        self.non_ascii = self.non_ascii or not name.isascii()
        verbatim = id(at) in self.verbatim
        bad = rules.name_problem(etype, name, verbatim)
        if bad is not None:
            self.add(at, *bad)
            return _BAD
        if not verbatim and unusual_name(name):
            for text in rules.name_warnings(etype, name):
                self.problems.warn(self.at(at), text)
        return name

    def quota_set(
        self, node: Node, types: tuple[str, ...] | None, what: str
    ) -> dict[str, float] | None:
        """quota_set checks ``set`` (types known) or a profile (types None: any known key)."""
        keys = allowed_key_set(types)
        keys_help = _keys_help(types)
        if not isinstance(node, MapNode):
            self.add(node, f"{what} is {self.shown(node)}, not a mapping", keys_help)
            return None
        if not node.pairs:
            self.add(node, f"empty {what}", f"at least one of {keys_help}")
            return None
        values: dict[str, float] = {}
        ok = True
        for key, k, v in self.pairs(node, keys_help):
            if key not in keys:
                bad = rules.key_problem(key, types) if types is not None else None
                wrong = bad[0] if bad is not None else f"unknown quota key {key!r}"
                self.add(k, wrong, keys_help)
                ok = False
                continue
            if not isinstance(v, Scalar):
                self.add(v, f"{key} is {self.shown(v)}", rules.allowed_values(key))
                ok = False
                continue
            got = quota_value(key, v.tag, v.value)
            if isinstance(got, float):
                values[key] = got
            else:
                self.add(v, f"{key} = {safe_text(v.value) or 'null'}: {got[0]}", got[1])
                ok = False
        return pooled(values, self.pool) if ok and len(values) == len(node.pairs) else None


@lru_cache(maxsize=64)
def _keys_help(types: tuple[str, ...] | None) -> str:
    # Built per entry before, although only a problem's message reads it.
    return rules.keys_help(types) if types is not None else _ALL_KEYS


def read_document(file: str, root: Node | None, problems: Problems) -> ParsedFile:
    """read_document validates one document; problems go to ``problems``, valid parts back."""
    return DocumentReader(file, problems).finish(root)


def _pair_values(written: tuple[_Pair, ...]) -> dict[str, float] | None:
    """_pair_values is what a ``set`` written as ``written`` sets when each key is a quota
    key written once and each value one the walker takes, else None."""
    values: dict[str, float] = {}
    for key, tag, text in written:
        if key not in QUOTA_KEYS or key in values:
            return None
        got = quota_value(key, tag, text)
        if type(got) is not float:
            return None
        values[key] = got
    return values


class DocumentReader:
    """DocumentReader validates one document whose quota entries may come first, one by one.

    A streaming reader hands each ``quotas`` item to :meth:`entry` as soon as it is read (and
    leaves it out of the tree), then the rest of the document to :meth:`finish`; the checks
    are the very ones :func:`read_document` runs, in the same order for the entries.
    """

    def __init__(self, file: str, problems: Problems) -> None:
        self._walker = _Walker(file, problems)
        self._parsed = ParsedFile(file)
        self._plain = PlainEntries(file, self._walker.pool)
        # A ``set`` as its pairs (key, tag, text) -> its values, or None when it is not
        # plainly valid: a file of 100k entries writes a few dozen distinct ones.
        self._sets: dict[tuple[_Pair, ...], dict[str, float] | None] = {}

    def flow_entry(self, groups: tuple[str | None, ...], col: int, line: int) -> bool:
        """flow_entry takes ``- {match: {...}, set: {...}}`` from the scanner's groups (see
        :meth:`_take_plain`); False: read it as nodes. Its tokens first (most entries), then
        its field lists."""
        taken = self._plain.flow(groups, col, line)
        if taken is not None:
            self._parsed.entries.append(taken)
            return True
        return self._flow_fields(groups, col, line)

    def general_entry(
        self,
        match: Quads | None,
        set_: Quads | None,
        profile: Profile | None,
        line: int,
        col: int,
    ) -> bool:
        """general_entry takes an entry the general reader hands over as tokens when it is
        plainly valid (see :meth:`PlainEntries.general`); False: read it as nodes."""
        taken = self._plain.general(match, set_, profile, line, col)
        if taken is None:
            return False
        self._parsed.entries.append(taken)
        return True

    def _flow_fields(self, groups: tuple[str | None, ...], col: int, line: int) -> bool:
        fields: dict[str | None, list[_Pair]] = {}
        for key, first in ENTRY_KEYS:
            pairs: list[_Pair] = []
            for i in range(first, first + 8, 2):
                k, v = groups[i], groups[i + 1]
                if k is None or v is None:
                    break
                pairs.append((_plain_key(k), *(_TOKENS.get(v) or _token(v))))
            entry_key = groups[key]
            fields[None if entry_key is None else _plain_key(entry_key)] = pairs
        return self._take_plain(fields, line, col)

    def _block_entry(self, node: MapNode) -> bool:
        """_block_entry takes an entry from its nodes: ``match`` and ``set`` as ``kquota
        export`` writes them or as block mappings, and optionally ``profile: NAME`` (see
        :meth:`_take_plain`); False: the walker reads it."""
        if not 2 <= len(node.pairs) <= 3:  # match, set and profile, each once at most
            return False
        fields: dict[str | None, list[_Pair]] = {}
        profile: Scalar | None = None
        for k, v in node.pairs:
            if type(k) is not Scalar or k.tag != STR_TAG:
                return False
            if k.value == "profile":
                # The walker's own test of a profile name, once (fields counts the rest).
                if profile is not None or type(v) is not Scalar or v.tag != STR_TAG or not v.value:
                    return False
                profile = v
                continue
            if type(v) is not MapNode:
                return False
            pairs: list[_Pair] = []
            for pk, pv in v.pairs:
                if type(pk) is not Scalar or type(pv) is not Scalar or pk.tag != STR_TAG:
                    return False
                pairs.append((pk.value, pv.tag, pv.value))
            fields[k.value] = pairs
        at = None if profile is None else (profile.value, profile.line, profile.col)
        return self._take_entry(fields, at, len(node.pairs), node.line, node.col)

    def entry_lines(self, lines: list[EntryLine]) -> bool:
        """entry_lines takes an entry of ``key: {...}``, ``key: scalar`` and ``key:`` lines
        (with the lines of its block mapping below it) from the scanner's groups, exactly as
        :meth:`_block_entry` takes its nodes; False: read it as nodes. Its tokens first (most
        entries), then its field lists."""
        taken = self._plain.lines(lines)
        if taken is not None:
            self._parsed.entries.append(taken)
            return True
        return self._lines_fields(lines)

    def _lines_fields(self, lines: list[EntryLine]) -> bool:
        get = _TOKENS.get
        fields: dict[str | None, list[_Pair]] = {}
        profile: tuple[str, int, int] | None = None
        _, _, col = lines[0]
        block: list[_Pair] | None = None
        written = 0
        for groups, line, c in lines:
            key_text = groups[2]
            assert key_text is not None
            key = _plain_key(key_text)
            scalar = groups[11]
            if c > col:  # a line of the block mapping above: a scalar value, as in the nodes
                assert block is not None
                if scalar is None:
                    return False
                block.append((key, *(get(scalar) or _token(scalar))))
                continue
            written += 1
            if key == "profile":
                if profile is not None or scalar is None:
                    return False
                tag, value = get(scalar) or _token(scalar)
                if tag != STR_TAG or not value:
                    return False
                profile = (value, line, c + len(key_text) + 2)
                continue
            if key is None or scalar is not None:
                return False
            pairs: list[_Pair] = []
            for i in range(3, 11, 2):
                k, v = groups[i], groups[i + 1]
                if k is None or v is None:
                    break
                pairs.append((_plain_key(k), *(get(v) or _token(v))))
            block = pairs if groups[3] is None else None
            fields[key] = pairs
        if not 2 <= written <= 3:
            return False
        return self._take_entry(fields, profile, written, lines[0][1], col)

    def _take_entry(
        self,
        fields: dict[str | None, list[_Pair]],
        profile: tuple[str, int, int] | None,
        written: int,
        line: int,
        col: int,
    ) -> bool:
        """_take_entry is :meth:`_take_plain` for an entry of ``written`` keys, ``profile``
        (its name and position) one of them when not None."""
        if len(fields) + (profile is not None) != written:
            return False  # a duplicate key
        if profile is None:
            return self._take_plain(fields, line, col)
        set_written = "set" in fields
        if not set_written:
            fields["set"] = []  # a profile alone: the entry's own values are none
        if not self._take_plain(fields, line, col, set_written):
            return False
        taken = self._parsed.entries[-1]
        name, at_line, at_col = profile
        taken.profile, taken.profile_line, taken.profile_column = name, at_line, at_col
        return True

    def _take_plain(
        self,
        fields: dict[str | None, list[_Pair]],
        line: int,
        col: int,
        set_written: bool = True,
    ) -> bool:
        """_take_plain adds the entry whose ``match`` and ``set`` are ``fields`` (key, value tag,
        value text) when it is plainly valid: user and client-id names that are plain short
        printable ASCII strings, or one ip in its canonical spelling; keys allowed for them,
        each once; values the walker takes; nothing else. That is the walker's own verdict
        on such an entry, without its general checks (most of a large file's load). Anything
        else returns False, and the walker reads the entry, so every problem and warning
        comes from one place. ``set_written`` False: the entry has no ``set`` but names a
        profile (checked by the caller), and its own values are none (the walker's ``{}``)."""
        match, set_ = fields.get("match"), fields.get("set")
        if match is None or set_ is None or len(fields) != 2:
            return False
        parts: dict[str, str | None] = {}
        for etype, tag, name in match:
            if etype == IP:
                # Alone, and already in the one spelling kquota uses (so no zone id either).
                if len(match) != 1 or tag != STR_TAG:
                    return False
                if _CANONICAL_V4.fullmatch(name) is None and (
                    "%" in name or canonical_ip(name) != name
                ):
                    return False
                parts[IP] = name
                continue
            if (
                etype not in _PLAIN_NAME_TYPES
                or etype in parts
                or tag != STR_TAG
                or not name
                or name == DEFAULT_NAME
                or len(name) > _SURELY_SHORT
                or not name.isascii()
                # unusual_name for ASCII: whitespace other than the space is not printable
                or not name.isprintable()
                or name[0] == " "
                or name[-1] == " "
            ):
                return False
            parts[etype] = name
        if not parts:
            return False
        values: dict[str, float] = {}
        if set_:
            written = tuple(set_)
            got = self._sets.get(written, _UNREAD)
            if got is _UNREAD:
                got = self._read_set(written)
            if got is None or not got.keys() <= allowed_key_set(tuple(parts)):
                return False
            values = got
        elif set_written:
            return False
        walker = self._walker
        self._parsed.entries.append(
            ParsedEntry(Entity.of_checked(parts), values, SourceLocation(walker.file, line, col))
        )
        return True

    def _read_set(self, written: tuple[_Pair, ...]) -> dict[str, float] | None:
        """_read_set is what a ``set`` written as ``written`` sets (pooled) when each key is a
        quota key written once and each value one the walker takes, else None; once a
        spelling (see ``_sets``). Whether the entity may have those keys is the caller's."""
        values = _pair_values(written)
        if values is not None:
            values = pooled(values, self._walker.pool)
        if len(self._sets) < _SETS_LIMIT:
            self._sets[written] = values
        return values

    def entry(self, node: Node) -> None:
        if type(node) is MapNode and self._block_entry(node):
            return
        walker = self._walker
        entry = walker.entry(node)
        if entry is not None:
            self._parsed.entries.append(entry)
        # The walker notes nodes by id() for the entry being read; a streamed entry's nodes
        # are freed next, and a later node may reuse an id, so those notes end here.
        walker.written.clear()
        walker.verbatim.clear()

    def finish(self, root: Node | None) -> ParsedFile:
        self._walker.document(root, self._parsed)
        return self._parsed
