"""Who a cluster knows, read for ``--impact``: SCRAM users, the principals ACLs name, the
client ids of group members, and the quota callback class each broker runs.

Decisions:

* **Raise, don't hide.** Each lookup returns what it found or raises a :class:`KafkaError`
  saying why it could not look (not authorised, no authorizer, an API the broker lacks);
  :mod:`kquota.principals.live` turns that into a source's report. An error never becomes an
  empty answer here.
* **Groups are read broker by broker.** A broker lists only the groups it coordinates and
  describes only those, so each broker is asked ListGroups and then, on the same connection,
  DescribeGroups (classic-protocol groups) or ConsumerGroupDescribe (KIP-848
  consumer-protocol groups, ``GroupType`` ``consumer`` from ListGroups v5): no
  FindCoordinator round. A group that moved or vanished between the two is left out and
  counted in :attr:`GroupMembers.skipped`. Share and streams groups have describe APIs of
  their own and are counted as skipped too.
* **A member's principal is not on the wire**, only its client id: members give client ids.
* **The quota callback is per broker.** ``client.quota.callback.class`` is a static broker
  setting and a broker describes only its own configs (by its id), so each live broker is
  asked for itself.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kquota.kafka.authz import denial
from kquota.kafka.conn import API_NAMES, BrokerConnection
from kquota.kafka.discovery import NO_TOPICS_REQUEST, join_host_port
from kquota.kafka.errors import (
    CLUSTER_AUTHORIZATION_FAILED,
    SECURITY_DISABLED,
    KafkaApiError,
    error_code,
    error_for,
)
from kquota.kafka.protocol import (
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_ACLS,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    LIST_GROUPS,
    METADATA,
)
from kquota.runtime.deadline import waiting_on

if TYPE_CHECKING:
    from kquota.kafka.admin import AsyncWireAdmin

log = logging.getLogger(__name__)

QUOTA_CALLBACK_KEY = "client.quota.callback.class"
USER_PREFIX = "User:"

_ANY = 1  # ResourceType, PatternType, AclOperation and AclPermissionType all call ANY 1
_BROKER_RESOURCE = 4
_ALL_ACLS: dict[str, Any] = {
    "ResourceTypeFilter": _ANY,
    "ResourceNameFilter": None,
    "PatternTypeFilter": _ANY,
    "PrincipalFilter": None,
    "HostFilter": None,
    "Operation": _ANY,
    "PermissionType": _ANY,
}


@dataclass(frozen=True)
class AclPrincipals:
    """AclPrincipals is what the cluster's ACL bindings name: ``User:NAME`` principals by
    name; whether any binding is for every user (``User:*``, which names nobody); and the
    principals of other types (a custom principal builder's), which quotas cannot match."""

    users: tuple[str, ...]
    wildcard: bool
    other: tuple[str, ...]


@dataclass(frozen=True)
class GroupMembers:
    """GroupMembers is the distinct client ids of the current members of every group, how
    many groups were read, and the groups that could not be (``group: why``)."""

    client_ids: tuple[str, ...]
    groups: int
    skipped: tuple[str, ...]


async def _ask(conn: BrokerConnection, api_key: int, body: Mapping[str, Any]) -> dict[str, Any]:
    with waiting_on(f"{API_NAMES.get(api_key, api_key)} from {conn.shown}"):
        return await conn.request(api_key, body)


def _failure(core: AsyncWireAdmin, api_key: int, code: int, message: str | None) -> KafkaApiError:
    api = API_NAMES.get(api_key, str(api_key))
    if code == CLUSTER_AUTHORIZATION_FAILED:
        # The broker's text names its internal request object; the denial says it plainly.
        message = f"{error_code(code).message} {denial(api_key, core.config)}"
    elif code == SECURITY_DISABLED:
        message = "the cluster runs no authorizer, so it holds no ACLs to read"
    return error_for(code, message, context=api)


async def scram_users(core: AsyncWireAdmin) -> tuple[str, ...]:
    """scram_users lists the users holding SCRAM credentials, sorted."""
    conn = (await core.broker_connections())[0]
    # Empty, not null, asks for every user: on a denial, Kafka 4.3 and 3.9 build the error
    # answer from the request's list, and a null one fails on the broker (never answered).
    body = await _ask(conn, DESCRIBE_USER_SCRAM_CREDENTIALS, {"Users": []})
    if body["ErrorCode"]:
        raise _failure(
            core, DESCRIBE_USER_SCRAM_CREDENTIALS, body["ErrorCode"], body["ErrorMessage"]
        )
    return tuple(sorted({r["User"] for r in body["Results"] if not r["ErrorCode"]}))


async def acl_principals(core: AsyncWireAdmin) -> AclPrincipals:
    """acl_principals reads every ACL binding and sorts out the principals they name."""
    conn = (await core.broker_connections())[0]
    body = await _ask(conn, DESCRIBE_ACLS, _ALL_ACLS)
    if body["ErrorCode"]:
        raise _failure(core, DESCRIBE_ACLS, body["ErrorCode"], body["ErrorMessage"])
    return split_principals(
        acl["Principal"] for resource in body["Resources"] for acl in resource["Acls"]
    )


def split_principals(principals: Any) -> AclPrincipals:
    """split_principals sorts ACL principal strings into user names, the wildcard, others."""
    users: set[str] = set()
    other: set[str] = set()
    wildcard = False
    for principal in principals:
        if principal == USER_PREFIX + "*":
            wildcard = True
        elif principal.startswith(USER_PREFIX) and len(principal) > len(USER_PREFIX):
            users.add(principal[len(USER_PREFIX) :])
        else:
            other.add(principal)
    return AclPrincipals(tuple(sorted(users)), wildcard, tuple(sorted(other)))


async def group_members(core: AsyncWireAdmin) -> GroupMembers:
    """group_members reads the members of every group at the broker coordinating it."""
    client_ids: set[str] = set()
    skipped: list[str] = []
    groups = 0
    for conn in await core.broker_connections():
        listed = await _ask(conn, LIST_GROUPS, {"StatesFilter": [], "TypesFilter": []})
        if listed["ErrorCode"]:
            raise _failure(core, LIST_GROUPS, listed["ErrorCode"], None)
        classic: list[str] = []
        consumer: list[str] = []
        for g in listed["Groups"]:
            kind = g.get("GroupType", "classic") or "classic"
            if kind == "classic":
                classic.append(g["GroupId"])
            elif kind == "consumer":
                consumer.append(g["GroupId"])
            else:
                skipped.append(f"{g['GroupId']}: a {kind} group, which kquota does not describe")
        described: list[dict[str, Any]] = []
        if classic:
            answer = await _ask(
                conn, DESCRIBE_GROUPS, {"Groups": classic, "IncludeAuthorizedOperations": False}
            )
            described += answer["Groups"]
        if consumer:
            answer = await _ask(
                conn,
                CONSUMER_GROUP_DESCRIBE,
                {"GroupIds": consumer, "IncludeAuthorizedOperations": False},
            )
            described += answer["Groups"]
        for group in described:
            code = group["ErrorCode"]
            if code:
                text = group.get("ErrorMessage") or error_code(code).message
                skipped.append(f"{group['GroupId']}: {text} ({error_code(code).name})")
                continue
            groups += 1
            client_ids.update(m["ClientId"] for m in group["Members"] if m["ClientId"])
    for line in skipped:
        log.info("group skipped: %s", line)
    return GroupMembers(tuple(sorted(client_ids)), groups, tuple(skipped))


async def quota_callbacks(core: AsyncWireAdmin) -> dict[int, str | None]:
    """quota_callbacks is each live broker's ``client.quota.callback.class`` by broker id
    (None: Kafka's default quota computation)."""
    conns = await core.broker_connections()
    metadata = await _ask(conns[0], METADATA, NO_TOPICS_REQUEST)
    ids = {join_host_port(b["Host"], b["Port"]): b["NodeId"] for b in metadata["Brokers"]}
    if len(ids) == 1:
        # One broker: whatever address reached it, it is that broker.
        ids = {conn.address: next(iter(ids.values())) for conn in conns}
    found: dict[int, str | None] = {}
    for conn in conns:
        broker_id = ids.get(conn.address)
        if broker_id is None or broker_id in found:
            continue
        request = {
            "Resources": [
                {
                    "ResourceType": _BROKER_RESOURCE,
                    "ResourceName": str(broker_id),
                    "ConfigurationKeys": [QUOTA_CALLBACK_KEY],
                }
            ],
            "IncludeSynonyms": False,
            "IncludeDocumentation": False,
        }
        body = await _ask(conn, DESCRIBE_CONFIGS, request)
        for result in body["Results"]:
            if result["ErrorCode"]:
                raise _failure(core, DESCRIBE_CONFIGS, result["ErrorCode"], result["ErrorMessage"])
            values = [c["Value"] for c in result["Configs"] if c["Name"] == QUOTA_CALLBACK_KEY]
            found[broker_id] = (values[0] or None) if values else None
    if not found:
        raise KafkaApiError(
            -1, "no live broker could be matched to its id", context="DescribeConfigs"
        )
    return found


def custom_callback(callbacks: Mapping[int, str | None]) -> str | None:
    """custom_callback is the custom callback class the brokers run (several: all named,
    comma-separated), or None when every broker computes quotas Kafka's default way."""
    classes = sorted({c for c in callbacks.values() if c})
    return ", ".join(classes) or None
