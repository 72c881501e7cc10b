"""Terraform ``kafka_quota`` resources (the Mongey/kafka provider) as kquota entities.

Inputs, as Terraform documents them (https://developer.hashicorp.com/terraform/internals/json-format):

- state JSON, ``terraform show -json`` (``format_version``, ``values.root_module`` with
  ``resources`` and nested ``child_modules``);
- plan JSON, ``terraform show -json PLANFILE``: ``resource_changes`` (each with
  ``change.after`` and ``change.after_unknown``), what the state will be once applied;
  resources planned for deletion are left out with a note;
- the state file itself, ``terraform.tfstate`` version 4 (``resources`` with ``module``,
  ``instances`` and their ``attributes``).

The resource, as the provider documents it (registry.terraform.io/providers/Mongey/kafka,
``docs/resources/quota.md``): ``entity_type`` is ``user``, ``client-id`` or ``ip``;
``entity_name`` names it, and when it is left out (stored as empty or null) the quota is on
the default entity; ``config`` maps Kafka quota keys to numbers (written as strings in the
examples; Terraform stores a "Map of Number" as numbers, and a string that is a decimal
number is read as one). One resource is one single-type entity: the provider has no resource
for user + client-id pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kquota.desired import rules
from kquota.desired.problems import Problems, SourceLocation
from kquota.display import safe_text
from kquota.migrate.common import Declared, SourceNumber, source_value
from kquota.model import ENTITY_TYPES, Entity

RESOURCE_TYPE = "kafka_quota"
_ATTRIBUTES = ("entity_name", "entity_type", "config", "id")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORMATS = (
    "terraform show -json output (state or plan, format_version 0.x or 1.x), "
    "or a terraform.tfstate file (version 4)"
)


def convert(files: Sequence[tuple[str, bytes]], problems: Problems) -> list[Declared]:
    """convert reads every file's kafka_quota resources; other types are counted in a note."""
    declared: list[Declared] = []
    for name, data in files:
        doc = _parse(name, data, problems)
        if doc is None:
            continue
        other: dict[str, int] = {}
        for address, attrs, unknown in _instances(name, doc, other, problems):
            found = _quota(name, address, attrs, unknown, problems)
            if found is not None:
                declared.append(found)
        if other:
            counts = ", ".join(f"{safe_text(t)} x{n}" for t, n in sorted(other.items()))
            problems.warn_path(name, f"skipped resources of other types: {counts}")
    return declared


