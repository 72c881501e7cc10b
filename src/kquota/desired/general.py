"""A reader for the YAML people write by hand: block style at any depth, flow on one line.

The whole-file scanner (:mod:`kquota.desired.scan`) takes the shapes ``kquota export``
writes; this takes what is written otherwise (issue 34): block mappings and sequences nested
to any depth, indented any way YAML allows (a list at its key's indentation or deeper,
``-`` followed by several spaces), flow mappings and sequences nested on one line and spaced
any way (``{ user: alice ,  client-id: {name: x} }``), comments anywhere a line may end,
blank lines, a ``---`` first line; plain scalars (with spaces inside, ``10 MiB/s``; with
``:`` inside, ``2001:db8::1``, in block context only) and quoted scalars without escapes.

Anything else (anchors, aliases, tags, escapes, a scalar over several lines, block scalars,
a flow collection over several lines, a key with no value, ``?`` keys, tabs, directives...)
makes :func:`read_general` decline with None, and the composer (:mod:`kquota.desired.nodes`)
reads the file, so every YAML error and every judgment call stays libyaml's. Whenever it
accepts a file it gives the very nodes the composer gives: same scalars (resolved by PyYAML's
own resolver, :func:`kquota.desired.nodes.resolve_tag`), same 1-based positions (a block
mapping where its first key is, a block sequence at its first ``-``, a flow collection at
its bracket, a scalar where its text starts). The property tests generate documents in
every style and check this against the composer.

Streaming a file's ``quotas``, it reads most entries without nodes (issue 34): an entry
whose fields are written the ways people write them (flow or block, names plain, quoted or
in the object form, comments and blank lines between its lines) is matched a field at a
time by patterns built from this reader's own, and its tokens handed to ``take``, which
takes it when it is plainly valid (:meth:`kquota.desired.plain.PlainEntries.general`). Any
other entry, and any entry ``take`` declines, is read line by line into nodes as before, so
that every problem is worded from its nodes; the tests check that both ways give the same
entries, positions, problems and warnings.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from kquota.desired.fastpath import _QUOTED, _TOKENS, _token, plain_lines
from kquota.desired.nodes import STR_TAG, MapNode, Node, Scalar, SeqNode

_QUOTAS = "quotas"
# Characters of a plain scalar that need no judgment in either context; the first one is
# no indicator. In block context a ':' inside is fine when a character of these follows it.
_FIRST = r"[A-Za-z0-9_<./+~]"
_CHAR = r"[A-Za-z0-9_<>./+~=@-]"
# A block scalar is words of these characters and ':' runs each followed by one of them;
# a flow scalar has no ':'. Possessive (``*+``): the character after a scalar's longest
# match is never one a shorter match could go on with (a ':', ',', '}', ' ' or the end of
# the line), so backtracking into a scalar never finds a match, and only costs (most of the
# token patterns' time, which save their groups at each step of such a loop).
_BLOCK_WORD = rf"{_CHAR}*+(?::+{_CHAR}++)*+"
_BLOCK_PLAIN = rf"{_FIRST}{_BLOCK_WORD}(?: +(?::+)?{_CHAR}++(?::+{_CHAR}++)*+)*+"
_FLOW_PLAIN = rf"{_FIRST}{_CHAR}*+(?: +{_CHAR}++)*+"
# libyaml refuses a simple key longer than 1,024 characters; leave such keys to it.
_KEY_MAX = 1000
# Deeper nesting (block and flow together) is left to the composer, whose bound it is
# (``nodes.MAX_DEPTH``); kquota's format needs 5 levels.
_DEPTH_MAX = 16

# A line's start: indentation, "-" and its spaces, a key and its ':'.
_HEAD = re.compile(rf" *(- +)?(?:({_QUOTED}|{_BLOCK_PLAIN}):(?: +|$))?")
_BLOCK_VALUE = re.compile(rf"({_QUOTED}|{_BLOCK_PLAIN})(?: +#.*| *)$")
_TAIL = re.compile(r"(?: +#.*| *)$")
# Flow tokens: spaces, then an indicator or a scalar; ':' must be followed by a space.
_FLOW_TOKEN = re.compile(rf" *(?:([{{}}\[\],])|(: +)|({_QUOTED}|{_FLOW_PLAIN}))")
_COMMENT_OR_BLANK = re.compile(r" *(?:#.*)?$")
# A flow mapping of scalars, the common case, checked whole by one match and split by
# _PAIR; nested collections go to the token reader (_Flow).
_S = rf"(?:{_QUOTED}|{_FLOW_PLAIN})"
_FLAT = rf"\{{ *(?:{_S}: +{_S}(?: *, *{_S}: +{_S})*)? *\}}"
_FLAT_MAP = re.compile(_FLAT)
_PAIR = re.compile(rf"({_S}): +({_S})")
# A flow mapping whose values are scalars or such flat mappings (``{set: {...}, match:
# {...}}``, ``{user: {name: x}}``): most nested flow in a desired-state file, checked whole by
# one match and split by _NESTED_PAIR, without the token reader's work per token.
_V = rf"(?:{_S}|{_FLAT})"
_NESTED_MAP = re.compile(rf"\{{ *(?:{_S}: +{_V}(?: *, *{_S}: +{_V})*)? *\}}")
_NESTED_PAIR = re.compile(rf"({_S}): +(?:({_S})|({_FLAT}))")

# Plain entries as tokens. An entry of the streamed ``quotas`` list whose fields (``match``,
# ``set``, ``profile``) are written the ways people write them is read one match a field
# (one for a whole entry on one line) and handed to ``take`` as its tokens, without nodes:
# a mapping (flow or block) as four groups a pair (see ``Quads``), four pairs at most (more
# never make a plainly valid entry). Each pattern takes only what the line reader below
# takes, split the same way (its own sub-patterns); what a pattern does not take, or
# ``take`` declines, the line reader reads as nodes.
_SKIP = r"(?:[ ]*+(?:#[^\n]*+|)\n)*+"  # blank and comment lines, as the line reader skips them
_END = r"(?: +#[^\n]*| *)(?:\n|\Z)"
_BLOCK_S = rf"(?:{_QUOTED}|{_BLOCK_PLAIN})"
_FIELD_KEY = r"(match|set|profile)"
_PAIRS = 4
_GROUP_NAMES = (f"o{i}" for i in itertools.count())


def _nest(first: str, rest: list[str], sep: str) -> str:
    """_nest is ``first`` followed by up to all of ``rest`` in turn, each after ``sep``."""
    body = ""
    for part in reversed(rest):
        body = f"(?:{sep}{part}{body}|)"  # not ``(...)?``: see _flow_map
    return first + body


def _flow_map() -> str:
    """_flow_map is a flow mapping of 1 to 4 pairs of scalars or names in the object form."""
    pairs = []
    for _ in range(_PAIRS):
        o = next(_GROUP_NAMES)
        # ``(X|)``, not ``X?``: sre saves every group set so far at each branch inside a
        # repeat (``?`` is one), several times the match's own work with this many groups.
        pairs.append(rf"({_S}): +(?:(?P<{o}>(\{{) *name: +)|)({_S})(?({o}) *\}})")
    return rf"\{{ *{_nest(pairs[0], pairs[1:], ' *, *')} *\}}"


def _block_map() -> str:
    """_block_map is ``key:`` ending its line, then a block mapping of 1 to 4 pairs on the
    lines below it at one indentation (group ``sub``), each value a scalar or a name in the
    object form, in flow or on a line deeper still."""
    lines = []
    for _ in range(_PAIRS):
        o, f = next(_GROUP_NAMES), next(_GROUP_NAMES)
        opener = rf"(?P<{o}>(?: +#[^\n]*| *)\n{_SKIP}(?P=sub) +name:| +(?P<{f}>\{{) *name:)"
        value = rf"((?({f}){_S}|{_BLOCK_S}))(?({f}) *\}})"
        lines.append(rf"({_BLOCK_S}):(?:{opener}|) +{value}{_END}")
    return rf"(?: +#[^\n]*| *)\n{_SKIP}(?P<sub> +){_nest(lines[0], lines[1:], _SKIP + '(?P=sub)')}"


def _field() -> str:
    """_field is one field of an entry written in block style: its key, then a flow mapping,
    a scalar or a block mapping (see the offsets below)."""
    return rf"{_FIELD_KEY}:(?: +{_flow_map()}{_END}| +({_BLOCK_S}){_END}|{_block_map()})"


def _slot() -> str:
    """_slot is one field of an entry on one line: its key, then a flow mapping or a scalar."""
    return rf"{_FIELD_KEY}: +(?:{_flow_map()}|({_S}))"


# Offsets of a field's groups (see _field): its key (0), a flow mapping's quads, a scalar,
# a block mapping's indentation and quads; a slot's (see _slot) are a field's first three.
_MAP_GROUPS = 4 * _PAIRS
_FLOW, _SCALAR = 1, 1 + _MAP_GROUPS
_SUB, _BLOCK = _SCALAR + 1, _SCALAR + 2
_FIELD_GROUPS, _SLOT_GROUPS = _BLOCK + _MAP_GROUPS, _SCALAR + 1
_SLOTS = tuple(1 + i * _SLOT_GROUPS for i in range(3))


@dataclass(frozen=True, slots=True)
class _Patterns:
    """_Patterns are the entry patterns: an entry's first line, its dash, then a field
    (``entry``) or a whole entry on one line, 2 or 3 slots (``one_line``); an entry's next
    field at its first field's indentation (``next_field``); each then the blank and comment
    lines after it and the next line's indentation (the last group). Two patterns for a
    first line, not one: the groups of the one not used would be cleared and copied out at
    each match."""

    entry: re.Pattern[str]
    one_line: re.Pattern[str]
    next_field: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    """_patterns compiles the entry patterns on first use: about 30 ms, which a command
    reading only files the scanner takes need not spend."""
    return _Patterns(
        re.compile(rf"(- +){_field()}{_SKIP}( *)"),
        re.compile(
            rf"(- +)\{{ *{_nest(_slot(), [_slot(), _slot()], ' *, *')} *\}}{_END}{_SKIP}( *)"
        ),
        re.compile(rf"{_field()}{_SKIP}( *)"),
    )


Quads = tuple[str | None, ...]
"""A mapping's pairs as written, four groups a pair: key, opener (not None for a name in
the object form, ``{name: x}`` in flow or ``name: x`` on a line below), ``{`` (not None for
the object form in flow), value (for the object form, the name); None past the last pair."""
Profile = tuple[str, int, int]
"""A ``profile`` field's value as written, its line and column."""
EntryTaker = Callable[[Quads | None, Quads | None, Profile | None, int, int], bool]
"""Takes an entry from its ``match``, ``set`` and ``profile`` (None: not written), its line
and column, without nodes; False hands it back to be read as nodes."""


class _Decline(Exception):
    """_Decline: the file is not one this reader takes; the composer reads it."""


@dataclass(slots=True)
class _Frame:
    """_Frame is an open block collection: where its keys or dashes are (0-based), its node,
    for a mapping the key awaiting its value on the lines below (a ``key:`` line), and
    whether its items go to ``on_entry`` instead of into the node."""

    col: int
    node: MapNode | SeqNode
    pending: Scalar | None = None
    indentless: bool = False  # a sequence at its key's indentation
    streamed: bool = False


def read_general(
    text: str,
    on_entry: Callable[[MapNode], None] | None = None,
    take: EntryTaker | None = None,
    *,
    plain: bool = False,
) -> Node | None:
    """read_general reads ``text`` or returns None to leave it to the composer; ``plain``:
    ``text`` is what ``fastpath.plain_lines`` gave (not checked again: a pass over the file).

    With ``on_entry``, each item of the top-level ``quotas`` list that is a mapping is handed
    to it once complete instead of being kept (as :func:`kquota.desired.scan.scan_canonical`
    does, with the same caveat: when this returns None, drop whatever ``on_entry`` made);
    with ``take`` too, each such item written the ways people write it (see ``_Patterns``) is
    offered to ``take`` as its tokens first (same caveat).
    """
    lines = text if plain else plain_lines(text)
    if lines is None:
        return None
    try:
        return _Reader(on_entry, take if on_entry is not None else None).read(lines)
    except _Decline:
        return None


def _scalar(text: str, line: int, col: int) -> Scalar:
    tag, value = _TOKENS.get(text) or _token(text)
    return Scalar(tag, value, line, col)


class _Reader:
    def __init__(self, on_entry: Callable[[MapNode], None] | None, take: EntryTaker | None) -> None:
        self.on_entry = on_entry
        self.take = take
        self.stack: list[_Frame] = []
        self.root: MapNode | None = None
        self.declined = -1  # the offset of the last line whose entry ``take`` did not take

    def read(self, text: str) -> Node | None:
        started = False
        head = _HEAD.match
        lineno = 0
        # Line by line without splitting the whole text at once: a million entries in block
        # style are seven million lines, whose strings at once would be several times the
        # file; and plain entries are read past (``tokens``) from where their line starts.
        pos, size = 0, len(text)
        while pos <= size:
            end = text.find("\n", pos)
            if end < 0:
                end = size
            start, line, pos = pos, text[pos:end], end + 1
            lineno += 1
            stripped = line.lstrip(" ")
            if not stripped or stripped[0] == "#":
                continue
            if not started and self.root is None and stripped.startswith("---"):
                if line[:3] != "---" or _TAIL.match(line, 3) is None:
                    raise _Decline
                started = True
                continue
            started = True
            m = head(line)
            assert m is not None  # every part of it is optional
            dash, key = m[1], m[2]
            col = len(line) - len(stripped)
            rest = m.end()
            if dash is not None:
                resumed = self.item(text, start, line, lineno, col, col + len(dash), key, rest)
                if resumed is not None:
                    pos, lineno = resumed
                    lineno -= 1
            elif key is not None:
                frame = self.frame_for_key(lineno, col)
                self.pair(frame, line, lineno, col, key, rest)
            else:
                raise _Decline  # a bare scalar, an indicator this reader leaves to YAML
        while self.stack:
            self.close(self.stack.pop())
        return self.root

    def close(self, frame: _Frame) -> None:
        if frame.pending is not None:
            raise _Decline  # "key:" with nothing below it reads as null: YAML says where
        if frame.streamed:
            self.stream(frame.node)

    def stream(self, node: MapNode | SeqNode) -> None:
        assert isinstance(node, SeqNode) and self.on_entry is not None
        for item in node.items:
            assert isinstance(item, MapNode)
            self.on_entry(item)
        node.items.clear()

    def push(self, frame: _Frame) -> None:
        if len(self.stack) >= _DEPTH_MAX:
            raise _Decline
        self.stack.append(frame)

    def pop_deeper(self, col: int) -> None:
        stack = self.stack
        while stack and stack[-1].col > col:
            self.close(stack.pop())

    def frame_for_key(self, lineno: int, col: int) -> _Frame:
        """frame_for_key is the mapping a ``key:`` line at ``col`` belongs to."""
        stack = self.stack
        if not stack:
            if col != 0 or self.root is not None:
                raise _Decline
            self.root = MapNode([], lineno, 1)
            frame = _Frame(0, self.root)
            self.push(frame)
            return frame
        top = stack[-1]
        if top.pending is not None and col > top.col:  # the first key of a nested mapping
            node = MapNode([], lineno, col + 1)
            self.attach(top, node)
            frame = _Frame(col, node)
            self.push(frame)
            return frame
        self.pop_deeper(col)
        found = stack[-1] if stack else None
        if found is not None and found.indentless and found.col == col:
            self.close(stack.pop())
            found = stack[-1] if stack else None
        if found is None or found.col != col or not isinstance(found.node, MapNode):
            raise _Decline
        if found.pending is not None:
            raise _Decline  # the key above has no value: null
        return found

    def attach(self, frame: _Frame, node: MapNode | SeqNode) -> None:
        """attach gives ``frame``'s pending key its value, a collection on the lines below."""
        assert frame.pending is not None and isinstance(frame.node, MapNode)
        frame.node.pairs.append((frame.pending, node))
        frame.pending = None

    def item(
        self,
        text: str,
        start: int,
        line: str,
        lineno: int,
        col: int,
        inner: int,
        key: str | None,
        rest: int,
    ) -> tuple[int, int] | None:
        """item reads a ``- ...`` line: the dash at ``col``, its content at ``inner``, the
        line at ``start`` in ``text``; when plain entries from it on were taken as tokens,
        where to read on (see ``tokens``)."""
        stack = self.stack
        if not stack:
            raise _Decline  # a list at the top: the walker's message comes from the composer
        top = stack[-1]
        if top.pending is not None and col >= top.col:
            # A new list: the pending key's value, at its indentation or deeper.
            key_node = top.pending
            frame = _Frame(col, SeqNode([], lineno, col + 1), indentless=col == top.col)
            self.attach(top, frame.node)
            frame.streamed = (
                self.on_entry is not None
                and len(stack) == 1
                and key_node.tag == STR_TAG
                and key_node.value == _QUOTAS
            )
            self.push(frame)
        else:
            self.pop_deeper(col)
            if not stack:
                raise _Decline
            frame = stack[-1]
            if frame.col != col or not isinstance(frame.node, SeqNode):
                raise _Decline
            if frame.pending is not None:
                raise _Decline
        seq = frame.node
        if not isinstance(seq, SeqNode):
            raise _Decline
        if frame.streamed and seq.items:
            self.stream(seq)
        if frame.streamed and self.take is not None and start != self.declined:
            resumed = self.tokens(text, start, col, lineno)
            if resumed is not None:
                return resumed
        if key is not None:
            item = MapNode([], lineno, inner + 1)
            seq.items.append(item)
            item_frame = _Frame(inner, item)
            self.push(item_frame)
            self.pair(item_frame, line, lineno, inner, key, rest)
            return None
        value = self.value(line, lineno, inner)
        if frame.streamed and not isinstance(value, MapNode):
            raise _Decline  # streamed entries are mappings; the walker words the rest
        seq.items.append(value)
        return None

    def tokens(self, text: str, start: int, col: int, lineno: int) -> tuple[int, int] | None:
        """tokens offers ``take`` the entries from the one on the line at ``start`` (line
        ``lineno``, its dash at ``col``) as tokens, while they are plain and taken; where the
        line reader goes on (the offset of the first line not read and its number), or None
        when the first one is not taken."""
        take = self.take
        assert take is not None
        patterns = _patterns()
        entry, one_line = patterns.entry.match, patterns.one_line.match
        pos, line = start, lineno
        while True:
            m = entry(text, pos + col) or one_line(text, pos + col)
            got = None if m is None else _entry_tokens(text, m, pos, col, line, patterns)
            if got is None or not take(got[0], got[1], got[2], line, got[5]):
                self.declined = pos
                break
            end, indent = got[3], got[4]
            after = end - indent  # where the next line starts
            line += text.count("\n", pos, after)
            pos = after
            if indent != col or text[end : end + 1] != "-":
                break  # the list goes on no further, or not as plain entries
        return None if pos == start else (pos, line)

    def pair(self, frame: _Frame, line: str, lineno: int, col: int, key: str, rest: int) -> None:
        """pair reads ``key: value`` (or ``key:`` with its value below) into ``frame``."""
        if len(key) > _KEY_MAX:
            raise _Decline
        node = frame.node
        assert isinstance(node, MapNode)
        key_node = _scalar(key, lineno, col + 1)
        if (
            self.on_entry is not None
            and node is self.root
            and key_node.value == _QUOTAS
            and key_node.tag == STR_TAG
            and any(k.value == _QUOTAS for k, _ in node.pairs if isinstance(k, Scalar))
        ):
            raise _Decline  # a duplicate key: its entries must not be read, so not streamed
        if _COMMENT_OR_BLANK.match(line, rest) is not None:
            frame.pending = key_node
            return
        node.pairs.append((key_node, self.value(line, lineno, rest)))

    def value(self, line: str, lineno: int, at: int) -> Node:
        """value is the scalar or the flow collection at ``at``, which ends the line."""
        first = line[at : at + 1]
        flat = _FLAT_MAP.match(line, at) if first == "{" else None
        if flat is not None:
            if _TAIL.match(line, flat.end()) is None:
                raise _Decline
            return MapNode(_flat_pairs(line, lineno, at, flat.end()), lineno, at + 1)
        nested = (
            _NESTED_MAP.match(line, at)
            if first == "{" and len(self.stack) + 2 <= _DEPTH_MAX
            else None
        )
        if nested is not None:
            if _TAIL.match(line, nested.end()) is None:
                raise _Decline
            return _nested_map(line, lineno, at, nested.end())
        if first in ("{", "["):
            node, end = _Flow(line, lineno, len(self.stack)).collection(at)
            if _TAIL.match(line, end) is None:
                raise _Decline
            return node
        scalar = _BLOCK_VALUE.match(line, at)
        if scalar is None:
            raise _Decline
        return _scalar(scalar[1], lineno, at + 1)


def _flat_pairs(line: str, lineno: int, start: int, end: int) -> list[tuple[Node, Node]]:
    """_flat_pairs is the pairs of the flat flow mapping _FLAT matched at ``start:end``."""
    get = _TOKENS.get
    pairs: list[tuple[Node, Node]] = []
    for m in _PAIR.finditer(line, start, end):
        k, v = m[1], m[2]
        if len(k) > _KEY_MAX:
            raise _Decline
        ktag, kval = get(k) or _token(k)
        vtag, vval = get(v) or _token(v)
        pairs.append(
            (Scalar(ktag, kval, lineno, m.start(1) + 1), Scalar(vtag, vval, lineno, m.start(2) + 1))
        )
    return pairs


def _nested_map(line: str, lineno: int, start: int, end: int) -> MapNode:
    """_nested_map is the node of the mapping _NESTED_MAP matched at ``start:end``: the very
    node the token reader (_Flow) makes of it."""
    get = _TOKENS.get
    pairs: list[tuple[Node, Node]] = []
    for m in _NESTED_PAIR.finditer(line, start + 1, end):
        k = m[1]
        if len(k) > _KEY_MAX:
            raise _Decline
        ktag, kval = get(k) or _token(k)
        key = Scalar(ktag, kval, lineno, m.start(1) + 1)
        v = m[2]
        if v is not None:
            vtag, vval = get(v) or _token(v)
            pairs.append((key, Scalar(vtag, vval, lineno, m.start(2) + 1)))
        else:
            at = m.start(3)
            inner = MapNode(_flat_pairs(line, lineno, at + 1, m.end(3)), lineno, at + 1)
            pairs.append((key, inner))
    return MapNode(pairs, lineno, start + 1)


def _entry_tokens(
    text: str, m: re.Match[str], start: int, col: int, line: int, patterns: _Patterns
) -> tuple[Quads | None, Quads | None, Profile | None, int, int, int] | None:
    """_entry_tokens reads the entry ``patterns.entry`` or ``.one_line`` matched (its line at
    ``start``, its dash at ``col``, line ``line``) and its fields below it: its ``match``,
    ``set`` and ``profile``, then where its last field's match ends (at the first line after
    the entry that is not blank or a comment, past its indentation), that indentation, and
    the entry's column; None when the entry is not one to read as tokens (a field twice,
    ``match`` or ``set`` a scalar, ``profile`` a mapping, an indentation YAML reads
    otherwise)."""
    g = m.groups()
    inner = col + len(g[0])
    match = set_ = None
    profile: Profile | None = None
    if m.re is patterns.one_line:
        for b in _SLOTS:
            key = g[b]
            if key is None:
                break
            if g[b + 1] is None:
                if key != "profile" or profile is not None:
                    return None
                s = b + _SCALAR
                raw = g[s]
                assert raw is not None
                profile = (raw, line, m.start(s + 1) - start + 1)
            elif key == "match" and match is None:
                match = g[b + 1 : b + _SCALAR]
            elif key == "set" and set_ is None:
                set_ = g[b + 1 : b + _SCALAR]
            else:
                return None
        indent = len(g[-1])
        return None if indent > col else (match, set_, profile, m.end(), indent, inner + 1)
    b, line_start = 1, start
    while True:
        key = g[b]
        value: Quads | None = None
        if g[b + _FLOW] is not None:
            value = g[b + _FLOW : b + _SCALAR]
        elif g[b + _SUB] is not None:
            sub = g[b + _SUB]
            assert sub is not None
            if len(sub) <= inner:
                return None  # not nested under its key: YAML reads it otherwise
            value = g[b + _BLOCK : b + _FIELD_GROUPS]
        if key == "match" and match is None and value is not None:
            match = value
        elif key == "set" and set_ is None and value is not None:
            set_ = value
        elif key == "profile" and profile is None and value is None:
            s = b + _SCALAR
            raw = g[s]
            assert raw is not None
            at = m.start(s + 1)
            profile = (raw, line + text.count("\n", start, at), at - line_start + 1)
        else:
            return None
        indent = len(g[-1])
        if indent != inner:
            break
        line_start = m.end() - indent
        found = patterns.next_field.match(text, m.end())
        if found is None:
            return None
        m, g, b = found, found.groups(), 0
    if indent > col:
        return None  # a line deeper than the list's dash that is no field of the entry
    return match, set_, profile, m.end(), indent, inner + 1


class _Flow:
    """_Flow reads one flow collection that opens and closes on one line."""

    def __init__(self, line: str, lineno: int, depth: int) -> None:
        self.line = line
        self.lineno = lineno
        self.depth = depth  # collections open around this one

    def token(self, at: int) -> tuple[re.Match[str], int]:
        m = _FLOW_TOKEN.match(self.line, at)
        if m is None:
            raise _Decline
        return m, m.start(m.lastindex or 0)

    def collection(self, at: int) -> tuple[MapNode | SeqNode, int]:
        """collection reads the collection whose bracket is at ``at``; its node and end."""
        opener = self.line[at]
        lineno, pos = self.lineno, at + 1
        self.depth += 1
        if self.depth > _DEPTH_MAX:
            raise _Decline
        if opener == "{":
            node: MapNode | SeqNode = MapNode([], lineno, at + 1)
            closer = "}"
        else:
            node = SeqNode([], lineno, at + 1)
            closer = "]"
        m, start = self.token(pos)
        if m[1] == closer:
            self.depth -= 1
            return node, m.end()
        while True:
            if isinstance(node, MapNode):
                if m[3] is None or len(m[3]) > _KEY_MAX:
                    raise _Decline  # a key that is not a scalar: leave it to YAML
                key = _scalar(m[3], lineno, start + 1)
                colon, _ = self.token(m.end())
                if colon[2] is None:
                    raise _Decline  # "{a}", "{a : b}", "{a:b}": YAML's judgment
                value, pos = self.item(colon.end())
                node.pairs.append((key, value))
            else:
                value, pos = self.item(m.start())
                node.items.append(value)
            m, start = self.token(pos)
            if m[1] == closer:
                self.depth -= 1
                return node, m.end()
            if m[1] != ",":
                raise _Decline
            m, start = self.token(m.end())
            if m[1] is not None:
                raise _Decline  # a trailing comma or two in a row: YAML's to judge

    def item(self, at: int) -> tuple[Node, int]:
        """item is the value (a scalar or a collection) starting at ``at``, and its end."""
        m, start = self.token(at)
        if m[3] is not None:
            # A scalar followed by ':' would be a key: a single-pair mapping in a sequence.
            after = _FLOW_TOKEN.match(self.line, m.end())
            if after is not None and after[2] is not None:
                raise _Decline
            return _scalar(m[3], self.lineno, start + 1), m.end()
        if m[1] in ("{", "["):
            return self.collection(start)
        raise _Decline
