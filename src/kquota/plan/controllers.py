"""Other controllers that write or ignore quotas, named before they undo kquota's work
(issue 23 item 2). Pure: what the cluster is (declared in ``kquota.yaml`` or read from the
brokers' settings) and a plan in, notes for the reviewer and drift's classification out.

What the controllers really do (facts from Strimzi's source and tests, not its proposals):

- **Strimzi's Cluster Operator** removes every ``{user=<default>}`` quota on each
  reconciliation unless the ``Kafka`` resource sets ``spec.kafka.quotas.type: kafka``; then it
  writes them itself from that resource. Either way a default set by anyone else does not
  last: it belongs in the ``Kafka`` resource.
- **Strimzi's User Operator** owns the quotas of each ``KafkaUser``: it rewrites the user's
  entity from the resource's ``spec.quotas`` on every reconciliation.
- **A quota callback** other than Kafka's (``client.quota.callback.class``; Strimzi's
  ``io.strimzi.kafka.quotas.StaticQuotaCallback`` ignores per-entity quotas and enforces its
  own per-broker totals) means the stored quotas may not be what the brokers enforce.

A Strimzi-built broker is recognised by its quota callback (``io.strimzi.…``) or by the
listener names the Cluster Operator gives (``REPLICATION-9091`` for brokers among
themselves, ``CONTROLPLANE-9090``), when the plan asks the brokers anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kquota.model import USER, Entity
from kquota.plan.types import Alteration, Plan

STRIMZI_CALLBACK_PREFIX = "io.strimzi."
STATIC_QUOTA_CALLBACK = "io.strimzi.kafka.quotas.StaticQuotaCallback"
STRIMZI_LISTENERS = ("REPLICATION-9091", "CONTROLPLANE-9090")
CLUSTER_OPERATOR = "Strimzi's Cluster Operator"
USER_OPERATOR = "Strimzi's User Operator"
DEFAULT_USER = Entity.of({USER: None})
OWNED_SHOWN = 20
# Strimzi's spec.kafka.quotas (type: kafka) field for each quota key it carries.
_KAFKA_QUOTAS_FIELDS = {
    "producer_byte_rate": "producerByteRate",
    "consumer_byte_rate": "consumerByteRate",
    "request_percentage": "requestPercentage",
    "controller_mutation_rate": "controllerMutationRate",
}
ENFORCES_NOTHING = (
    "these brokers do not enforce per-entity quotas: this plan changes what is stored, not "
    "what is enforced"
)


@dataclass(frozen=True, slots=True)
class Controllers:
    """Controllers is what else manages this cluster's quotas.

    ``strimzi``: why the cluster is taken for Strimzi-managed (None: it is not known to be);
    ``keeps_defaults``: its ``Kafka`` resource sets ``spec.kafka.quotas.type: kafka``;
    ``kafka_users``: users the User Operator owns; ``callback``: the custom quota callback
    the brokers run (None: Kafka's own)."""

    strimzi: str | None = None
    keeps_defaults: bool = False
    kafka_users: frozenset[str] = frozenset()
    callback: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.strimzi or self.kafka_users or self.callback)

    def reverted_by(self, entity: Entity) -> str | None:
        """reverted_by names the controller that undoes kquota's writes to ``entity``."""
        if self.strimzi is not None and entity == DEFAULT_USER:
            return CLUSTER_OPERATOR
        if self.kafka_users and entity.has(USER) and entity.name(USER) in self.kafka_users:
            return USER_OPERATOR
        return None