def _parse(name: str, data: bytes, problems: Problems) -> dict[str, Any] | None:
    try:
        doc = json.loads(data.decode("utf-8-sig"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        problems.add_path(name, "not UTF-8 text", _FORMATS)
        return None
    except json.JSONDecodeError as e:
        at = SourceLocation(name, e.lineno, e.colno)
        problems.add(at, f"invalid JSON: {safe_text(e.msg)}", _FORMATS)
        return None
    except (ValueError, RecursionError) as e:
        problems.add_path(name, f"invalid JSON: {safe_text(str(e))}", _FORMATS)
        return None
    if not isinstance(doc, dict):
        problems.add_path(name, "not a Terraform state or plan (not a JSON object)", _FORMATS)
        return None
    return doc


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


Instance = tuple[str, Mapping[str, Any], Mapping[str, Any]]
"""(resource address, attributes, which attributes are unknown until apply)"""


def _instances(
    name: str, doc: dict[str, Any], other: dict[str, int], problems: Problems
) -> Iterator[Instance]:
    if "format_version" in doc:
        major = str(doc["format_version"]).split(".")[0]
        if major not in ("0", "1"):
            problems.add_path(
                name, f"format_version {safe_text(str(doc['format_version']))}", _FORMATS
            )
            return
        if "resource_changes" in doc or "planned_values" in doc:
            yield from _plan(name, doc, other, problems)
        else:
            root = _get(doc, "values", "root_module")
            yield from _module(root, other)
    elif doc.get("version") == 4 and isinstance(doc.get("resources"), list):
        yield from _tfstate(doc["resources"], other)
    else:
        version = doc.get("version")
        what = f"a state file version {version}" if version is not None else "not one"
        problems.add_path(name, f"{safe_text(str(what))} kquota reads", _FORMATS)


def _plan(
    name: str, doc: dict[str, Any], other: dict[str, int], problems: Problems
) -> Iterator[Instance]:
    changes = doc.get("resource_changes")
    if not isinstance(changes, list):  # a plan with no changes at all: planned_values only
        yield from _module(_get(doc, "planned_values", "root_module"), other)
        return
    for rc in changes:
        if not isinstance(rc, dict) or rc.get("mode") != "managed":
            continue
        if rc.get("type") != RESOURCE_TYPE:
            _count(other, rc.get("type"))
            continue
        address = str(rc.get("address"))
        raw_change = rc.get("change")
        change: dict[str, Any] = raw_change if isinstance(raw_change, dict) else {}
        after = change.get("after")
        if not isinstance(after, dict):
            actions = "/".join(str(a) for a in change.get("actions") or ["?"])
            problems.warn_path(
                name, f"{safe_text(address)}: not imported: planned to go ({safe_text(actions)})"
            )
            continue
        unknown = change.get("after_unknown")
        yield address, after, unknown if isinstance(unknown, dict) else {}


def _module(module: Any, other: dict[str, int]) -> Iterator[Instance]:
    if not isinstance(module, dict):
        return
    for r in module.get("resources") or []:
        if not isinstance(r, dict) or r.get("mode") != "managed":
            continue
        if r.get("type") != RESOURCE_TYPE:
            _count(other, r.get("type"))
            continue
        values = r.get("values")
        yield str(r.get("address")), values if isinstance(values, dict) else {}, {}
    for child in module.get("child_modules") or []:
        yield from _module(child, other)


def _tfstate(resources: list[Any], other: dict[str, int]) -> Iterator[Instance]:
    for r in resources:
        if not isinstance(r, dict) or r.get("mode") != "managed":
            continue
        if r.get("type") != RESOURCE_TYPE:
            _count(other, r.get("type"))
            continue
        base = f"{RESOURCE_TYPE}.{r.get('name')}"
        if r.get("module"):
            base = f"{r['module']}.{base}"
        for inst in r.get("instances") or []:
            if not isinstance(inst, dict):
                continue
            key = inst.get("index_key")
            address = base if key is None else f"{base}[{json.dumps(key)}]"
            if inst.get("deposed"):
                continue  # an old object create_before_destroy left behind: being replaced
            attrs = inst.get("attributes")
            yield address, attrs if isinstance(attrs, dict) else {}, {}


def _quota(
    file: str,
    address: str,
    attrs: Mapping[str, Any],
    unknown: Mapping[str, Any],
    problems: Problems,
) -> Declared | None:
    what = safe_text(address)
    at = SourceLocation(file, 0, 0)
    ok = True
    for key in attrs:
        if key not in _ATTRIBUTES and attrs[key] is not None:
            problems.add(
                at,
                f"{what}: attribute {safe_text(key)} is not the provider's",
                "entity_name, entity_type, config",
            )
            ok = False
    for key in ("entity_name", "entity_type", "config"):
        if unknown.get(key):
            problems.add(
                at,
                f"{what}: {key} is known only after apply",
                "a plan whose kafka_quota values are known, or the state after apply",
            )
            ok = False
    etype = attrs.get("entity_type")
    if etype not in ENTITY_TYPES:
        shown = safe_text(repr(etype)) if etype is not None else "missing"
        problems.add(at, f"{what}: entity_type {shown}", ", ".join(ENTITY_TYPES))
        return None
    ename = attrs.get("entity_name")
    if ename is not None and not isinstance(ename, str):
        problems.add(at, f"{what}: entity_name is not a string", "a name, or none for the default")
        return None
    config = attrs.get("config")
    if not isinstance(config, dict) or not config:
        problems.add(
            at,
            f"{what}: config is {'empty' if config is not None else 'missing'}",
            "config = { producer_byte_rate = ... }",
        )
        return None
    values: dict[str, float] = {}
    for key, raw in sorted(config.items()):
        wrong = rules.key_problem(key, (etype,))
        if wrong is not None:
            problems.add(at, f"{what}: config.{safe_text(key)}: {wrong[0]}", wrong[1])
            ok = False
            continue
        checked = source_value(key, _number(raw), SourceNumber.DOUBLE)
        if isinstance(checked, tuple):
            problems.add(at, f"{what}: config.{key}: {checked[0]}", checked[1])
            ok = False
        else:
            values[key] = checked
    if not ok:
        return None
    return Declared(Entity.of({etype: ename or None}), values, at, what)


def _number(raw: object) -> object:
    """_number reads a decimal string as Terraform would convert it for a Map of Number."""
    if isinstance(raw, str) and _DECIMAL.fullmatch(raw.strip()):
        text = raw.strip()
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    return raw


def _count(other: dict[str, int], rtype: object) -> None:
    key = str(rtype)
    other[key] = other.get(key, 0) + 1


def _get(doc: Mapping[str, Any], *path: str) -> Any:
    node: Any = doc
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node
