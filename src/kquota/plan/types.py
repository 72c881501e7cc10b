"""The Plan and its parts, and the versioned JSON contract they serialise to.

A Plan is canonical: alterations sorted by :meth:`Entity.sort_key`, ops by key, so two plans of
the same inputs are equal and their JSON is byte-identical (octoDNS "consistent ordering").
The JSON form (:meth:`Plan.to_data`) is a public contract with its own ``format_version``,
separate from these classes (Terraform's jsonplan): bump it only for changes that break a
consuming parser; adding optional fields does not.

Renderers read these types and never compute: everything a reviewer sees (change kinds, counts,
the guard verdict) is decided here or by the planner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from kquota.model import Entity
from kquota.plan.resolver import ResolutionChange, ResolvedQuota
from kquota.policy import Removals
from kquota.principal import Principal

if TYPE_CHECKING:
    from kquota.plan.capacity import CapacityReport
    from kquota.plan.replay import ReplayReport

PLAN_FORMAT_VERSION = 1


class ChangeKind(Enum):
    """ChangeKind is what happens to an entity or a key; the value is the display glyph."""

    CREATE = "+"
    UPDATE = "~"
    DELETE = "-"

    @property
    def glyph(self) -> str:
        return self.value

    @property
    def word(self) -> str:
        return _WORDS[self]


_WORDS = {ChangeKind.CREATE: "create", ChangeKind.UPDATE: "update", ChangeKind.DELETE: "delete"}


class IgnoreReason(Enum):
    """IgnoreReason says why the planner left an entity alone."""

    OUT_OF_SCOPE = "out_of_scope"
    """In the snapshot, outside the ownership scope: never touched."""
    DECLARED_OUT_OF_SCOPE = "declared_out_of_scope"
    """Declared in the desired state but outside the scope: a configuration mistake, reported."""
    NOT_DECLARED = "not_declared"
    """In scope and in the snapshot, but no file declares it and prune is off."""


@dataclass(frozen=True, slots=True)
class Op:
    """Op is one quota key change of an alteration: a set (``value``) or a removal.

    ``before`` is the snapshot's value (None when the key is new). An update is a set in
    place; there is never a remove-then-set pair for one key.
    """

    key: str
    value: float | None
    remove: bool
    before: float | None

    @property
    def kind(self) -> ChangeKind:
        if self.remove:
            return ChangeKind.DELETE
        return ChangeKind.CREATE if self.before is None else ChangeKind.UPDATE

    def to_data(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "remove": self.remove, "before": self.before}


@dataclass(frozen=True, slots=True)
class Alteration:
    """Alteration is every op for one entity: one ClientQuotaAlteration, atomic on the broker.

    ``kind`` is CREATE when the entity is not in the snapshot, DELETE when the ops remove every
    key it has (the broker then drops the entity), UPDATE otherwise.
    """

    entity: Entity
    ops: tuple[Op, ...]
    kind: ChangeKind

    def to_data(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_json(),
            "change": self.kind.word,
            "ops": [op.to_data() for op in self.ops],
        }


@dataclass(frozen=True, slots=True)
class IgnoredGroup:
    """IgnoredGroup lists the entities left alone for one reason.

    ``entities`` are in input order (sort with ``sorted_entities`` when showing them); a plan
    read back from JSON only knows ``count``, since the contract carries counts, not names.
    """

    reason: IgnoreReason
    count: int
    entities: tuple[Entity, ...] = ()


class SourceCount(Protocol):
    """SourceCount is what a principal-discovery source reported
    (:class:`kquota.principals.model.SourceReport`): how many it found, or why not."""

    @property
    def source(self) -> str: ...

    @property
    def found(self) -> int | None: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def note(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class PlanImpact:
    """PlanImpact is a plan's blast radius (``--impact``, ``--principals``, protected
    principals): every effective quota of a known principal the plan changes, what each
    discovery source found, the broker's custom quota callback if any, and the protected
    principals' verdict (:mod:`kquota.plan.impact`)."""

    changes: tuple[ResolutionChange, ...]
    sources: tuple[SourceCount, ...] = ()
    principals: int = 0
    """How many principals were resolved (found, listed and protected, each once)."""
    quota_callback: str | None = None
    protected: tuple[str, ...] = ()
    """Why the plan may not be applied: one line per protected principal and key it lowers
    or newly limits. Like the mass-removal guard's verdict it is kept when overridden."""
    protected_change_allowed: bool = False
    resolved: tuple[Principal, ...] = field(default=(), compare=False)
    """The principals resolved (not in the contract beyond ``impact``): what apply resolves
    again against the live cluster to recount the protected principals' verdict."""

    @property
    def stops(self) -> bool:
        return bool(self.protected) and not self.protected_change_allowed

    def to_data(self) -> dict[str, Any]:
        """to_data is the additive part of the plan contract (only when impact was asked)."""
        return {
            "impact": [_change_data(c) for c in self.changes],
            "impact_sources": [_source_data(r) for r in self.sources],
            "impact_principals": self.principals,
            "quota_callback": self.quota_callback,
            "protected_violations": list(self.protected),
            "protected_change_allowed": self.protected_change_allowed,
        }


