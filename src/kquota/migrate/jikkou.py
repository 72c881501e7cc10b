"""Jikkou ``KafkaClientQuota`` and ``KafkaClientQuotaList`` resources as kquota entities.

Published schema this follows (Jikkou's Kafka provider documentation, "Kafka Quotas",
https://www.jikkou.io/docs/providers/kafka/resources/quotas/, and its resource schema
``V1KafkaClientQuotaSpec``):

- ``apiVersion: kafka.jikkou.io/v1beta2`` (the documented version; ``v1`` in newer releases,
  ``v1beta1`` in older ones), ``kind: KafkaClientQuota``; ``KafkaClientQuotaList`` holds
  ``items`` that are bare quotas (their ``kind`` and ``apiVersion`` are the list's).
- ``spec.type`` says which entity: ``USERS_DEFAULT`` (user=<default>), ``USER``
  (user=<user>), ``USER_CLIENT`` (user + client-id), ``USER_ALL_CLIENTS`` (user=<user>,
  client-id=<default>), ``CLIENT`` (client-id=<id>), ``CLIENTS_DEFAULT``
  (client-id=<default>). ``spec.entity`` has ``user`` and ``clientId``, each required or not
  allowed depending on the type (Jikkou ignores the other; kquota refuses it, because a name
  that is written and then ignored is a mistake to show, not to carry over).
- ``spec.configs``: ``producerByteRate``, ``consumerByteRate`` and ``requestPercentage``,
  numbers (Java OptionalDouble), set as ``producer_byte_rate``, ``consumer_byte_rate`` and
  ``request_percentage``. Jikkou has no field for ``controller_mutation_rate``.

Jikkou renders templates (``{{ values.x }}``) before it reads resources; kquota reads the
files as they are, so a template is refused with the way out: render first (``jikkou
prepare``) and import what it prints.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.desired.nodes import MapNode, Node
from kquota.desired.problems import Problems
from kquota.display import safe_text
from kquota.migrate.common import RENDER_FIRST, TEMPLATE, Declared, SourceNumber
from kquota.migrate.manifests import (
    Resource,
    describe,
    field,
    fields,
    quotas_block,
    resources_of,
    text,
)
from kquota.model import CLIENT_ID, USER, Entity

GROUP = "kafka.jikkou.io"
VERSIONS = ("v1beta1", "v1beta2", "v1")
KIND = "KafkaClientQuota"
LIST_KIND = "KafkaClientQuotaList"

CONFIGS = {
    "producerByteRate": ("producer_byte_rate", SourceNumber.DOUBLE),
    "consumerByteRate": ("consumer_byte_rate", SourceNumber.DOUBLE),
    "requestPercentage": ("request_percentage", SourceNumber.DOUBLE),
}
"""KafkaClientQuotaConfigs: field -> (Kafka quota key, the schema's type)."""

_NAMED, _DEFAULT = "named", "default"
TYPES: dict[str, dict[str, str]] = {
    "USERS_DEFAULT": {USER: _DEFAULT},
    "USER": {USER: _NAMED},
    "USER_CLIENT": {USER: _NAMED, CLIENT_ID: _NAMED},
    "USER_ALL_CLIENTS": {USER: _NAMED, CLIENT_ID: _DEFAULT},
    "CLIENT": {CLIENT_ID: _NAMED},
    "CLIENTS_DEFAULT": {CLIENT_ID: _DEFAULT},
}
"""spec.type -> for each entity type, whether it is named (from spec.entity) or the default."""

_ENTITY_FIELDS = {USER: "user", CLIENT_ID: "clientId"}
_SPEC_FIELDS = ("type", "entity", "configs")


def convert(files: Sequence[tuple[str, bytes]], problems: Problems) -> list[Declared]:
    """convert reads Jikkou resources; other kinds are skipped with a note."""
    declared: list[Declared] = []
    for r in resources_of(files, {LIST_KIND: KIND}, GROUP, (KIND,), VERSIONS, problems):
        found = _quota(r, problems)
        if found is not None:
            declared.append(found)
    return declared


def _quota(r: Resource, problems: Problems) -> Declared | None:
    name = text(field(r.node, "metadata", "name"))
    what = KIND + (f" {safe_text(name)}" if name else "")
    spec = field(r.node, "spec")
    if not isinstance(spec, MapNode):
        problems.add(r.at(spec), f"{what}: spec is missing or not a mapping", "spec: {type: ...}")
        return None
    ok = True
    for key, v in fields(r, spec, f"{what}: spec", problems):
        if key not in _SPEC_FIELDS:
            problems.add(
                r.at(v),
                f"{what}: spec.{safe_text(key)} is not a Jikkou field",
                "type, entity, configs",
            )
            ok = False
    quota_type = text(field(spec, "type"))
    shape = TYPES.get(quota_type or "")
    if shape is None:
        shown = (
            "missing" if field(spec, "type") is None else safe_text(quota_type or "not a string")
        )
        problems.add(
            r.at(field(spec, "type") or spec), f"{what}: spec.type {shown}", ", ".join(TYPES)
        )
        return None
    what += f" ({quota_type})"
    entity = _entity(r, what, spec, shape, problems)
    configs = field(spec, "configs")
    if configs is None:
        problems.add(r.at(spec), f"{what}: no spec.configs", "configs: {producerByteRate: ...}")
        return None
    values = quotas_block(r, configs, f"{what}: spec.configs", CONFIGS, problems)
    if entity is None or values is None or not ok:
        return None
    if not values:
        problems.warn(r.at(configs), f"{what}: spec.configs sets nothing, so nothing is imported")
        return None
    return Declared(entity, values, r.at(), what)


def _entity(
    r: Resource, what: str, spec: MapNode, shape: dict[str, str], problems: Problems
) -> Entity | None:
    node = field(spec, "entity")
    given: dict[str, tuple[str | None, Node]] = {}
    if node is not None and not isinstance(node, MapNode):
        problems.add(r.at(node), f"{what}: spec.entity is {describe(node)}", "a mapping")
        return None
    ok = True
    if isinstance(node, MapNode):
        allowed = {f: t for t, f in _ENTITY_FIELDS.items()}
        for key, v in fields(r, node, f"{what}: spec.entity", problems):
            etype = allowed.get(key)
            if etype is None:
                problems.add(
                    r.at(v),
                    f"{what}: spec.entity.{safe_text(key)} is not a Jikkou field",
                    "user, clientId",
                )
                ok = False
                continue
            given[etype] = (text(v), v)
    parts: dict[str, str | None] = {}
    for etype, fname in _ENTITY_FIELDS.items():
        want = shape.get(etype)
        name, at_node = given.get(etype, (None, node or spec))
        where = r.at(at_node)
        if want == _NAMED:
            if name and TEMPLATE in name:
                problems.add(
                    where, f"{what}: spec.entity.{fname} is a template expression", RENDER_FIRST
                )
                ok = False
            elif not name:
                problems.add(
                    where,
                    f"{what}: spec.entity.{fname} is missing or empty",
                    f"the {etype} name this type needs",
                )
                ok = False
            else:
                parts[etype] = name
        elif etype in given:
            why = "takes the default" if want == _DEFAULT else "has no " + etype
            problems.add(
                where,
                f"{what}: spec.entity.{fname} is set, but this type {why} "
                "(Jikkou would ignore the name)",
                "leave it out, or pick the type that names it",
            )
            ok = False
        elif want == _DEFAULT:
            parts[etype] = None
    return Entity.of(parts) if ok else None
