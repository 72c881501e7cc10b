"""Kubernetes-style resource files (Strimzi, Jikkou): documents, lists, and field access.

Files are multi-document YAML (``---`` between resources); a document may be a list of
resources (``kind: List`` with ``items``, or a tool's own list kind). Documents are composed
by the desired-state reader's own composer (:func:`~kquota.desired.nodes.compose_all`): the
same bounds on nesting, aliases and nodes, and aliases are shared nodes, never expanded, so
a "billion laughs" file is refused at the alias that crosses the bound. Only the fields a
converter asks for are ever visited.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from kquota.desired.nodes import (
    STR_TAG,
    MapNode,
    Node,
    Scalar,
    SeqNode,
    YAMLProblem,
    compose_all,
    kind_name,
    scalar_value,
)
from kquota.desired.problems import Problems, SourceLocation
from kquota.display import safe_text
from kquota.migrate.common import SourceNumber, source_value

_RESOURCE = "a resource: a mapping with apiVersion, kind, metadata and spec"


@dataclass(frozen=True, slots=True)
class Resource:
    """Resource is one document, or one item of a list document, with its identity."""

    file: str
    node: MapNode
    api_version: str
    kind: str

    def at(self, node: Node | None = None) -> SourceLocation:
        """at is where ``node`` (default: the resource itself) is in its file."""
        n = self.node if node is None else node
        return SourceLocation(self.file, n.line, n.col)


def read_resources(
    files: Sequence[tuple[str, bytes]],
    item_kinds: Mapping[str, str | None],
    problems: Problems,
) -> Iterator[Resource]:
    """read_resources yields every resource of every file, list items one by one.

    ``item_kinds`` maps a list kind to the kind its items take when they name none (Jikkou's
    ``KafkaClientQuotaList`` items are bare specs); ``None`` means items name their own, as in
    Kubernetes' ``kind: List``. A document that is not a resource is refused.
    """
    for name, data in files:
        try:
            documents = compose_all(data)
        except YAMLProblem as e:
            at = SourceLocation(name, e.line, e.col)
            problems.add(at, f"invalid YAML: {safe_text(e.what)}", "YAML")
            continue
        for root in documents:
            if root is None or value(root) is None:
                continue  # an empty document, as between two `---`
            yield from _resources(name, root, item_kinds, problems)


def resources_of(
    files: Sequence[tuple[str, bytes]],
    item_kinds: Mapping[str, str | None],
    group: str,
    kinds: tuple[str, ...],
    versions: tuple[str, ...],
    problems: Problems,
) -> Iterator[Resource]:
    """resources_of yields the resources of ``kinds`` in API ``group``: another group or kind
    is skipped with a warning, a version kquota does not read is refused."""
    for r in read_resources(files, item_kinds, problems):
        in_group, _, version = r.api_version.rpartition("/")
        if in_group != group or r.kind not in kinds:
            problems.warn(r.at(), f"skipped: {safe_text(r.api_version)} {safe_text(r.kind)}")
        elif version not in versions:
            problems.add(
                r.at(),
                f"{r.kind}: apiVersion {safe_text(r.api_version)} is not one kquota reads",
                ", ".join(f"{group}/{v}" for v in versions),
            )
        else:
            yield r


def _resources(
    file: str, root: Node, item_kinds: Mapping[str, str | None], problems: Problems
) -> Iterator[Resource]:
    if not isinstance(root, MapNode):
        problems.add(_loc(file, root), f"{_kind_of(root)} is not a resource", _RESOURCE)
        return
    api_version, kind = text(field(root, "apiVersion")), text(field(root, "kind"))
    if kind is None or api_version is None:
        problems.add(_loc(file, root), "a document without apiVersion and kind", _RESOURCE)
        return
    if kind not in item_kinds:
        yield Resource(file, root, api_version, kind)
        return
    items = field(root, "items")
    if not isinstance(items, SeqNode):
        where = root if items is None else items
        problems.add(
            _loc(file, where), f"{kind} without an items list", f"{kind} with items: [...]"
        )
        return
    default_kind = item_kinds[kind]
    for item in items.items:
        if not isinstance(item, MapNode):
            problems.add(_loc(file, item), f"{_kind_of(item)} in {kind} items", _RESOURCE)
            continue
        item_kind = text(field(item, "kind")) or default_kind
        item_version = text(field(item, "apiVersion")) or (api_version if default_kind else None)
        if item_kind is None or item_version is None or item_kind in item_kinds:
            problems.add(_loc(file, item), f"an item of {kind} that is not a resource", _RESOURCE)
            continue
        yield Resource(file, item, item_version, item_kind)


def field(node: Node | None, *path: str) -> Node | None:
    """field follows mapping keys; None when a step is missing or not a mapping.

    A key written twice is the last one, as Kubernetes and Jackson read it: only the
    converters' own checks (:func:`fields`) refuse duplicates where they matter.
    """
    for key in path:
        if not isinstance(node, MapNode):
            return None
        found = None
        for k, v in node.pairs:
            if isinstance(k, Scalar) and k.value == key and k.tag == STR_TAG:
                found = v
        node = found
    return node


def fields(
    resource: Resource, node: MapNode, where: str, problems: Problems
) -> list[tuple[str, Node]]:
    """fields lists a mapping's ``(key, value)`` pairs, refusing a key written twice (YAML
    would keep only one of them, silently) and a key that is not a string."""
    out: list[tuple[str, Node]] = []
    seen: set[str] = set()
    for k, v in node.pairs:
        key = text(k)
        if key is None:
            problems.add(resource.at(k), f"{where}: a key that is not a string", "string keys")
            continue
        if key in seen:
            problems.add(
                resource.at(k),
                f"{where}: {safe_text(key)} is written twice (YAML keeps only one)",
                "each key once",
            )
            continue
        seen.add(key)
        out.append((key, v))
    return out


def text(node: Node | None) -> str | None:
    """text is a scalar's string value, or None for anything else (a number is not a name)."""
    if isinstance(node, Scalar) and node.tag == STR_TAG:
        return node.value
    return None


