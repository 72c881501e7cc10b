"""The JSON Schema of ``kquota.yaml``, generated from its pydantic models
(:mod:`kquota.config.project`) with a description for every field, for editors
(yaml-language-server) and CI.

``python -m kquota.config.schema > docs/kquota-config.schema.json`` writes the committed copy;
tests/config/test_config_schema.py holds the two equal and the reference page
(docs/kquota-yaml.md) to the same fields.
"""

from __future__ import annotations

import json
from typing import Any

from kquota.config.project import ProjectConfig

_ENTITY_MATCH = {
    "type": "object",
    "minProperties": 1,
    "propertyNames": {"enum": ["user", "client-id", "ip"]},
    "additionalProperties": {"type": "string"},
}

DESCRIPTIONS: dict[str, str] = {
    "clusters": "The clusters this repository manages, by name (--cluster NAME).",
    "rollout": "The waves of kquota fleet apply, in order: the clusters of each (names or "
    "globs), how many at once (max_parallel) and how long drift must stay clean after it "
    "(soak) (docs/rollout.md).",
    "kafka": "Kafka client properties as Kafka's tools name them (bootstrap.servers, "
    "security.protocol, sasl.*, ssl.*); values are strings, ${VAR} is read from the "
    "environment when kquota connects to this cluster ($${ is a literal ${). Secrets belong "
    "in ${VAR}s, never in the file.",
    "desired": "Desired-state files or folders, relative to this file.",
    "audit_topic": "An existing topic apply publishes one audit event per committed entity to.",
    "audit_signing": "The keys audit events are signed (HMAC-SHA256) and verified with: key_id "
    "signs new events, keys maps each key id to a ${VAR} holding a key of at least 32 bytes; "
    "revert refuses events that do not verify (docs/rollout.md).",
    "policy": "What this repository owns on the cluster, and how much a plan may remove.",
    "scope": 'Ownership: "all", or matches such as {user: "team-*"} (* matches any run of '
    "characters; <default> the default entity).",
    "prune": "Remove in-scope entities no file declares (off: they are left alone).",
    "max_removals": "The mass-removal guard: a plan removing more quota values (one key of one "
    "entity each, not entities) stops.",
    "max_removal_fraction": "The mass-removal guard: a plan removing more than this fraction "
    "of the managed quota values stops.",
    "protect": "Principals a plan may not throttle harder without --allow-protected-change, "
    'as matches ({user: "svc-*"}, {user: alice, client-id: app}).',
    "usage": "When the throttle replay stops a plan: max_throttled_fraction, the largest share "
    "of the observed time plan --usage may newly throttle a principal for "
    "(--allow-throttling overrides; docs/usage.md).",
    "quota_window": "The brokers' quota.window.num and quota.window.size.seconds, for plan "
    "--usage's throttle replay when the brokers cannot be asked (docs/usage.md).",
    "mode": "manage (the default) or observe: plan, drift and export as usual, apply refuses "
    "(for a cluster another tool still writes to).",
    "observe": "Ownership scopes in observe mode (matches as in scope): apply refuses to alter "
    "them.",
    "ramp": "How gently apply --ramp lowers a quota: each step to at least max_step of the "
    "value before it (docs/rollout.md).",
    "platform": "Who else writes quotas here: kafka, or strimzi (its operators remove or own "
    "some quotas; docs/capacity.md).",
    "strimzi_quotas_type": "The Kafka resource's spec.kafka.quotas.type (kafka: the Cluster "
    "Operator writes {user=<default>} from it rather than removing it).",
    "kafka_users": "Users whose quotas Strimzi's User Operator owns (KafkaUser resources).",
}
"""Descriptions by field name; ``capacity`` means one thing on a cluster and another in its
policy, so those two are in :data:`BY_PLACE`."""

BY_PLACE: dict[tuple[str, str], str] = {
    ("cluster", "capacity"): "One broker's capacity in bytes per second (ingress, egress, "
    "optional disk_write; 100MiB/s or a number): plan's capacity section (docs/capacity.md).",
    ("policy", "capacity"): "When oversubscription stops a plan: max_oversubscription, the "
    "highest ratio of summed quotas to capacity a plan may raise a key past "
    "(--allow-oversubscription overrides).",
}


def json_schema() -> dict[str, Any]:
    """json_schema is kquota.yaml's schema."""
    # Unlike desired state, kquota.yaml's loader takes null where a field is optional
    # (audit_topic: with no value is none), so the schema keeps pydantic's null.
    schema = ProjectConfig.model_json_schema(by_alias=True)
    defs = schema["$defs"]
    schema["properties"]["clusters"]["description"] = DESCRIPTIONS["clusters"]
    schema["properties"]["clusters"]["minProperties"] = 1
    cluster = defs["ClusterConfig"]["properties"]
    cluster["kafka"]["required"] = ["bootstrap.servers"]
    cluster["desired"]["default"] = ["quotas"]
    cluster["desired"]["items"]["minLength"] = 1
    policy = defs["PolicyConfig"]["properties"]
    policy["scope"]["anyOf"][1]["items"] = dict(_ENTITY_MATCH)
    policy["scope"]["anyOf"][1]["minItems"] = 1
    policy["protect"]["items"] = dict(_ENTITY_MATCH)
    schema["properties"]["rollout"]["description"] = DESCRIPTIONS["rollout"]
    for place, props in (("cluster", cluster), ("policy", policy)):
        for name, rule in props.items():
            rule.pop("title", None)
            rule["description"] = BY_PLACE.get((place, name)) or DESCRIPTIONS[name]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/kquota/kquota/blob/main/docs/kquota-config.schema.json",
        **schema,
        "title": "kquota.yaml",
    }


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
