"""Jikkou KafkaClientQuota resources: each quota type, each field, each refusal."""

from __future__ import annotations

import pytest
from migrate_helpers import EXPECTED, convert, samples

from kquota.migrate import jikkou
from kquota.model import Entity

HEAD = "apiVersion: kafka.jikkou.io/v1beta2\nkind: KafkaClientQuota\nspec:\n"


def _quota(body: str) -> str:
    return HEAD + body


def test_samples_map_every_quota_type_and_the_list() -> None:
    got = convert(jikkou.convert, *samples("jikkou"))
    assert got.problems == []
    assert got.state == EXPECTED["jikkou"]
    assert got.warnings == ["jikkou/quotas.yaml:56:1: skipped: kafka.jikkou.io/v1beta2 KafkaTopic"]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2", "v1"])
def test_every_published_version_is_read(version: str) -> None:
    text = _quota("  type: CLIENT\n  entity: {clientId: c}\n  configs: {producerByteRate: 1}\n")
    got = convert(jikkou.convert, ("q.yaml", text.replace("v1beta2", version)))
    assert got.state == {Entity.of({"client-id": "c"}): {"producer_byte_rate": 1.0}}


BAD = [
    (
        "  type: USERS_CLIENTS\n  configs: {producerByteRate: 1}\n",
        "q.yaml:4:9: KafkaClientQuota: spec.type USERS_CLIENTS; allowed: USERS_DEFAULT, USER, "
        "USER_CLIENT, USER_ALL_CLIENTS, CLIENT, CLIENTS_DEFAULT",
    ),
    (
        "  configs: {producerByteRate: 1}\n",
        "q.yaml:4:3: KafkaClientQuota: spec.type missing",
    ),
    (
        "  type: USER\n  configs: {producerByteRate: 1}\n",
        "q.yaml:4:3: KafkaClientQuota (USER): spec.entity.user is missing or empty",
    ),
    (
        "  type: USER_CLIENT\n  entity: {user: u, clientId: ''}\n"
        "  configs: {producerByteRate: 1}\n",
        "q.yaml:5:31: KafkaClientQuota (USER_CLIENT): spec.entity.clientId is missing or empty",
    ),
    (
        "  type: USERS_DEFAULT\n  entity: {user: u}\n  configs: {producerByteRate: 1}\n",
        "q.yaml:5:18: KafkaClientQuota (USERS_DEFAULT): spec.entity.user is set, but this type "
        "takes the default (Jikkou would ignore the name)",
    ),
    (
        "  type: USER\n  entity: {user: u, clientId: c}\n  configs: {producerByteRate: 1}\n",
        "q.yaml:5:31: KafkaClientQuota (USER): spec.entity.clientId is set, but this type has no "
        "client-id",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c, group: g}\n  configs: {producerByteRate: 1}\n",
        "q.yaml:5:32: KafkaClientQuota (CLIENT): spec.entity.group is not a Jikkou field",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c}\n  configs: {controllerMutationRate: 1}\n",
        "q.yaml:6:37: KafkaClientQuota (CLIENT): spec.configs.controllerMutationRate: not a field "
        "the source defines here; allowed: producerByteRate, consumerByteRate, requestPercentage",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c}\n  configs: {producerByteRate: 1.5}\n",
        "q.yaml:6:31: KafkaClientQuota (CLIENT): spec.configs.producerByteRate: must be a whole "
        "number",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c}\n"
        "  configs: {producerByteRate: '{{ values.rate }}'}\n",
        "q.yaml:6:31: KafkaClientQuota (CLIENT): spec.configs.producerByteRate: '{{ values.rate "
        "}}' is a template expression; allowed: the rendered value: render the templates first "
        "(jikkou prepare) and import that",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: '{{ values.client }}'}\n"
        "  configs: {producerByteRate: 1}\n",
        "q.yaml:5:22: KafkaClientQuota (CLIENT): spec.entity.clientId is a template expression",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c}\n",
        "q.yaml:4:3: KafkaClientQuota (CLIENT): no spec.configs",
    ),
    (
        "  type: CLIENT\n  entity: {clientId: c}\n  configs: {}\n  labels: {}\n",
        "q.yaml:7:11: KafkaClientQuota: spec.labels is not a Jikkou field",
    ),
    (
        "  type: CLIENT\n  entity: c\n  configs: {producerByteRate: 1}\n",
        "q.yaml:5:11: KafkaClientQuota (CLIENT): spec.entity is a string; allowed: a mapping",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD)
def test_each_bad_field_is_refused_with_its_position(body: str, message: str) -> None:
    got = convert(jikkou.convert, ("q.yaml", _quota(body)))
    assert len(got.problems) == 1, got.problems
    assert got.problems[0].startswith(message), got.problems[0]
    assert got.state == {}


def test_empty_configs_import_nothing_with_a_note() -> None:
    got = convert(jikkou.convert, ("q.yaml", _quota("  type: CLIENTS_DEFAULT\n  configs: {}\n")))
    assert got.problems == [] and got.state == {}
    assert got.warnings == [
        "q.yaml:5:12: KafkaClientQuota (CLIENTS_DEFAULT): spec.configs sets nothing, "
        "so nothing is imported"
    ]


def test_one_entity_twice_is_refused_saying_whether_values_conflict() -> None:
    one = _quota("  type: CLIENT\n  entity: {clientId: c}\n  configs: {producerByteRate: 1}\n")
    two = one.replace("producerByteRate: 1}", "producerByteRate: 2, consumerByteRate: 3}")
    got = convert(jikkou.convert, ("a.yaml", one), ("b.yaml", one), ("c.yaml", two))
    assert got.problems == [
        "b.yaml:1:1: KafkaClientQuota (CLIENT): {client-id=c} is declared again, with the same "
        "values; first declared by KafkaClientQuota (CLIENT) at a.yaml:1:1; allowed: one "
        "declaration per entity: remove or merge the other",
        "c.yaml:1:1: KafkaClientQuota (CLIENT): {client-id=c} is declared again, with "
        "conflicting values (consumer_byte_rate unset there, 3 here; producer_byte_rate 1 "
        "there, 2 here); first declared by KafkaClientQuota (CLIENT) at a.yaml:1:1; allowed: "
        "one declaration per entity: remove or merge the other",
    ]


def test_a_list_item_takes_the_lists_kind_and_may_name_its_own() -> None:
    text = (
        "apiVersion: kafka.jikkou.io/v1\nkind: KafkaClientQuotaList\nitems:\n"
        "  - spec: {type: CLIENT, entity: {clientId: a}, configs: {producerByteRate: 1}}\n"
        "  - kind: KafkaTopic\n    spec: {}\n"
        "  - kind: KafkaClientQuotaList\n    items: []\n"
    )
    got = convert(jikkou.convert, ("l.yaml", text))
    assert got.state == {Entity.of({"client-id": "a"}): {"producer_byte_rate": 1.0}}
    assert got.warnings == ["l.yaml:5:5: skipped: kafka.jikkou.io/v1 KafkaTopic"]
    assert got.problems == [
        "l.yaml:7:5: an item of KafkaClientQuotaList that is not a resource; allowed: a "
        "resource: a mapping with apiVersion, kind, metadata and spec"
    ]
