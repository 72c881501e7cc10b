"""A small YAML node tree with 1-based positions, built by either reader.

Both readers (:func:`compose`, over libyaml's parser events, and the canonical-shape fast
path in :mod:`kquota.desired.fastpath`) produce these nodes, tag scalars with one function
(:func:`resolve_tag`, PyYAML's implicit resolvers) and have values constructed here by
PyYAML's own SafeConstructor. That is what keeps YAML semantics
identical whichever reader parsed a file: ``1e3`` is a string, ``010`` is 8 and ``yes`` is
a boolean (YAML 1.1, as PyYAML), never a reader's own opinion.

Mappings keep their pairs as a list, not a dict, so that duplicate keys stay visible to
the checks (a dict would silently keep the last one, as PyYAML does).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(slots=True)
class Scalar:
    tag: str
    value: str
    line: int
    col: int


@dataclass(slots=True)
class MapNode:
    pairs: list[tuple[Node, Node]]
    line: int
    col: int


@dataclass(slots=True)
class SeqNode:
    items: list[Node]
    line: int
    col: int


Node = Scalar | MapNode | SeqNode


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Unsupported stands for a scalar kquota never accepts (a timestamp, binary, a custom tag)."""

    tag: str


_CONSTRUCTOR = SafeConstructor()
_RESOLVER = Resolver()
_RESOLVED: dict[tuple[str, bool], str] = {}


# First characters for which some implicit resolver may apply; a plain scalar starting with
# any other character is a string, as PyYAML's resolve() itself concludes after looking up
# an empty list of candidates (kquota registers no resolvers of its own).
_RESOLVER_FIRSTS = frozenset(Resolver.yaml_implicit_resolvers)
_NO_WILDCARD = None not in _RESOLVER_FIRSTS


def resolve_tag(value: str, plain: bool) -> str:
    """resolve_tag is the tag PyYAML's implicit resolvers give a scalar (cached: files repeat)."""
    if not plain or (value and _NO_WILDCARD and value[0] not in _RESOLVER_FIRSTS):
        return STR_TAG  # quoted scalars are never resolved; see _RESOLVER_FIRSTS
    key = (value, plain)
    tag = _RESOLVED.get(key)
    if tag is None:
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, (plain, not plain))  # type: ignore[no-untyped-call]
        if len(_RESOLVED) < 100_000:
            _RESOLVED[key] = tag
    return tag


def scalar_value(node: Scalar) -> Any:
    """scalar_value is the Python value PyYAML's safe loader would give this scalar."""
    tag = node.tag
    if tag == STR_TAG:
        return node.value
    constructor = _CONSTRUCTOR.yaml_constructors.get(tag)
    if tag in (INT_TAG, FLOAT_TAG, BOOL_TAG, NULL_TAG) and constructor is not None:
        return constructor(_CONSTRUCTOR, yaml.ScalarNode(tag, node.value))
    return Unsupported(tag)


def kind_name(value: Any) -> str:
    """kind_name names a YAML value's type the way a user reads it in a message."""
    if isinstance(value, Unsupported):
        return "a YAML " + value.tag.rsplit(":", 1)[-1] + " value"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


MAX_DEPTH = 64
"""Deeper nesting is refused: kquota's format needs 5 levels, and libyaml's own (recursive)
composer crashes the interpreter with a segfault on ~50k nested brackets."""

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


def compose(data: bytes) -> Node | None:
    """compose reads one YAML document with libyaml (C) when present, PyYAML otherwise.

    It composes from the parser's events itself, as PyYAML's Composer does (same tags, same
    anchors and aliases, same single-document rule), but without recursion and straight into
    kquota's nodes. Raises yaml.MarkedYAMLError on syntax errors and on nesting deeper than
    :data:`MAX_DEPTH`.
    """
    with gc_paused():
        loader = _Loader(data)
        try:
            return _compose(loader.get_event)
        finally:
            loader.dispose()


