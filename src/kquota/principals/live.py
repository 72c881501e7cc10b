"""Principal discovery from a live cluster (issue 13): SCRAM users, ACL principals, the
client ids of consumer-group members, and the broker's custom quota callback.

Each source is looked up on its own, under a deadline of its own within the command's: a
source that cannot look (not authorised, no authorizer, an API the broker lacks, no answer
in time) says why in its report and the others still run. The RPCs are in
:mod:`kquota.kafka.principal_rpcs`; see docs/impact-discovery.md for what each needs.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from kquota.kafka import principal_rpcs as rpcs
from kquota.kafka.errors import KafkaError
from kquota.plan.resolver import Principal, unique_principals
from kquota.principals.model import Discovery, SourceReport
from kquota.runtime.deadline import DeadlineExceeded, bounded, current

if TYPE_CHECKING:
    from kquota.kafka.admin import AsyncWireAdmin, WireAdmin

T = TypeVar("T")

SOURCES = ("scram-users", "acl-principals", "group-members")
CALLBACK_SOURCE = "quota-callback"
SOURCE_SECONDS = 30.0
"""Each source's bound (capped by the command's deadline): a cluster with many groups is
read in well under a second a broker; a broker that does not answer costs one source, not
the plan."""
_SKIPPED_SHOWN = 3
_PARTIAL_GROUPS = (
    "without DESCRIBE on the CLUSTER, the brokers list only the groups this principal may "
    "describe; there may be more"
)


def discover(admin: WireAdmin) -> Discovery:
    """discover asks the cluster behind ``admin`` who it serves; each source reports how
    many it found or why it could not look, never an empty list in silence."""
    principals: list[Principal] = []
    reports: list[SourceReport] = []

    users, reason = _look(admin, "scram-users", rpcs.scram_users)
    reports.append(SourceReport("scram-users", None if users is None else len(users), reason))
    principals += (Principal(user=u) for u in users or ())

    acls, reason = _look(admin, "acl-principals", rpcs.acl_principals)
    if acls is None:
        reports.append(SourceReport("acl-principals", None, reason))
    else:
        reports.append(SourceReport("acl-principals", len(acls.users), None, _acl_note(acls)))
        principals += (Principal(user=u) for u in acls.users)

    members, reason = _look(admin, "group-members", rpcs.group_members)
    if members is None:
        reports.append(SourceReport("group-members", None, reason))
    else:
        note = _skipped_note(members.skipped)
        if users is None and "CLUSTER_AUTHORIZATION_FAILED" in (reports[0].reason or ""):
            # ListGroups is not refused without DESCRIBE on the cluster: it lists only the
            # groups the principal may describe. Say so rather than pass the count as whole.
            note = "; ".join(filter(None, [_PARTIAL_GROUPS, note]))
        reports.append(SourceReport("group-members", len(members.client_ids), None, note))
        principals += (Principal(client_id=c) for c in members.client_ids)

    callbacks, reason = _look(admin, CALLBACK_SOURCE, rpcs.quota_callbacks)
    if callbacks is None:
        reports.append(SourceReport(CALLBACK_SOURCE, None, reason))
    callback = None if callbacks is None else rpcs.custom_callback(callbacks)
    return Discovery(unique_principals(principals), tuple(reports), callback)


def quota_callback(admin: WireAdmin) -> tuple[str | None, str | None]:
    """quota_callback is the custom quota callback the brokers run (None: Kafka's default),
    and why it could not be read (then the first is None too)."""
    callbacks, reason = _look(admin, CALLBACK_SOURCE, rpcs.quota_callbacks)
    return (None if callbacks is None else rpcs.custom_callback(callbacks)), reason


def _look(
    admin: WireAdmin, source: str, job: Callable[[AsyncWireAdmin], Coroutine[Any, Any, T]]
) -> tuple[T | None, str | None]:
    try:
        with bounded(SOURCE_SECONDS, f"{source} lookup"):
            return admin.run(job), None
    except KafkaError as e:
        return None, str(e)
    except DeadlineExceeded as e:
        outer = current()
        if outer is not None and outer.expired:
            raise  # the command's own deadline: nothing more can be asked
        return None, str(e)


def _acl_note(acls: rpcs.AclPrincipals) -> str | None:
    notes = []
    if acls.wildcard:
        notes.append("bindings for User:* apply to every user and name nobody to resolve")
    if acls.other:
        shown = ", ".join(acls.other[:_SKIPPED_SHOWN])
        more = len(acls.other) - _SKIPPED_SHOWN
        tail = f" and {more} more" if more > 0 else ""
        notes.append(f"principals that are not users, which quotas never match: {shown}{tail}")
    return "; ".join(notes) or None


def _skipped_note(skipped: tuple[str, ...]) -> str | None:
    if not skipped:
        return None
    shown = "; ".join(skipped[:_SKIPPED_SHOWN])
    more = len(skipped) - _SKIPPED_SHOWN
    tail = f"; and {more} more" if more > 0 else ""
    return f"{len(skipped)} group(s) not read: {shown}{tail}"