IMPACT_FIELDS = (
    "impact",
    "impact_sources",
    "impact_principals",
    "quota_callback",
    "protected_violations",
    "protected_change_allowed",
)
"""The plan contract's additive top-level fields, present only when impact was computed."""


def _source_data(r: SourceCount) -> dict[str, Any]:
    data: dict[str, Any] = {"source": r.source, "found": r.found, "reason": r.reason}
    if r.note:  # additive: what a source saw but could not count (e.g. a User:* ACL)
        data["note"] = r.note
    return data


def _change_data(c: ResolutionChange) -> dict[str, Any]:
    principal: dict[str, str] = {}
    for name, value in (("user", c.principal.user), ("client-id", c.principal.client_id)):
        if value is not None:
            principal[name] = value
    if c.principal.ip is not None:
        principal["ip"] = c.principal.ip
    return {
        "principal": principal,
        "key": c.key,
        "before": _resolved_data(c.before),
        "after": _resolved_data(c.after),
    }


def _resolved_data(q: ResolvedQuota | None) -> dict[str, Any]:
    if q is None:
        return {"value": None, "source": None}
    return {"value": q.value, "source": q.source.to_json()}


@dataclass(frozen=True, slots=True)
class Plan:
    """Plan is the reviewed unit of change for one cluster.

    ``guard_violation`` is the mass-removal guard's verdict (None when within limits). When
    ``mass_removal_allowed`` is true the operator overrode it; the message is kept so that
    renderers can still say so. ``applyable`` is what apply must check.
    """

    alterations: tuple[Alteration, ...]
    cluster: str | None = None
    snapshot_fingerprint: str | None = None
    removals: Removals = field(default_factory=Removals)
    guard_violation: str | None = None
    mass_removal_allowed: bool = False
    unchanged: int = 0
    """Declared, in-scope entities that need no change."""
    ignored: tuple[IgnoredGroup, ...] = ()
    # Saved-plan metadata (issue 5). The planner is pure and leaves them None; `plan --out`
    # fills them. They are part of the JSON contract from format_version 1 on, null if unknown.
    cluster_id: str | None = None
    desired_digest: str | None = None
    kquota_version: str | None = None
    created_at: str | None = None
    impact: PlanImpact | None = None
    """The blast radius, when asked for or when principals are protected; None otherwise,
    and then the JSON contract has none of :data:`IMPACT_FIELDS`."""
    capacity: CapacityReport | None = None
    """Capacity and headroom (:mod:`kquota.plan.capacity`), when asked for or declared;
    None otherwise, and then the JSON contract has no ``capacity`` field."""
    controller_notes: tuple[str, ...] = ()
    """What other controllers will do with this plan (:mod:`kquota.plan.controllers`); the
    JSON contract has ``controller_notes`` only when there are some."""
    replay: ReplayReport | None = None
    """The throttle replay of observed usage (:mod:`kquota.plan.replay`, computed by
    :mod:`kquota.usage.replay`, ``plan --usage``); None otherwise, and then the JSON contract
    has no ``throttle_replay`` field."""

    @property
    def empty(self) -> bool:
        """empty: the plan changes nothing."""
        return not self.alterations

    @property
    def applyable(self) -> bool:
        """applyable: no guard holds the plan back (its :attr:`refusal` is None)."""
        guard_ok = self.guard_violation is None or self.mass_removal_allowed
        capacity_ok = self.capacity is None or not self.capacity.stops
        replay_ok = self.replay is None or not self.replay.stops
        impact_ok = self.impact is None or not self.impact.stops
        return guard_ok and capacity_ok and replay_ok and impact_ok

    @property
    def refusal(self) -> str | None:
        """refusal is why this plan may not be applied, headed by the guard that stops it
        (``mass-removal guard: …``, ``protected principals: …``, ``capacity guard: …`` or
        ``throttle guard: …``), or None."""
        if self.guard_violation is not None and not self.mass_removal_allowed:
            return f"mass-removal guard: {self.guard_violation}"
        if self.impact is not None and self.impact.stops:
            return "protected principals: " + "; ".join(self.impact.protected)
        if self.capacity is not None and self.capacity.stops:
            return "capacity guard: " + "; ".join(self.capacity.stopped)
        if self.replay is not None and self.replay.stops:
            return "throttle guard: " + "; ".join(self.replay.stopped)
        return None

    def count(self, kind: ChangeKind) -> int:
        """count: the alterations of this kind."""
        return sum(1 for a in self.alterations if a.kind is kind)

    @property
    def set_ops(self) -> int:
        """set_ops: the quota values the plan sets."""
        return sum(1 for a in self.alterations for op in a.ops if not op.remove)

    @property
    def remove_ops(self) -> int:
        """remove_ops: the quota values the plan removes."""
        return sum(1 for a in self.alterations for op in a.ops if op.remove)

    def ignored_count(self, reason: IgnoreReason) -> int:
        """ignored_count: the entities left alone for this reason."""
        return sum(g.count for g in self.ignored if g.reason is reason)

    def summary(self) -> dict[str, Any]:
        """summary is the ``summary`` object of the JSON contract."""
        r = self.removals
        return {
            "create": self.count(ChangeKind.CREATE),
            "update": self.count(ChangeKind.UPDATE),
            "delete": self.count(ChangeKind.DELETE),
            "unchanged": self.unchanged,
            "set_ops": self.set_ops,
            "remove_ops": self.remove_ops,
            "ignored": {reason.value: self.ignored_count(reason) for reason in IgnoreReason},
            "removals": {
                "quotas": r.quotas,
                "entities": r.entities,
                "managed_quotas": r.managed_quotas,
                "managed_entities": r.managed_entities,
            },
            "guard_violation": self.guard_violation,
            "mass_removal_allowed": self.mass_removal_allowed,
        }

    def to_data(self) -> dict[str, Any]:
        """to_data gives the versioned JSON contract (plain dicts, lists, str, float, None)."""
        return {
            "format_version": PLAN_FORMAT_VERSION,
            "cluster": self.cluster,
            "cluster_id": self.cluster_id,
            "snapshot_fingerprint": self.snapshot_fingerprint,
            "desired_digest": self.desired_digest,
            "kquota_version": self.kquota_version,
            "created_at": self.created_at,
            "alterations": [a.to_data() for a in self.alterations],
            "summary": self.summary(),
            **({} if self.impact is None else self.impact.to_data()),
            **({} if self.capacity is None else {"capacity": self.capacity.to_data()}),
            **({"controller_notes": list(self.controller_notes)} if self.controller_notes else {}),
            **({} if self.replay is None else {"throttle_replay": self.replay.to_data()}),
        }
