"""The canonical shape read by one regular expression over the whole file.

:mod:`kquota.desired.fastpath` reads the canonical shape line by line in Python; this reads
the tightest form of it, the one ``kquota export`` writes (one space after every ``:`` and
``,``, flow mappings of one to four pairs), with a single compiled pattern run over the
whole text by ``finditer``, so that splitting lines, stripping indentation and picking flow
pairs apart all happen in C. Every match is exactly one line; a gap between two matches (a
line the pattern does not take) makes :func:`scan_canonical` decline, and the line reader,
then the YAML composer, read the file instead.

Whenever it accepts a file it gives the very nodes the line reader gives (same scalars, tags
and 1-based positions): a line it takes is one the line reader's patterns take and split the
same way, and the state machine below is the line reader's. The parity tests check this on
the corpus and on generated and mutated files.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kquota.desired.fastpath import _PLAIN, _PLAIN_CHARS, _QUOTED, _SCALAR, _TOKENS, _token
from kquota.desired.nodes import STR_TAG, MapNode, Node, Scalar, SeqNode

QUOTAS = "quotas"

# A value may be plain words with one space between them (``10 MiB``): YAML reads that as
# one plain scalar in block and in flow context alike (neither ``: `` nor `` #`` nor ``,``
# can be in it), with the spaces kept.
_V = rf"({_QUOTED}|{_PLAIN}(?: {_PLAIN_CHARS}+)*)"
_S = f"({_SCALAR})"
_FLOW = rf"\{{{_S}: {_V}(?:, {_S}: {_V})?(?:, {_S}: {_V})?(?:, {_S}: {_V})?\}}"
_END = r"(?: +#[^\n]*| *)\n"
# Groups: 1 indent, 2 "- ", 3 key, 4-11 flow pairs, 12 scalar value. A whole entry on one
# line, ``- {match: {...}, set: {...}}``: 13 indent, 14 and 23 keys, 15-22 and 24-31 their
# flow pairs. Blank and comment lines match with no group set. Any other line matches the
# last alternative (group 32, ``_OTHER``), which ends the scan: without it finditer would
# look for a match further on, from every position (a line of 20,000 spaces then a stray
# character took 30 s; a file whose every line is another shape, a pass over all of it).
_LINE = re.compile(
    rf"( *)(- )?({_PLAIN}):(?: (?:{_FLOW}|{_V}))?{_END}"
    rf"|( *)- \{{({_PLAIN}): {_FLOW}, ({_PLAIN}): {_FLOW}\}}{_END}"
    r"| *(?:#[^\n]*)?\n"
    r"|()[^\n]*\n"
)
_OTHER = 31
ENTRY_KEYS = ((13, 14), (22, 23))  # each key's group and its first flow group (0-based)


FlowEntryTaker = Callable[[tuple[str | None, ...], int, int], bool]
"""Takes a one-line ``quotas`` entry from its match groups (see ``ENTRY_KEYS``), its column
and line, without nodes; False hands it back to be read as nodes."""

EntryLine = tuple[tuple[str | None, ...], int, int]
"""One line of a block entry, ``match: {...}``, ``profile: NAME`` or ``match:``: its match
groups (key in group 3, flow pairs in 4-11, a scalar in 12), its line and the key's column.
The lines of a block mapping (``user: alice`` below ``match:``) follow their key's line, and
their column is greater than the entry's."""
EntryLinesTaker = Callable[[list[EntryLine]], bool]
"""Takes a block entry from its lines, without nodes; False hands it back to be read as
nodes."""
# ``block`` while a block mapping of an entry read as lines is open (it is never filled).
_IN_LINES = MapNode([], 0, 0)


