"""Terraform kafka_quota resources from state, plan and tfstate files; every refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from migrate_helpers import EXPECTED, convert, samples

from kquota.migrate import terraform
from kquota.model import Entity


def _state(*resources: dict[str, Any]) -> str:
    return json.dumps(
        {"format_version": "1.0", "values": {"root_module": {"resources": list(resources)}}}
    )


def _quota(values: dict[str, Any], address: str = "kafka_quota.q") -> dict[str, Any]:
    return {
        "address": address,
        "mode": "managed",
        "type": "kafka_quota",
        "name": "q",
        "values": values,
    }


def test_samples_map_state_modules_plan_and_tfstate() -> None:
    got = convert(terraform.convert, *samples("terraform"))
    assert got.problems == []
    assert got.state == EXPECTED["terraform"]
    addresses = {d.what for d in got.declared}
    assert {'kafka_quota.team["analytics"]', "module.defaults.kafka_quota.clients"} <= addresses
    assert "module.edge.kafka_quota.external_ip" in addresses
    assert got.warnings == [
        "terraform/show-plan.json: kafka_quota.legacy: not imported: planned to go (delete)",
        "terraform/show-state.json: skipped resources of other types: kafka_topic x1",
    ]


def test_string_values_are_read_as_terraform_converts_them() -> None:
    text = _state(
        _quota(
            {
                "entity_type": "user",
                "entity_name": "a",
                "config": {"producer_byte_rate": "2500000", "request_percentage": "12.5"},
            }
        )
    )
    got = convert(terraform.convert, ("s.json", text))
    assert got.state == {
        Entity.of({"user": "a"}): {"producer_byte_rate": 2500000.0, "request_percentage": 12.5}
    }


@pytest.mark.parametrize("name", [None, ""])
def test_no_entity_name_is_the_default_entity(name: str | None) -> None:
    text = _state(
        _quota(
            {"entity_type": "client-id", "entity_name": name, "config": {"consumer_byte_rate": 5}}
        )
    )
    got = convert(terraform.convert, ("s.json", text))
    assert got.state == {Entity.of({"client-id": None}): {"consumer_byte_rate": 5.0}}


BAD = [
    (
        {"entity_type": "group", "entity_name": "g", "config": {"producer_byte_rate": 1}},
        "s.json: kafka_quota.q: entity_type 'group'; allowed: user, client-id, ip",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {"connection_creation_rate": 1}},
        "s.json: kafka_quota.q: config.connection_creation_rate: 'connection_creation_rate' is an "
        "ip key, not allowed for user/client-id entities",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {"produce_byte_rate": 1}},
        "s.json: kafka_quota.q: config.produce_byte_rate: unknown quota key 'produce_byte_rate'",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {"producer_byte_rate": "1e"}},
        "s.json: kafka_quota.q: config.producer_byte_rate: '1e' is a string, not a number",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {"producer_byte_rate": 1.5}},
        "s.json: kafka_quota.q: config.producer_byte_rate: must be a whole number",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {"request_percentage": -1}},
        "s.json: kafka_quota.q: config.request_percentage: must be greater than 0",
    ),
    (
        {"entity_type": "user", "entity_name": "a", "config": {}},
        "s.json: kafka_quota.q: config is empty",
    ),
    (
        {"entity_type": "user", "entity_name": 7, "config": {"producer_byte_rate": 1}},
        "s.json: kafka_quota.q: entity_name is not a string",
    ),
    (
        {
            "entity_type": "ip",
            "entity_name": "a",
            "config": {"connection_creation_rate": 1},
            "zone": "x",
        },
        "s.json: kafka_quota.q: attribute zone is not the provider's",
    ),
]


@pytest.mark.parametrize(("values", "message"), BAD)
def test_each_bad_attribute_is_refused_naming_the_resource(
    values: dict[str, Any], message: str
) -> None:
    got = convert(terraform.convert, ("s.json", _state(_quota(values))))
    assert len(got.problems) == 1, got.problems
    assert got.problems[0].startswith(message), got.problems[0]
    assert got.state == {}


def test_a_value_known_only_after_apply_is_refused() -> None:
    change = {
        "address": "kafka_quota.q",
        "mode": "managed",
        "type": "kafka_quota",
        "change": {
            "actions": ["create"],
            "after": {"entity_type": "user", "config": {"producer_byte_rate": 1}},
            "after_unknown": {"entity_name": True},
        },
    }
    text = json.dumps({"format_version": "1.2", "resource_changes": [change]})
    got = convert(terraform.convert, ("p.json", text))
    assert got.problems == [
        "p.json: kafka_quota.q: entity_name is known only after apply; allowed: a plan whose "
        "kafka_quota values are known, or the state after apply"
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"version": 3, "modules": []}', "t.json: a state file version 3 kquota reads"),
        (b'{"format_version": "2.0"}', "t.json: format_version 2.0; allowed"),
        (b"[1, 2]", "t.json: not a Terraform state or plan (not a JSON object)"),
        (b'{"a": 1,\n "b": }', "t.json:2:7: invalid JSON: Expecting value"),
        (b'{"a": NaN}', "t.json: invalid JSON: NaN is not a JSON number"),
        (b"\xff\xfe", "t.json: not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "t.json: invalid JSON:"),
    ],
)
def test_files_that_are_not_terraform_json_are_refused(data: bytes, message: str) -> None:
    got = convert(terraform.convert, ("t.json", data))
    assert len(got.problems) == 1 and got.problems[0].startswith(message), got.problems


def test_the_same_resource_in_state_and_plan_is_declared_twice() -> None:
    text = _state(
        _quota({"entity_type": "user", "entity_name": "a", "config": {"producer_byte_rate": 1}})
    )
    got = convert(terraform.convert, ("a.json", text), ("b.json", text))
    assert got.problems == [
        "b.json: kafka_quota.q: {user=a} is declared again, with the same values; first declared "
        "by kafka_quota.q at a.json; allowed: one declaration per entity: remove or merge the other"
    ]
