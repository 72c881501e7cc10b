"""A small YAML node tree with 1-based positions, built by either reader; the one place kquota
parses YAML (desired state, ``kquota.yaml``, Strimzi and Jikkou imports), with one set of
bounds for all of them.

Both readers (:func:`compose`, over libyaml's parser events, and the canonical-shape fast
path in :mod:`kquota.desired.fastpath`) produce these nodes, tag scalars with one function
(:func:`resolve_tag`, PyYAML's implicit resolvers) and have values constructed here by
PyYAML's own SafeConstructor. That is what keeps YAML semantics
identical whichever reader parsed a file: ``1e3`` is a string, ``010`` is 8 and ``yes`` is
a boolean (YAML 1.1, as PyYAML), never a reader's own opinion.

Mappings keep their pairs as a list, not a dict, so that duplicate keys stay visible to
the checks (a dict would silently keep the last one, as PyYAML does).

Bounds, the same for every file kquota reads (see :func:`compose`): nesting deeper than
:data:`MAX_DEPTH`, an alias inside the node it names (a cycle), aliases that stand for more
than :data:`MAX_ALIAS_NODES` nodes (a "billion laughs": a few hundred bytes that expand to
billions of nodes), and documents of more than :data:`MAX_NODES` nodes are refused with a
:class:`YAMLProblem` at the line and column where the bound was crossed. Aliases are never
expanded (they share the node they name), but readers walk what they name, so the count is
what a walk would visit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from kquota.runtime.gcpause import collector_paused

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

MAX_ALIAS_NODES = 1_000_000
"""Nodes that aliases may stand for in one document, counted through nested aliases: shared
settings (``set: *gold`` on every entry) stay far below it, a 647-byte "billion laughs"
(9 aliases of 9 aliases, 9 levels) stands for 387 million."""

MAX_NODES = 25_000_000
"""Nodes in one document, aliases counted as what they stand for: about two million
desired-state entries written out in full; more is a file to split."""

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class YAMLProblem(yaml.YAMLError):
    """YAMLProblem is why kquota does not read a YAML file: where (1-based line and column,
    1:1 when unknown) and what, in words for a person (not yet escaped for a terminal).

    It is a ``yaml.YAMLError`` for callers that catch those, but carries no PyYAML types:
    whichever PyYAML (C or pure Python, any version) found the problem, it reads the same.
    """

    def __init__(self, line: int, col: int, what: str) -> None:
        super().__init__(f"line {line}, column {col}: {what}")
        self.line = line
        self.col = col
        self.what = what


def compose(data: bytes, *, max_nodes: int = MAX_NODES) -> Node | None:
    """compose reads one YAML document with libyaml (C) when present, PyYAML otherwise.

    It composes from the parser's events itself, as PyYAML's Composer does (same tags, same
    anchors and aliases, same single-document rule), but without recursion and straight into
    kquota's nodes. Raises :class:`YAMLProblem` on syntax errors and past any of the bounds
    (module docstring).
    """
    with collector_paused():
        loader = _Loader(data)
        stack: list[MapNode | SeqNode] = []  # the open collections, for _problem
        try:
            return _compose(loader.get_event, max_nodes, stack)
        except (yaml.YAMLError, RecursionError, UnicodeDecodeError) as e:
            raise _problem(data, e, len(stack)) from None
        finally:
            loader.dispose()


def compose_all(data: bytes, *, max_nodes: int = MAX_NODES) -> list[Node | None]:
    """compose_all is :func:`compose` for a stream of documents (``---`` between them), as
    Kubernetes manifests are written; an empty document (two ``---`` in a row) is a null
    scalar, as YAML reads it. Same bounds (each document on its own), same errors."""
    with collector_paused():
        loader = _Loader(data)
        try:
            get = loader.get_event
            get()  # StreamStartEvent
            documents: list[Node | None] = []
            stack: list[MapNode | SeqNode] = []
            while not isinstance(get(), yaml.StreamEndEvent):  # else a DocumentStartEvent
                stack = []
                documents.append(_document(get, max_nodes, stack)[0])
            return documents
        except (yaml.YAMLError, RecursionError, UnicodeDecodeError) as e:
            raise _problem(data, e, len(stack)) from None
        finally:
            loader.dispose()


def _problem(data: bytes, e: BaseException, depth: int) -> YAMLProblem:
    """_problem words any error of the parser as a :class:`YAMLProblem`; ``depth`` is how
    many collections the composer had open when it came.

    kquota's depth bound speaks first whatever PyYAML does: libyaml holds back the tokens of
    a line such as ``[[[[...`` until it knows none of them starts a key (to the end of the
    line, at most 1,024 characters), so a PyYAML with a nesting limit of its own (6.0.4:
    1,000 levels) can refuse the file before the composer sees the 65th level. Only the
    error's line can hold such levels, so when the open ones plus every ``[`` and ``{`` of
    that line could pass the bound, the text up to that line is scanned again with PyYAML's
    pure-Python scanner counting levels (:class:`_DepthScanner`); PyYAML's error is given
    only when that finds nothing.
    """
    if isinstance(e, YAMLProblem):
        return e
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if mark is not None:
        at = data.split(b"\n", mark.line + 1)[mark.line : mark.line + 1]
        openers = at[0].count(b"[") + at[0].count(b"{") if at else 0
        if depth + openers > MAX_DEPTH and (deeper := _too_deep(data, mark.line)) is not None:
            return deeper
    if isinstance(e, yaml.MarkedYAMLError):
        what = " ".join(p for p in (e.context, e.problem) if p) or type(e).__name__
        if mark is not None:
            return YAMLProblem(mark.line + 1, mark.column + 1, what)
        return YAMLProblem(1, 1, what)
    if isinstance(e, RecursionError):
        return YAMLProblem(1, 1, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(e, UnicodeDecodeError):
        line = data[: e.start].count(b"\n") + 1
        return YAMLProblem(line, 1, "not UTF-8 text")
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return YAMLProblem(1, 1, first)


class _DepthScanner(yaml.SafeLoader):
    """_DepthScanner is PyYAML's pure-Python scanner refusing nesting past MAX_DEPTH.

    Levels are counted as the scanner opens them: flow collections (``[``, ``{``) and block
    indentation. A block sequence written at its mapping's indentation opens no level here,
    so this count is never above the composer's: it can be late, never wrong.
    """

    def _level(self) -> None:
        if self.flow_level + len(self.indents) >= MAX_DEPTH:
            mark = self.get_mark()
            raise YAMLProblem(
                mark.line + 1, mark.column + 1, f"nested deeper than {MAX_DEPTH} levels"
            )

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 (PyYAML's)
        self._level()
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        if self.indent < column:
            self._level()
        return bool(super().add_indent(column))


def _too_deep(data: bytes, last_line: int) -> YAMLProblem | None:
    """_too_deep is the depth problem in ``data`` up to 0-based line ``last_line``, or None
    when it nests no deeper than MAX_DEPTH there."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None  # libyaml reads UTF-16 too; its depth is then its own to refuse
    lines: Sequence[str] = text.split("\n", last_line + 1)
    text = "\n".join(lines[: last_line + 1])
    scanner = _DepthScanner(text)
    try:
        while not scanner.check_token(yaml.StreamEndToken):
            scanner.get_token()  # type: ignore[no-untyped-call]
    except YAMLProblem as problem:
        return problem
    except (yaml.YAMLError, RecursionError):
        return None  # another problem: the original error says it
    finally:
        scanner.dispose()
    return None


def _compose(get: Callable[[], Any], max_nodes: int, stack: list[MapNode | SeqNode]) -> Node | None:
    get()  # StreamStartEvent
    event = get()
    if isinstance(event, yaml.StreamEndEvent):
        return None
    root, root_mark = _document(get, max_nodes, stack)
    event = get()
    if not isinstance(event, yaml.StreamEndEvent):
        raise ComposerError(
            "expected a single document in the stream",
            root_mark,
            "but found another document",
            event.start_mark,
        )
    return root


def _document(
    get: Callable[[], Any], max_nodes: int, stack: list[MapNode | SeqNode]
) -> tuple[Node | None, Any]:
    """_document composes one document's events, up to and including its end event.

    ``count`` is the number of nodes a walk of the document would visit so far, aliases
    counted as the nodes they stand for: a collection stands for ``count`` at its end minus
    ``count`` at its start, recorded (in ``size``) when it is anchored. An alias to an
    anchor without a size is one inside the collection it names: a cycle.
    """
    root: Node | None = None
    root_mark = None
    anchors: dict[str, Node] = {}
    size: dict[str, int] = {}  # anchor -> nodes it stands for, once its node is complete
    opened: list[tuple[int, str | None]] = []  # per open collection: count at start, anchor
    keys: list[Node | None] = []  # per open mapping: its key awaiting a value
    count = 0
    aliased = 0
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
            count += 1
            if event.anchor is not None:
                size[event.anchor] = 1
        elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
            is_map = cls is yaml.MappingStartEvent
            if event.tag not in (None, "!", _MAP_TAG if is_map else _SEQ_TAG):
                raise ComposerError(None, None, f"unsupported tag {event.tag}", mark)
            if len(stack) >= MAX_DEPTH:
                raise _at(mark, f"nested deeper than {MAX_DEPTH} levels")
            node = (
                MapNode([], mark.line + 1, mark.column + 1)
                if is_map
                else SeqNode([], mark.line + 1, mark.column + 1)
            )
            opened.append((count, event.anchor))
            count += 1
        elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            stack.pop()
            start, anchor = opened.pop()
            if anchor is not None:
                size[anchor] = count - start
            if cls is yaml.MappingEndEvent:
                keys.pop()
            continue
        elif cls is yaml.AliasEvent:
            found = anchors.get(event.anchor)
            if found is None:
                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", mark)
            stands_for = size.get(event.anchor)
            if stands_for is None:
                raise _at(
                    mark,
                    f"alias *{event.anchor} is inside the node it names (a recursive alias)",
                )
            aliased += stands_for
            count += stands_for
            if aliased > MAX_ALIAS_NODES:
                raise _at(
                    mark,
                    f"aliases stand for more than {MAX_ALIAS_NODES:,} nodes "
                    "(an alias of aliases, as in a 'billion laughs')",
                )
            node = found
        else:  # DocumentEndEvent
            break
        if count > max_nodes:
            raise _at(mark, f"more than {max_nodes:,} nodes in one document")
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


def _at(mark: Any, what: str) -> YAMLProblem:
    return YAMLProblem(mark.line + 1, mark.column + 1, what)


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
