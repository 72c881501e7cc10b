"""Strimzi KafkaUser quotas and Kafka user defaults: every field mapped, or refused where."""

from __future__ import annotations

import pytest
from migrate_helpers import EXPECTED, convert, samples

from kquota.migrate import strimzi
from kquota.model import Entity

USER = "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaUser\nmetadata:\n  name: {name}\n"


def _user(spec: str, name: str = "app") -> str:
    return USER.format(name=name) + "spec:\n" + spec


def test_samples_map_every_user_and_the_defaults() -> None:
    got = convert(strimzi.convert, *samples("strimzi"))
    assert got.problems == []
    assert got.state == EXPECTED["strimzi"]
    assert got.warnings == [
        "strimzi/list.yaml:16:5: skipped: v1 ConfigMap",
        "strimzi/users.yaml:79:1: skipped: kafka.strimzi.io/v1beta2 KafkaTopic",
    ]


@pytest.mark.parametrize(
    ("auth", "principal"),
    [
        ("  authentication: {type: tls}\n", "CN=app"),
        ("  authentication: {type: tls-external}\n", "CN=app"),
        ("  authentication: {type: scram-sha-512}\n", "app"),
        ("  authentication: null\n", "app"),
        ("", "app"),
    ],
)
def test_the_principal_follows_the_authentication_type(auth: str, principal: str) -> None:
    got = convert(strimzi.convert, ("u.yaml", _user(auth + "  quotas: {producerByteRate: 1}\n")))
    assert got.problems == []
    assert got.state == {Entity.of({"user": principal}): {"producer_byte_rate": 1.0}}


BAD_USERS = [
    (
        "  authentication: {type: oauth}\n  quotas: {producerByteRate: 1}\n",
        "u.yaml:6:26: KafkaUser app: spec.authentication.type oauth: not a type whose user name "
        "is known; allowed: tls, tls-external, scram-sha-512, or no authentication",
    ),
    (
        "  authentication: {}\n  quotas: {producerByteRate: 1}\n",
        "u.yaml:6:19: KafkaUser app: spec.authentication.type missing",
    ),
    (
        "  quotas: {producerByteRat: 1}\n",
        "u.yaml:6:29: KafkaUser app: spec.quotas.producerByteRat: not a field the source defines "
        "here; allowed: producerByteRate, consumerByteRate, requestPercentage, "
        "controllerMutationRate",
    ),
    (
        "  quotas: {requestPercentage: 0}\n",
        "u.yaml:6:31: KafkaUser app: spec.quotas.requestPercentage: must be greater than 0",
    ),
    (
        "  quotas: {producerByteRate: 2147483648}\n",
        "u.yaml:6:30: KafkaUser app: spec.quotas.producerByteRate: 2147483648 does not fit a "
        "32-bit integer; allowed: a whole number from 1 to 2147483647",
    ),
    (
        "  quotas: {requestPercentage: 12.5}\n",
        "u.yaml:6:31: KafkaUser app: spec.quotas.requestPercentage: 12.5 is not a whole number "
        "(a 32-bit integer in the source)",
    ),
    (
        "  quotas: {consumerByteRate: '1024'}\n",
        "u.yaml:6:30: KafkaUser app: spec.quotas.consumerByteRate: '1024' is a string, not a "
        "number",
    ),
    (
        "  quotas: {consumerByteRate: [1]}\n",
        "u.yaml:6:30: KafkaUser app: spec.quotas.consumerByteRate is a list; allowed: a number",
    ),
    (
        "  quotas: {controllerMutationRate: .nan}\n",
        "u.yaml:6:36: KafkaUser app: spec.quotas.controllerMutationRate: NaN is not a quota value",
    ),
    (
        "  quotas: {producerByteRate: 1, producerByteRate: 2}\n",
        "u.yaml:6:33: KafkaUser app: spec.quotas: producerByteRate is written twice",
    ),
    ("  quotas: 5\n", "u.yaml:6:11: KafkaUser app: spec.quotas is an integer; allowed: a mapping"),
]


@pytest.mark.parametrize(("spec", "message"), BAD_USERS)
def test_each_bad_user_field_is_refused_with_its_position(spec: str, message: str) -> None:
    got = convert(strimzi.convert, ("u.yaml", _user(spec)))
    assert len(got.problems) == 1, got.problems
    assert got.problems[0].startswith(message), got.problems[0]
    assert got.state == {}


def test_null_quota_fields_are_unset_as_strimzi_reads_them() -> None:
    text = _user("  quotas: {producerByteRate: ~, consumerByteRate: 5}\n")
    got = convert(strimzi.convert, ("u.yaml", text))
    assert got.state == {Entity.of({"user": "app"}): {"consumer_byte_rate": 5.0}}


KAFKA = "apiVersion: kafka.strimzi.io/v1beta2\nkind: Kafka\nmetadata: {name: c}\nspec:\n  kafka:\n"


def test_the_strimzi_quota_plugin_is_refused_with_the_reason() -> None:
    text = KAFKA + "    quotas: {type: strimzi, producerByteRate: 1000, excludedPrincipals: [a]}\n"
    got = convert(strimzi.convert, ("k.yaml", text))
    assert got.problems == [
        "k.yaml:6:20: Kafka c: spec.kafka.quotas.type strimzi is the Strimzi quota plugin, whose "
        "cluster-wide limits, disk guard and excluded principals Kafka's client quotas cannot "
        "express; allowed: type: kafka (Kafka's built-in quotas), or leave the Kafka resource out"
    ]


