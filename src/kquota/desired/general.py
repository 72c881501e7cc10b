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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kquota.desired.fastpath import _QUOTED, _TOKENS, _token, plain_lines
from kquota.desired.nodes import STR_TAG, MapNode, Node, Scalar, SeqNode

_QUOTAS = "quotas"
# Characters of a plain scalar that need no judgment in either context; the first one is
# no indicator. In block context a ':' inside is fine when a character of these follows it.
_FIRST = r"[A-Za-z0-9_<./+~]"
_CHAR = r"[A-Za-z0-9_<>./+~=@-]"
_BLOCK_CHAR = rf"(?:{_CHAR}|:+(?={_CHAR}))"
_BLOCK_PLAIN = rf"{_FIRST}{_BLOCK_CHAR}*(?: +{_BLOCK_CHAR}+)*"
_FLOW_PLAIN = rf"{_FIRST}{_CHAR}*(?: +{_CHAR}+)*"
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


def read_general(text: str, on_entry: Callable[[MapNode], None] | None = None) -> Node | None:
    """read_general reads ``text`` or returns None to leave it to the composer.

    With ``on_entry``, each item of the top-level ``quotas`` list that is a mapping is handed
    to it once complete instead of being kept (as :func:`kquota.desired.scan.scan_canonical`
    does, with the same caveat: when this returns None, drop whatever ``on_entry`` made).
    """
    plain = plain_lines(text)
    if plain is None:
        return None
    try:
        return _Reader(on_entry).read(plain)
    except _Decline:
        return None


_CHUNK = 1 << 20


def _lines(text: str) -> Iterator[str]:
    """_lines is ``text.split("\\n")``, split a megabyte at a time: a million entries in block
    style are seven million lines, whose strings at once would be several times the file."""
    start, size = 0, len(text)
    while start + _CHUNK < size:
        end = text.find("\n", start + _CHUNK)
        if end < 0:
            break
        yield from text[start:end].split("\n")
        start = end + 1
    yield from text[start:].split("\n")


def _scalar(text: str, line: int, col: int) -> Scalar:
    tag, value = _TOKENS.get(text) or _token(text)
    return Scalar(tag, value, line, col)


class _Reader:
    def __init__(self, on_entry: Callable[[MapNode], None] | None) -> None:
        self.on_entry = on_entry
        self.stack: list[_Frame] = []
        self.root: MapNode | None = None

    def read(self, text: str) -> Node | None:
        started = False
        head = _HEAD.match
        lineno = 0
        for line in _lines(text):
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
                self.item(line, lineno, col, col + len(dash), key, rest)
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
        self, line: str, lineno: int, col: int, inner: int, key: str | None, rest: int
    ) -> None:
        """item reads a ``- ...`` line: the dash at ``col``, its content at ``inner``."""
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
        if key is not None:
            item = MapNode([], lineno, inner + 1)
            seq.items.append(item)
            item_frame = _Frame(inner, item)
            self.push(item_frame)
            self.pair(item_frame, line, lineno, inner, key, rest)
            return
        value = self.value(line, lineno, inner)
        if frame.streamed and not isinstance(value, MapNode):
            raise _Decline  # streamed entries are mappings; the walker words the rest
        seq.items.append(value)

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
