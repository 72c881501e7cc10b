"""A reader for the canonical file shape only, about twice as fast as composing with libyaml.

Nearly every desired-state file is a header plus a long block list of one-line flow
mappings::

    apiVersion: kquota/v1
    kind: ClientQuotas
    quotas:
      - match: {user: alice, client-id: <default>}
        set: {producer_byte_rate: 1048576, request_percentage: 150}

:func:`parse_canonical` reads exactly that shape and returns ``None`` for anything else
(block-nested mappings, anchors, tags, escapes, multi-line scalars, ``---``, odd
indentation...), and the caller then uses the full YAML reader. It accepts only plain
scalars made of safe characters and quoted scalars without escapes, so it never has to
decide YAML's harder rules; scalars are resolved by PyYAML's own resolver
(:func:`kquota.desired.nodes.resolve_tag`). Nodes and 1-based positions equal those the
composer gives; the parity tests check this on every corpus file.
"""

from __future__ import annotations

import re

from kquota.desired.nodes import MapNode, Node, Scalar, SeqNode, resolve_tag

# PyYAML's own reader rejects these; leave such files to it so the error is its error.
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
# Plain scalars: no indicator first, nothing that ends or splits a scalar in flow context.
_PLAIN_CHARS = r"[A-Za-z0-9_<>./+~=@-]"
_PLAIN = rf"[A-Za-z0-9_<./+~]{_PLAIN_CHARS}*"
_QUOTED = r"""(?:"[^"\\\x00-\x1f\x7f]*"|'[^'\x00-\x1f\x7f]*')"""
_SCALAR = rf"(?:{_QUOTED}|{_PLAIN})"
_FLOW = rf"\{{ *(?:{_SCALAR}: +{_SCALAR}(?: *, *{_SCALAR}: +{_SCALAR})*)? *\}}"
_TAIL = r"(?: +#.*| *)$"
_TOP = re.compile(rf"({_PLAIN}):(?: +({_SCALAR}))?{_TAIL}")
_ITEM = re.compile(rf"( *)- ({_PLAIN}): +({_FLOW}|{_SCALAR}){_TAIL}")
_CONT = re.compile(rf"( *)({_PLAIN}): +({_FLOW}|{_SCALAR}){_TAIL}")
_PAIR = re.compile(rf"({_SCALAR}): +({_SCALAR})")


_TOKENS: dict[str, tuple[str, str]] = {}  # token as written -> (tag, value); files repeat keys


def _token(text: str) -> tuple[str, str]:
    if text[0] in "\"'":
        known = (resolve_tag(text[1:-1], False), text[1:-1])
    else:
        known = (resolve_tag(text, True), text)
    if len(_TOKENS) < 100_000:
        _TOKENS[text] = known
    return known


def _scalar(text: str, line: int, col: int) -> Scalar:
    tag, value = _TOKENS.get(text) or _token(text)
    return Scalar(tag, value, line, col)


def _value(text: str, line: int, col: int) -> Node:
    if text[0] != "{":
        return _scalar(text, line, col)
    # Inlined _scalar: this loop makes most of a big file's nodes.
    get = _TOKENS.get
    pairs: list[tuple[Node, Node]] = []
    for m in _PAIR.finditer(text):
        ktag, kval = get(m[1]) or _token(m[1])
        vtag, vval = get(m[2]) or _token(m[2])
        pairs.append(
            (Scalar(ktag, kval, line, col + m.start(1)), Scalar(vtag, vval, line, col + m.start(2)))
        )
    return MapNode(pairs, line, col)


def plain_lines(text: str) -> str | None:
    """plain_lines is ``text`` with CRLF made LF, or None when a reader must leave it to YAML
    (a byte order mark, a character YAML refuses, a lone CR or a YAML 1.1 line break)."""
    if text.startswith("\ufeff") or _NON_PRINTABLE.search(text):
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        return None  # YAML 1.1 line breaks that str.split would not see
    return text


def parse_canonical(text: str) -> Node | None:
    """parse_canonical reads a canonical-shape document, or returns None to defer to YAML."""
    plain = plain_lines(text)
    if plain is None:
        return None
    text = plain
    top: MapNode | None = None
    seq: SeqNode | None = None  # the block list being filled, if any
    item: MapNode | None = None
    pending: Scalar | None = None  # a top key written "key:" awaiting its list
    indent = -1
    match_item, match_cont, match_top = _ITEM.match, _CONT.match, _TOP.match
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if stripped.startswith("- "):
            m = match_item(line)
            if m is None or pending is None and seq is None:
                return None
            ind = len(m[1])
            if seq is None:
                assert pending is not None and top is not None
                indent = ind
                seq = SeqNode([], lineno, ind + 1)
                top.pairs.append((pending, seq))
                pending = None
            elif ind != indent:
                return None
            item = MapNode([], lineno, ind + 3)
            seq.items.append(item)
            item.pairs.append(
                (_scalar(m[2], lineno, ind + 3), _value(m[3], lineno, m.start(3) + 1))
            )
            continue
        if line[0] == " ":
            m = match_cont(line)
            if m is None or item is None or len(m[1]) != indent + 2:
                return None
            item.pairs.append(
                (_scalar(m[2], lineno, indent + 3), _value(m[3], lineno, m.start(3) + 1))
            )
            continue
        m = match_top(line)
        if m is None or pending is not None:
            return None  # "key:" with no list after it reads as null: leave that to YAML
        seq = item = None
        if top is None:
            top = MapNode([], lineno, 1)
        key = _scalar(m[1], lineno, 1)
        if m[2] is None:
            pending = key
        else:
            top.pairs.append((key, _scalar(m[2], lineno, m.start(2) + 1)))
    if pending is not None:
        return None
    return top