def test_kafka_defaults_refuse_an_unknown_plugin_and_note_a_missing_block() -> None:
    got = convert(strimzi.convert, ("k.yaml", KAFKA + "    quotas: {type: custom}\n"))
    assert got.problems == [
        "k.yaml:6:20: Kafka c: spec.kafka.quotas.type custom is not known; "
        "allowed: kafka (Kafka's built-in quotas)"
    ]
    got = convert(strimzi.convert, ("k.yaml", KAFKA + "    replicas: 3\n"))
    assert got.problems == [] and got.state == {}
    assert got.warnings == [
        "k.yaml:1:1: Kafka c: no spec.kafka.quotas, so no user defaults to import"
    ]


def test_resources_of_two_clusters_are_refused() -> None:
    other = _user("  quotas: {producerByteRate: 1}\n").replace(
        "metadata:\n  name: app\n", "metadata:\n  name: app\n  labels: {strimzi.io/cluster: d}\n"
    )
    got = convert(
        strimzi.convert, ("k.yaml", KAFKA + "    quotas: {type: kafka}\n"), ("u.yaml", other)
    )
    assert got.problems == [
        "u.yaml:1:1: KafkaUser of Strimzi cluster d, but the inputs also hold cluster c "
        "(at k.yaml:1:1); allowed: the resources of one Strimzi cluster per import"
    ]


def test_versions_names_and_documents_that_are_not_resources() -> None:
    got = convert(
        strimzi.convert,
        ("a.yaml", _user("  quotas: {producerByteRate: 1}\n").replace("v1beta2", "v1alpha1")),
        ("b.yaml", "apiVersion: kafka.strimzi.io/v1\nkind: KafkaUser\nspec: {}\n"),
        ("c.yaml", "- just\n- a list\n"),
        ("d.yaml", "apiVersion: v1\nkind: List\nitems: [3]\n"),
        ("e.yaml", "kind: KafkaUser\n"),
        ("f.yaml", "a: [\n"),
    )
    assert got.problems == [
        "a.yaml:1:1: KafkaUser: apiVersion kafka.strimzi.io/v1alpha1 is not one kquota reads; "
        "allowed: kafka.strimzi.io/v1beta1, kafka.strimzi.io/v1beta2, kafka.strimzi.io/v1",
        "b.yaml:1:1: KafkaUser without metadata.name; allowed: a named resource",
        "c.yaml:1:1: a list is not a resource; allowed: a resource: a mapping with apiVersion, "
        "kind, metadata and spec",
        "d.yaml:3:9: an integer in List items; allowed: a resource: a mapping with apiVersion, "
        "kind, metadata and spec",
        "e.yaml:1:1: a document without apiVersion and kind; allowed: a resource: a mapping "
        "with apiVersion, kind, metadata and spec",
        "f.yaml:2:1: invalid YAML: while parsing a flow node did not find expected node "
        "content; allowed: YAML",
    ]


def test_a_yaml_bomb_is_refused_at_the_alias_that_crosses_the_bound() -> None:
    # Nine levels of nine aliases: expanded, 9**9 (387 million) strings. Aliases are shared
    # nodes, never expanded, but what they stand for is counted as a walk would visit it:
    # past MAX_ALIAS_NODES the file is refused where it crossed the bound, as every YAML
    # kquota reads; the other files are still read.
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    bomb = "\n".join("    " + line for line in lines)
    text = _user("  quotas: {producerByteRate: 7}\n").replace(
        "metadata:\n", "metadata:\n  annotations:\n" + bomb + "\n"
    )
    listed = "apiVersion: v1\nkind: List\nextra:\n" + bomb + "\nitems: [*a9, *a9, *a9]\n"
    good = _user("  quotas: {producerByteRate: 7}\n")
    got = convert(strimzi.convert, ("bomb.yaml", text), ("list.yaml", listed), ("good.yaml", good))
    assert got.state == {Entity.of({"user": "app"}): {"producer_byte_rate": 7.0}}
    why = (
        "invalid YAML: aliases stand for more than 1,000,000 nodes (an alias of aliases, "
        "as in a 'billion laughs'); allowed: YAML"
    )
    assert got.problems == [f"bomb.yaml:11:14: {why}", f"list.yaml:10:14: {why}"]


def test_empty_documents_between_separators_are_nothing() -> None:
    text = "---\n---\n" + _user("  quotas: {producerByteRate: 3}\n") + "---\n...\n"
    got = convert(strimzi.convert, ("e.yaml", text))
    assert got.problems == [] and got.warnings == []
    assert got.state == {Entity.of({"user": "app"}): {"producer_byte_rate": 3.0}}


def test_a_tls_user_name_strimzi_refuses_is_refused() -> None:
    name = "u" * 65
    text = _user("  authentication: {type: tls}\n  quotas: {producerByteRate: 1}\n", name)
    got = convert(strimzi.convert, ("u.yaml", text))
    assert got.problems == [
        f"u.yaml:1:1: KafkaUser {name}: a tls user name of 65 characters: Strimzi refuses the "
        "resource (a certificate's CN holds 64), so its quotas were never set; allowed: a name "
        "of at most 64 characters"
    ]
