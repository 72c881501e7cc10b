"""A small YAML node tree with 1-based positions, built by either reader.

Both readers (the libyaml composer and the canonical-shape fast path in
:mod:`kquota.desired.fastpath`) produce these nodes, and values are constructed from them
here, by PyYAML's own SafeConstructor and resolver. That is what keeps YAML semantics
identical whichever reader parsed a file: ``1e3`` is a string, ``010`` is 8 and ``yes`` is
a boolean (YAML 1.1, as PyYAML), never a reader's own opinion.

Mappings keep their pairs as a list, not a dict, so that duplicate keys stay visible to
the checks (a dict would silently keep the last one, as PyYAML does).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"


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


def resolve_tag(value: str, plain: bool) -> str:
    """resolve_tag gives the tag PyYAML's implicit resolvers give a scalar (cached: files repeat)."""
    key = (value, plain)
    tag = _RESOLVED.get(key)
    if tag is None:
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, (plain, not plain))
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


def compose(data: bytes) -> Node | None:
    """compose reads one YAML document with libyaml (C) when present, PyYAML otherwise.

    Raises yaml.YAMLError (with a problem_mark) on syntax errors.
    """
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    # The cyclic GC rescans every live node each time a generation fills; on 100k entries
    # that made composing 7x slower (15 s instead of 2 s). Nodes hold no cycles we create.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        root = yaml.compose(data, Loader=loader)
        return None if root is None else _convert(root, {})
    finally:
        if was_enabled:
            gc.enable()


def _convert(node: yaml.Node, memo: dict[int, Node]) -> Node:
    # memo keeps aliases shared (as the composer does), so an alias bomb stays small.
    done = memo.get(id(node))
    if done is not None:
        return done
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    out: Node
    if isinstance(node, yaml.ScalarNode):
        out = Scalar(node.tag, node.value, line, col)
    elif isinstance(node, yaml.MappingNode):
        pairs: list[tuple[Node, Node]] = []
        out = MapNode(pairs, line, col)
        memo[id(node)] = out
        pairs.extend((_convert(k, memo), _convert(v, memo)) for k, v in node.value)
    else:
        items: list[Node] = []
        out = SeqNode(items, line, col)
        memo[id(node)] = out
        items.extend(_convert(i, memo) for i in node.value)
    memo[id(node)] = out
    return out