def scan_canonical(
    text: str,
    on_entry: Callable[[MapNode], None] | None = None,
    take_flow_entry: FlowEntryTaker | None = None,
    take_entry_lines: EntryLinesTaker | None = None,
) -> Node | None:
    """scan_canonical reads ``text`` (LF line ends, see ``fastpath.plain_lines``) or declines.

    With ``on_entry``, each item of the top-level ``quotas`` list is handed to it as soon as
    it is complete instead of being kept in the list (which stays empty), so that a million
    entries never exist as nodes at once. It is called before the file is known to be
    canonical: when this returns None, the caller must drop whatever ``on_entry`` made.
    ``take_flow_entry`` is offered each streamed one-line entry first, ``take_entry_lines``
    each streamed entry of ``key: value`` lines (same caveat).
    """
    if not text.endswith("\n"):
        return None
    top: MapNode | None = None
    seq: SeqNode | None = None
    item: MapNode | None = None
    lines: list[EntryLine] | None = None  # the entry being read, while it needs no nodes
    pending: Scalar | None = None
    streamed: Callable[[MapNode], None] | None = None  # on_entry while in the quotas list
    seen_quotas = False
    indent = -1
    # A key written "key:" with a block mapping on the lines below it (``match:`` then one
    # ``user: alice`` a line; ``profiles:`` then one profile a line): ``opener`` is that key
    # until its first line comes, ``owner`` the mapping it belongs to, ``owner_indent`` the
    # key's own indentation; ``block`` the mapping being filled, one level deep (under a
    # top-level key, a key of it may open one more: ``sub``).
    opener: Scalar | None = None
    owner: MapNode | None = None
    owner_indent = 0
    block: MapNode | None = None
    block_indent = 0
    # A key of ``block`` written "key:" with a block mapping below it, two levels in all (a
    # profile written ``gold:`` then one key a line): ``sub_key`` is that key until its
    # first line comes, ``sub`` its mapping, only under a top-level key (``profiles``).
    sub_key: Scalar | None = None
    sub: MapNode | None = None
    sub_indent = 0
    get = _TOKENS.get
    pos = 0
    lineno = 0
    for m in _LINE.finditer(text):
        groups = m.groups()
        if m.start() != pos or groups[_OTHER] is not None:
            return None
        pos = m.end()
        lineno += 1
        ind, dash, key, scalar = groups[0], groups[1], groups[2], groups[11]
        flow_entry = groups[12] is not None  # a whole entry on one line
        if flow_entry:
            ind, dash = groups[12], "- "
        elif key is None:
            continue  # blank or comment line
        else:
            ktag, kval = get(key) or _token(key)
            if pending is not None and dash is None and ind:
                opener, owner, owner_indent, pending = pending, top, 0, None
        if opener is not None or block is not None:
            n = len(ind)
            if sub_key is not None or sub is not None:
                assert block is not None and block is not _IN_LINES
                if dash is None and n > block_indent and (sub is None or n == sub_indent):
                    if groups[3] is None and scalar is None:
                        return None  # a third level of block mappings
                    if sub is None:
                        assert sub_key is not None
                        sub_indent = n
                        sub = MapNode([], lineno, n + 1)  # the composer's: at its first key
                        block.pairs.append((sub_key, sub))
                        sub_key = None
                    value = _value(groups, lineno, n + len(key) + 3)
                    sub.pairs.append((Scalar(ktag, kval, lineno, n + 1), value))
                    continue
                if sub_key is not None:
                    return None  # "key:" with nothing below it reads as null: leave that to YAML
                sub = None
            if dash is None and n > owner_indent and (block is None or n == block_indent):
                nested = groups[3] is None and scalar is None
                if nested and owner is not top:
                    return None  # nested deeper than the shape this reads
                if block is None:
                    assert opener is not None
                    block_indent = n
                    if owner is None:
                        block = _IN_LINES
                    else:
                        block = MapNode([], lineno, n + 1)
                        owner.pairs.append((opener, block))
                    opener = None
                if block is _IN_LINES:
                    assert lines is not None
                    lines.append((groups, lineno, n + 1))
                    continue
                if nested:  # a top-level key's key with a block mapping of its own
                    sub_key = Scalar(ktag, kval, lineno, n + 1)
                    continue
                block.pairs.append(
                    (Scalar(ktag, kval, lineno, n + 1), _value(groups, lineno, n + len(key) + 3))
                )
                continue
            if opener is not None:
                return None  # "key:" with nothing below it reads as null: leave that to YAML
            block = None
        if dash is not None or ind:
            col = len(ind) + (3 if dash is not None else 1)
            if dash is not None:
                if seq is None:
                    if pending is None or top is None:
                        return None
                    indent = len(ind)
                    seq = SeqNode([], lineno, indent + 1)
                    top.pairs.append((pending, seq))
                    if on_entry is not None and pending.tag == STR_TAG and pending.value == QUOTAS:
                        streamed = on_entry
                    pending = None
                elif len(ind) != indent:
                    return None
                if lines is not None:
                    assert streamed is not None and take_entry_lines is not None
                    if not take_entry_lines(lines):
                        streamed(_entry(lines))
                    lines = None
                elif streamed is not None and item is not None:
                    streamed(item)
                if flow_entry:
                    item = None  # a flow entry takes no more keys on the lines below it
                    if streamed is None:
                        seq.items.append(_flow_entry(m, lineno))
                    elif take_flow_entry is None or not take_flow_entry(
                        groups, m.start(14) - m.start(), lineno
                    ):
                        streamed(_flow_entry(m, lineno))
                    continue
                if take_entry_lines is not None and streamed is not None:
                    item, lines = None, [(groups, lineno, col)]
                    if groups[3] is None and scalar is None:
                        opener, owner, owner_indent = _KEY, None, col - 1
                    continue
                item = MapNode([], lineno, col)
                if streamed is None:
                    seq.items.append(item)
            elif (item is None and lines is None) or len(ind) != indent + 2:
                return None
            elif lines is not None:
                lines.append((groups, lineno, col))
                if groups[3] is None and scalar is None:
                    opener, owner, owner_indent = _KEY, None, col - 1
                continue
            assert item is not None
            if groups[3] is None and scalar is None:
                opener, owner, owner_indent = Scalar(ktag, kval, lineno, col), item, col - 1
                continue
            item.pairs.append(
                (Scalar(ktag, kval, lineno, col), _value(groups, lineno, col + len(key) + 2))
            )
            continue
        if pending is not None:
            return None
        if lines is not None:
            assert streamed is not None and take_entry_lines is not None
            if not take_entry_lines(lines):
                streamed(_entry(lines))
            lines = None
        elif streamed is not None and item is not None:
            streamed(item)
        seq = item = streamed = None
        if top is None:
            top = MapNode([], lineno, 1)
        if groups[3] is not None:
            return None  # a flow mapping at the top: the line reader's shape has none
        if kval == QUOTAS and ktag == STR_TAG and on_entry is not None:
            if seen_quotas:
                return None  # a duplicate key: its entries must not be read, so not streamed
            seen_quotas = True
        if scalar is None:
            pending = Scalar(ktag, kval, lineno, 1)
        else:
            vtag, vval = get(scalar) or _token(scalar)
            top.pairs.append(
                (Scalar(ktag, kval, lineno, 1), Scalar(vtag, vval, lineno, len(key) + 3))
            )
    if pos != len(text) or pending is not None or opener is not None or sub_key is not None:
        return None
    if lines is not None:
        assert streamed is not None and take_entry_lines is not None
        if not take_entry_lines(lines):
            streamed(_entry(lines))
    elif streamed is not None and item is not None:
        streamed(item)
    return top


