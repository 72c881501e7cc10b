"""Strimzi ``KafkaUser`` quotas and the ``Kafka`` resource's user defaults, as kquota entities.

Published schema and behaviour this follows (Strimzi "Configuring" reference and the User
Operator's source):

- KafkaUserQuotas, https://strimzi.io/docs/operators/latest/configuring.html#type-KafkaUserQuotas-reference:
  ``producerByteRate``, ``consumerByteRate``, ``requestPercentage`` (integer: Java Integer,
  32 bits) and ``controllerMutationRate`` (number), minimum 0. The User Operator sets them as
  Kafka's ``producer_byte_rate``, ``consumer_byte_rate``, ``request_percentage`` and
  ``controller_mutation_rate`` on the entity ``user=<user name>``.
- The user name depends on ``spec.authentication.type`` (KafkaUserSpec reference, and
  ``KafkaUserModel.getUserName`` in strimzi-kafka-operator): ``tls`` and ``tls-external``
  users are ``CN=<metadata.name>`` (the subject of the certificate the operator issues, which
  Kafka's default principal builder takes whole); ``scram-sha-512`` users, and users without
  ``authentication``, are ``<metadata.name>``. The operator writes quotas for users without
  authentication too (for principals from OAuth or a custom authenticator).
- QuotasPluginKafka, https://strimzi.io/docs/operators/latest/configuring.html#type-QuotasPluginKafka-reference:
  ``spec.kafka.quotas`` with ``type: kafka`` sets default quotas for every user, which the
  cluster operator writes to the ``user=<default>`` entity (``producerByteRate`` and
  ``consumerByteRate`` Long, ``requestPercentage`` Integer, ``controllerMutationRate``
  number). ``type: strimzi`` (QuotasPluginStrimzi) is a broker plugin with its own callback
  (cluster-wide byte rates, a disk guard, excluded principals): Kafka's client quotas cannot
  express it, so it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.desired.nodes import MapNode
from kquota.desired.problems import Problems, SourceLocation
from kquota.display import safe_text
from kquota.migrate.common import Declared, SourceNumber
from kquota.migrate.manifests import Resource, field, quotas_block, resources_of, text, value
from kquota.model import USER, Entity

GROUP = "kafka.strimzi.io"
VERSIONS = ("v1beta1", "v1beta2", "v1")

USER_QUOTAS = {
    "producerByteRate": ("producer_byte_rate", SourceNumber.INT32),
    "consumerByteRate": ("consumer_byte_rate", SourceNumber.INT32),
    "requestPercentage": ("request_percentage", SourceNumber.INT32),
    "controllerMutationRate": ("controller_mutation_rate", SourceNumber.DOUBLE),
}
"""KafkaUserQuotas: field -> (Kafka quota key, the schema's type)."""

DEFAULT_QUOTAS = {
    "producerByteRate": ("producer_byte_rate", SourceNumber.INT64),
    "consumerByteRate": ("consumer_byte_rate", SourceNumber.INT64),
    "requestPercentage": ("request_percentage", SourceNumber.INT32),
    "controllerMutationRate": ("controller_mutation_rate", SourceNumber.DOUBLE),
}
"""QuotasPluginKafka (``type: kafka``): field -> (Kafka quota key, the schema's type)."""

TLS_TYPES = ("tls", "tls-external")
MAX_TLS_NAME = 64
"""Strimzi refuses ``tls`` users with longer names (``KafkaUserModel.validateTlsUsername``)."""
PLAIN_TYPES = ("scram-sha-512",)
_AUTH_HELP = "tls, tls-external, scram-sha-512, or no authentication"
_CLUSTER_LABEL = "strimzi.io/cluster"


def convert(files: Sequence[tuple[str, bytes]], problems: Problems) -> list[Declared]:
    """convert reads Strimzi resources; other kinds are skipped with a note."""
    declared: list[Declared] = []
    clusters: dict[str, SourceLocation] = {}
    kinds = ("KafkaUser", "Kafka")
    for r in resources_of(files, {"List": None}, GROUP, kinds, VERSIONS, problems):
        name = text(field(r.node, "metadata", "name"))
        if not name:
            problems.add(r.at(), f"{r.kind} without metadata.name", "a named resource")
            continue
        if r.kind == "Kafka":
            _cluster(clusters, name, r, problems)
            found = _defaults(r, name, problems)
        else:
            label = text(field(r.node, "metadata", "labels", _CLUSTER_LABEL))
            if label is not None:
                _cluster(clusters, label, r, problems)
            found = _user(r, name, problems)
        if found is not None:
            declared.append(found)
    return declared


def _user(r: Resource, name: str, problems: Problems) -> Declared | None:
    what = f"KafkaUser {safe_text(name)}"
    auth = field(r.node, "spec", "authentication")
    auth_type = text(field(auth, "type"))
    if auth is None or value(auth) is None:
        principal = name  # no authentication: the operator still sets quotas on the name
    elif auth_type in TLS_TYPES:
        if auth_type == "tls" and len(name) > MAX_TLS_NAME:
            problems.add(
                r.at(),
                f"{what}: a tls user name of {len(name)} characters: Strimzi refuses the "
                "resource (a certificate's CN holds 64), so its quotas were never set",
                f"a name of at most {MAX_TLS_NAME} characters",
            )
            return None
        principal = f"CN={name}"
    elif auth_type in PLAIN_TYPES:
        principal = name
    else:
        shown = "missing" if auth_type is None else safe_text(auth_type)
        problems.add(
            r.at(field(auth, "type") or auth),
            f"{what}: spec.authentication.type {shown}: not a type whose user name is known",
            _AUTH_HELP,
        )
        return None
    quotas = field(r.node, "spec", "quotas")
    if quotas is None:
        return None
    values = quotas_block(r, quotas, f"{what}: spec.quotas", USER_QUOTAS, problems)
    if not values:
        return None
    return Declared(Entity.of({USER: principal}), values, r.at(), what)


def _defaults(r: Resource, name: str, problems: Problems) -> Declared | None:
    what = f"Kafka {safe_text(name)}"
    quotas = field(r.node, "spec", "kafka", "quotas")
    if quotas is None:
        problems.warn(r.at(), f"{what}: no spec.kafka.quotas, so no user defaults to import")
        return None
    plugin = text(field(quotas, "type"))
    if plugin == "strimzi":
        problems.add(
            r.at(field(quotas, "type")),
            f"{what}: spec.kafka.quotas.type strimzi is the Strimzi quota plugin, whose "
            "cluster-wide limits, disk guard and excluded principals Kafka's client quotas "
            "cannot express",
            "type: kafka (Kafka's built-in quotas), or leave the Kafka resource out",
        )
        return None
    if plugin != "kafka":
        problems.add(
            r.at(field(quotas, "type") or quotas),
            f"{what}: spec.kafka.quotas.type {safe_text(plugin or 'missing')} is not known",
            "kafka (Kafka's built-in quotas)",
        )
        return None
    assert isinstance(quotas, MapNode)  # a type was read from it
    rest = MapNode([p for p in quotas.pairs if text(p[0]) != "type"], quotas.line, quotas.col)
    values = quotas_block(r, rest, f"{what}: spec.kafka.quotas", DEFAULT_QUOTAS, problems)
    if not values:
        return None
    return Declared(Entity.of({USER: None}), values, r.at(quotas), what + " (user defaults)")


def _cluster(seen: dict[str, SourceLocation], name: str, r: Resource, problems: Problems) -> None:
    """_cluster refuses inputs that span Strimzi clusters: their quotas live in different
    Kafka clusters, and one desired state describes one."""
    if seen and name not in seen:
        first, at = next(iter(seen.items()))
        problems.add(
            r.at(),
            f"{safe_text(r.kind)} of Strimzi cluster {safe_text(name)}, but the inputs also "
            f"hold cluster {safe_text(first)} (at {at})",
            "the resources of one Strimzi cluster per import",
        )
    seen.setdefault(name, r.at())