def strimzi_evidence(
    *,
    declared: str | None,
    callbacks: Iterable[str] = (),
    listeners: Iterable[str] = (),
    inter_broker: Iterable[str] = (),
) -> str | None:
    """strimzi_evidence says why a cluster is taken for Strimzi-managed, or None: declared
    ``platform: strimzi``, a Strimzi quota callback, or the listener names its operator
    gives (``listeners`` are the brokers' ``listeners`` settings, comma-separated)."""
    if declared == "strimzi":
        return "platform: strimzi in kquota.yaml"
    for c in callbacks:
        for one in c.split(","):
            if one.strip().startswith(STRIMZI_CALLBACK_PREFIX):
                return f"the brokers run {one.strip()}"
    names = {n.strip() for n in inter_broker}
    for setting in listeners:
        names |= {item.split("://", 1)[0].strip() for item in setting.split(",")}
    hits = sorted(names & set(STRIMZI_LISTENERS))
    if hits:
        return f"the brokers' listener names ({', '.join(hits)}) are the Cluster Operator's"
    return None


def controller_notes(plan: Plan, controllers: Controllers) -> tuple[str, ...]:
    """controller_notes are the reviewer's notes on what other controllers will do with this
    plan: a default the Cluster Operator removes (and how to move it), entities the User
    Operator owns, a callback that ignores per-entity quotas."""
    notes: list[str] = []
    if controllers.callback is not None:
        notes.append(f"{ENFORCES_NOTHING} (client.quota.callback.class: {controllers.callback})")
    if controllers.strimzi is not None:
        default = next((a for a in plan.alterations if a.entity == DEFAULT_USER and _sets(a)), None)
        if default is not None:
            notes.append(_default_note(default, controllers))
    owned = [a for a in plan.alterations if controllers.reverted_by(a.entity) == USER_OPERATOR]
    for a in owned[:OWNED_SHOWN]:
        notes.append(
            f"{a.entity} is owned elsewhere: {USER_OPERATOR} rewrites it from the KafkaUser "
            f"{a.entity.name(USER)!r} (spec.quotas); change it there"
        )
    if len(owned) > OWNED_SHOWN:
        notes.append(f"… and {len(owned) - OWNED_SHOWN} more entities {USER_OPERATOR} owns")
    return tuple(notes)


def kafka_quotas_spec(values: dict[str, float]) -> dict[str, Any]:
    """kafka_quotas_spec is the ``spec.kafka.quotas`` block of Strimzi's ``Kafka`` resource
    that carries these ``{user=<default>}`` values (keys it cannot carry are left out)."""
    spec: dict[str, Any] = {"type": "kafka"}
    for key, field_name in _KAFKA_QUOTAS_FIELDS.items():
        if key in values:
            v = values[key]
            spec[field_name] = int(v) if v.is_integer() else v
    return spec


def _sets(a: Alteration) -> bool:
    return any(not op.remove for op in a.ops)


def _default_note(a: Alteration, controllers: Controllers) -> str:
    values = {op.key: op.value for op in a.ops if not op.remove and op.value is not None}
    spec = kafka_quotas_spec(values)
    block = ", ".join(f"{k}: {v}" for k, v in spec.items())
    why = f" ({controllers.strimzi})"
    if controllers.keeps_defaults:
        return (
            f"{CLUSTER_OPERATOR} writes {{user=<default>}} from the Kafka resource "
            f"(spec.kafka.quotas.type: kafka){why}: a value set here is overwritten on its next "
            f"reconciliation; set it there instead: spec.kafka.quotas: {{{block}}}"
        )
    return (
        f"{CLUSTER_OPERATOR} removes {{user=<default>}} quotas on every reconciliation{why}: "
        "this change will not last. Move it into the Kafka resource: "
        f"spec.kafka.quotas: {{{block}}} (docs/migrate.md)"
    )


def observe_note(observed: int, *, whole_cluster: bool) -> str:
    """observe_note tells the reviewer that apply will refuse: the cluster, or ``observed``
    entities of this plan, are in observe mode (another tool still writes them)."""
    if whole_cluster:
        return "observe mode (policy.mode: observe): plan only; apply refuses this cluster"
    return (
        f"observe mode (policy.observe): this plan alters {observed} entities in an observed "
        "scope; apply refuses it"
    )