_KEY = Scalar(STR_TAG, "", 0, 0)  # ``opener`` of an entry read as lines (never a node)


def _entry(lines: list[EntryLine]) -> MapNode:
    """_entry is the nodes of an entry read as lines (see ``EntryLine``)."""
    get = _TOKENS.get
    _, line, col = lines[0]
    entry = MapNode([], line, col)
    block: MapNode | None = None
    for groups, lineno, c in lines:
        key = groups[2]
        assert key is not None
        ktag, kval = get(key) or _token(key)
        pair = (Scalar(ktag, kval, lineno, c), _value(groups, lineno, c + len(key) + 2))
        if c > col:  # a line of the block mapping opened above it
            assert block is not None
            if not block.pairs:  # the composer puts a block mapping at its first key
                block.line, block.col = lineno, c
            block.pairs.append(pair)
        elif groups[3] is None and groups[11] is None:
            block = MapNode([], 0, 0)
            entry.pairs.append((pair[0], block))
        else:
            entry.pairs.append(pair)
    return entry


def _value(groups: tuple[str | None, ...], lineno: int, vcol: int) -> Node:
    """_value is the scalar (group 12) or the flow mapping (groups 4-11) after a key."""
    get = _TOKENS.get
    scalar = groups[11]
    if scalar is not None:
        vtag, vval = get(scalar) or _token(scalar)
        return Scalar(vtag, vval, lineno, vcol)
    pairs: list[tuple[Node, Node]] = []
    c = vcol + 1
    for i in range(3, 11, 2):
        k = groups[i]
        if k is None:
            break
        v = groups[i + 1]
        assert v is not None
        ptag, pval = get(k) or _token(k)
        qtag, qval = get(v) or _token(v)
        vc = c + len(k) + 2
        pairs.append((Scalar(ptag, pval, lineno, c), Scalar(qtag, qval, lineno, vc)))
        c = vc + len(v) + 2
    return MapNode(pairs, lineno, vcol)


def _flow_entry(m: re.Match[str], lineno: int) -> MapNode:
    """_flow_entry is the entry ``- {match: {...}, set: {...}}`` that ``m`` matched, with the
    composer's positions (each node where its text starts; a mapping at its ``{``)."""
    groups = m.groups()
    get = _TOKENS.get
    start = m.start() - 1  # columns are 1-based
    entry = MapNode([], lineno, m.start(14) - start - 1)
    for key_group, first in ENTRY_KEYS:
        key = groups[key_group]
        pairs: list[tuple[Node, Node]] = []
        for i in range(first, first + 8, 2):
            pk, pv = groups[i], groups[i + 1]
            if pk is None:
                break
            ptag, pval = get(pk) or _token(pk)
            qtag, qval = get(pv) or _token(pv)
            key_scalar = Scalar(ptag, pval, lineno, m.start(i + 1) - start)
            pairs.append((key_scalar, Scalar(qtag, qval, lineno, m.start(i + 2) - start)))
        ktag, kval = get(key) or _token(key)
        value = MapNode(pairs, lineno, m.start(first + 1) - start - 1)
        entry.pairs.append((Scalar(ktag, kval, lineno, m.start(key_group + 1) - start), value))
    return entry