def value(node: Node) -> object:
    """value is what a YAML reader makes of a node: a Python scalar, or the node itself."""
    return scalar_value(node) if isinstance(node, Scalar) else node


def describe(node: Node) -> str:
    """describe names a node's kind for a message: ``a mapping``, ``a string``..."""
    return _kind_of(node)


def _kind_of(node: Node) -> str:
    if isinstance(node, MapNode):
        return "a mapping"
    if isinstance(node, SeqNode):
        return "a list"
    return kind_name(scalar_value(node))


def _loc(file: str, node: Node) -> SourceLocation:
    return SourceLocation(file, node.line, node.col)


def quotas_block(
    resource: Resource,
    node: Node,
    where: str,
    spec: Mapping[str, tuple[str, SourceNumber]],
    problems: Problems,
) -> dict[str, float] | None:
    """quotas_block maps a block of camelCase quota fields (``producerByteRate: 1024``) to
    Kafka's keys, each value checked against the source's type and the broker's rules. A
    field the block does not know is refused: its intent cannot be carried over. ``null`` is
    an unset field, as the tools read it. None when anything was refused."""
    if not isinstance(node, MapNode):
        problems.add(resource.at(node), f"{where} is {describe(node)}", "a mapping")
        return None
    out: dict[str, float] = {}
    before = len(problems.items)
    pairs = fields(resource, node, where, problems)
    ok = len(problems.items) == before
    for name, v in pairs:
        known = spec.get(name)
        if known is None:
            problems.add(
                resource.at(v),
                f"{where}.{safe_text(name)}: not a field the source defines here",
                ", ".join(spec),
            )
            ok = False
            continue
        key, kind = known
        raw = value(v)
        if raw is None:
            continue
        checked = source_value(key, raw, kind) if isinstance(v, Scalar) else None
        if checked is None:
            problems.add(resource.at(v), f"{where}.{name} is {describe(v)}", "a number")
            ok = False
        elif isinstance(checked, tuple):
            problems.add(resource.at(v), f"{where}.{name}: {checked[0]}", checked[1])
            ok = False
        else:
            out[key] = checked
    return out if ok else None