def compose_all(data: bytes) -> list[Node | None]:
    """compose_all is :func:`compose` for a stream of documents (``---`` between them), as
    Kubernetes manifests are written; an empty document (two ``---`` in a row) is a null
    scalar, as YAML reads it. Same limits, same errors."""
    with gc_paused():
        loader = _Loader(data)
        try:
            get = loader.get_event
            get()  # StreamStartEvent
            documents: list[Node | None] = []
            while not isinstance(get(), yaml.StreamEndEvent):  # else a DocumentStartEvent
                documents.append(_document(get)[0])
            return documents
        finally:
            loader.dispose()


def _compose(get: Callable[[], Any]) -> Node | None:
    get()  # StreamStartEvent
    event = get()
    if isinstance(event, yaml.StreamEndEvent):
        return None
    root, root_mark = _document(get)
    event = get()
    if not isinstance(event, yaml.StreamEndEvent):
        raise ComposerError(
            "expected a single document in the stream",
            root_mark,
            "but found another document",
            event.start_mark,
        )
    return root


def _document(get: Callable[[], Any]) -> tuple[Node | None, Any]:
    """_document composes one document's events, up to and including its end event."""
    root: Node | None = None
    root_mark = None
    anchors: dict[str, Node] = {}
    stack: list[MapNode | SeqNode] = []
    keys: list[Node | None] = []  # per open mapping: its key awaiting a value
    while True:
        event = get()
        cls = type(event)
        mark = event.start_mark
        node: Node
        if cls is yaml.ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve_tag(event.value, bool(event.implicit[0]))
            node = Scalar(tag, event.value, mark.line + 1, mark.column + 1)
        elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
            is_map = cls is yaml.MappingStartEvent
            if event.tag not in (None, "!", _MAP_TAG if is_map else _SEQ_TAG):
                raise ComposerError(None, None, f"unsupported tag {event.tag}", mark)
            if len(stack) >= MAX_DEPTH:
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            node = (
                MapNode([], mark.line + 1, mark.column + 1)
                if is_map
                else SeqNode([], mark.line + 1, mark.column + 1)
            )
        elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            stack.pop()
            if cls is yaml.MappingEndEvent:
                keys.pop()
            continue
        elif cls is yaml.AliasEvent:
            found = anchors.get(event.anchor)
            if found is None:
                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", mark)
            node = found
        else:  # DocumentEndEvent
            break
        anchor = getattr(event, "anchor", None) if cls is not yaml.AliasEvent else None
        if anchor is not None:
            if anchor in anchors:
                raise ComposerError(
                    f"found duplicate anchor {anchor!r}; first occurrence",
                    None,
                    "second occurrence",
                    mark,
                )
            anchors[anchor] = node
        if not stack:
            root, root_mark = node, mark
        elif isinstance(parent := stack[-1], SeqNode):
            parent.items.append(node)
        elif keys[-1] is None:
            keys[-1] = node
        else:
            parent.pairs.append((keys[-1], node))
            keys[-1] = None
        if isinstance(node, MapNode | SeqNode) and cls is not yaml.AliasEvent:
            stack.append(node)
            if isinstance(node, MapNode):
                keys.append(None)
    return root, root_mark


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """_Loader is the C safe loader with scalar resolution memoized.

    Resolving runs PyYAML's regexes in Python for every scalar; files repeat the same keys
    and values, so the cache answers most (about 10% off composing 30k entries). The answers
    are those of :func:`resolve_tag`, the very function the fast reader uses.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and isinstance(value, str) and implicit[0] != implicit[1]:
            return resolve_tag(value, bool(implicit[0]))
        return super().resolve(kind, value, implicit)


@contextmanager
def gc_paused() -> Iterator[None]:
    """gc_paused turns the cyclic GC off while millions of small acyclic objects are made.

    The GC rescans every live object each time a generation fills; on 100k entries that made
    composing 7x slower (15 s instead of 2 s) and the whole load superlinear. Nothing made
    while it is off forms cycles, so reference counting frees it all.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
