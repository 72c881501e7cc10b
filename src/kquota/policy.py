"""Ownership policy: which entities a desired state manages, pruning, and the removal guard.

Decisions (documented for operators in the config reference):

- **Scope** is ``all`` or a list of matches. A match ``{user: "team-*"}`` covers entities with
  exactly the types it names (here: user-only entities), each name matching its glob
  (``fnmatchcase``, case-sensitive). To own a user's client-id entities too, say so:
  ``{user: "team-*", client-id: "*"}``. Exact type sets keep ownership predictable: widening a
  match never silently captures combinations nobody wrote down. The pattern ``<default>``
  matches only the default entity; ``*`` matches every name *and* the default; any other glob
  matches named entities only (so a name that literally reads ``<default>`` is matched by
  ``*`` or a glob, never by the pattern ``<default>``).
- **Prune defaults to off.** Adopting kquota on a live cluster should never start by deleting
  what the repository does not mention yet (Terraform only destroys what it manages; octoDNS
  needs explicit config to delete). Declared entities are owned whole either way.
- **The mass-removal guard** trips when a plan removes more than ``max_removals`` quota values
  (default 10) or more than ``max_removal_fraction`` (default 0.3, octoDNS's
  MAX_SAFE_DELETE_PCENT) of the managed quota values once at least ``MIN_MANAGED_FOR_FRACTION``
  (10, octoDNS's MIN_EXISTING_RECORDS) are managed; small clusters would trip a share test on
  every change. An empty desired state (nothing declared in scope) that would remove anything
  always trips it, whatever the thresholds: that is the signature of a wrong path or a failed
  checkout. Only
  ``allow_mass_removal`` (``--allow-mass-removal``) overrides.
- **Protected principals** (``protect``, :class:`ProtectMatch`): a plan that lowers or newly
  imposes an effective quota on one stops like a mass removal (:mod:`kquota.plan.impact`
  decides); only ``allow_protected_change`` (``--allow-protected-change``) overrides.
- **The throttle guard** (``policy.usage.max_throttled_fraction``, issue 30): a plan whose
  throttle replay (:mod:`kquota.usage.replay`) throttles a principal longer than before and
  for more than that share of the observed time stops; only ``allow_throttling``
  (``--allow-throttling``) overrides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import translate
from typing import Literal

from kquota.model import CLIENT_ID, DEFAULT_NAME_DISPLAY, IP, USER, Entity
from kquota.principal import Principal

DEFAULT_MAX_REMOVALS = 10
DEFAULT_MAX_REMOVAL_FRACTION = 0.3
MIN_MANAGED_FOR_FRACTION = 10


@dataclass(frozen=True, slots=True)
class NamePattern:
    """NamePattern matches one entity name (None = the default entity)."""

    pattern: str
    _regex: re.Pattern[str] | None

    @classmethod
    def of(cls, pattern: str) -> NamePattern:
        special = pattern in (DEFAULT_NAME_DISPLAY, "*")
        return cls(pattern, None if special else re.compile(translate(pattern)))

    def matches(self, name: str | None) -> bool:
        if self.pattern == "*":
            return True
        if self.pattern == DEFAULT_NAME_DISPLAY:
            return name is None
        return name is not None and self._regex is not None and self._regex.match(name) is not None


@dataclass(frozen=True, slots=True)
class ScopeMatch:
    """ScopeMatch covers entities with exactly its types, each name matching its pattern."""

    patterns: tuple[tuple[str, NamePattern], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, str]) -> ScopeMatch:
        if not mapping:
            raise ValueError("a scope match needs at least one entity type")
        items = Entity.of(dict(mapping)).parts  # canonical type order, like entities
        return cls(tuple((t, NamePattern.of(p or "")) for t, p in items))

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(t for t, _ in self.patterns)

    def matches(self, entity: Entity) -> bool:
        parts = entity.parts
        if len(parts) != len(self.patterns):
            return False
        return all(
            t == pt and pat.matches(n)
            for (t, n), (pt, pat) in zip(parts, self.patterns, strict=True)
        )

    def to_data(self) -> dict[str, str]:
        return {t: p.pattern for t, p in self.patterns}


_GLOB = frozenset("*?[")
PROTECT_TYPES = (USER, CLIENT_ID, IP)


@dataclass(frozen=True, slots=True)
class ProtectMatch:
    """ProtectMatch names protected principals (``policy.protect``, ``--protect``): each
    type it gives is a glob, as in scopes, on that name of the principal. A principal
    matches when it has every name the match gives and each matches; so ``{user: "svc-*"}``
    protects every client of those users. A match without glob characters is also a
    principal in its own right: it is resolved even when no source found it."""

    patterns: tuple[tuple[str, NamePattern], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, str]) -> ProtectMatch:
        """of reads ``{type: glob}``; ValueError naming what is wrong and what is allowed."""
        if not mapping:
            raise ValueError("a protected principal needs at least one of user, client-id, ip")
        for t, pattern in mapping.items():
            if t not in PROTECT_TYPES:
                raise ValueError(
                    f"unknown principal type {t!r}; allowed: {', '.join(PROTECT_TYPES)}"
                )
            if not isinstance(pattern, str) or not pattern:
                raise ValueError(f"{t}: a name or glob is needed, e.g. svc-* (got {pattern!r})")
            if pattern == DEFAULT_NAME_DISPLAY:
                raise ValueError(
                    f"{t}: {DEFAULT_NAME_DISPLAY} is an entity, not a principal; protect "
                    "the principals by name or glob (e.g. *)"
                )
        items = Entity.of(dict(mapping)).parts  # canonical type order
        return cls(tuple((t, NamePattern.of(p or "")) for t, p in items))

    def matches(self, p: Principal) -> bool:
        names = {USER: p.user, CLIENT_ID: p.client_id, IP: p.ip}
        for t, pattern in self.patterns:
            name = names[t]
            if name is None or not pattern.matches(name):
                return False
        return True

    def exact(self) -> Principal | None:
        """exact is the principal this match names when it has no glob, else None."""
        if any(_GLOB & set(p.pattern) for _, p in self.patterns):
            return None
        names = {t: p.pattern for t, p in self.patterns}
        return Principal(names.get(USER), names.get(CLIENT_ID), names.get(IP))

    def to_data(self) -> dict[str, str]:
        return {t: p.pattern for t, p in self.patterns}


@dataclass(frozen=True, slots=True)
class Removals:
    """Removals measures how much a plan removes, against what the policy manages."""

    quotas: int = 0
    """Remove ops: quota values that disappear."""
    entities: int = 0
    """Entities that lose every key (and so disappear from the cluster)."""
    managed_quotas: int = 0
    """Quota values of in-scope entities in the snapshot."""
    managed_entities: int = 0
    """In-scope entities in the snapshot."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Policy is the ownership and safety settings a plan is made under.

    ``scope`` None means every entity is in scope.
    """

    scope: tuple[ScopeMatch, ...] | None = None
    prune: bool = False
    max_removals: int = DEFAULT_MAX_REMOVALS
    max_removal_fraction: float = DEFAULT_MAX_REMOVAL_FRACTION
    allow_mass_removal: bool = False
    protect: tuple[ProtectMatch, ...] = ()
    allow_protected_change: bool = False
    max_oversubscription: float | None = None
    """``policy.capacity.max_oversubscription``: the capacity guard's limit (None: report only)"""
    allow_oversubscription: bool = False
    max_throttled_fraction: float | None = None
    """``policy.usage.max_throttled_fraction``: the throttle guard's limit (None: report only)"""
    allow_throttling: bool = False
    observe: bool = False
    """``policy.mode: observe``: plan, drift and export as usual; apply refuses"""
    observed: tuple[ScopeMatch, ...] = ()
    """``policy.observe``: scopes in observe mode: apply refuses a plan that alters one"""

    def __post_init__(self) -> None:
        # The public API's door (kquota.Policy): wrong types fail here, by name.
        from kquota import argcheck as check

        if self.scope is not None:
            check.items(self.scope, ScopeMatch, "Policy: scope", "ScopeMatch (or use Policy.build)")
        check.flag(self.prune, "Policy: prune")
        check.whole(self.max_removals, "Policy: max_removals", 0, 2**63 - 1)
        check.number(self.max_removal_fraction, "Policy: max_removal_fraction", 0.0, 1.0)
        check.flag(self.allow_mass_removal, "Policy: allow_mass_removal")
        check.items(self.protect, ProtectMatch, "Policy: protect", "ProtectMatch")
        check.flag(self.allow_protected_change, "Policy: allow_protected_change")
        if self.max_oversubscription is not None:
            check.number(self.max_oversubscription, "Policy: max_oversubscription", 0.0, 1e9)
        check.flag(self.allow_oversubscription, "Policy: allow_oversubscription")
        if self.max_throttled_fraction is not None:
            check.number(self.max_throttled_fraction, "Policy: max_throttled_fraction", 0.0, 1.0)
        check.flag(self.allow_throttling, "Policy: allow_throttling")
        check.flag(self.observe, "Policy: observe")
        check.items(self.observed, ScopeMatch, "Policy: observed", "ScopeMatch")

    @classmethod
    def build(
        cls,
        scope: Literal["all"] | Iterable[Mapping[str, str]] = "all",
        *,
        prune: bool = False,
        max_removals: int = DEFAULT_MAX_REMOVALS,
        max_removal_fraction: float = DEFAULT_MAX_REMOVAL_FRACTION,
        allow_mass_removal: bool = False,
        protect: Iterable[Mapping[str, str]] = (),
        allow_protected_change: bool = False,
    ) -> Policy:
        """build makes a Policy from the config's plain form of scope (``"all"`` or matches)
        and of protected principals (``{type: glob}`` maps)."""
        from kquota import argcheck as check

        if scope != "all":
            scope = check.items(scope, Mapping, "Policy.build: scope", '"all" or {type: glob}')
        protect = check.items(protect, Mapping, "Policy.build: protect", "{type: glob}")
        matches = None if scope == "all" else tuple(ScopeMatch.of(m) for m in scope)
        return cls(
            matches,
            prune,
            max_removals,
            max_removal_fraction,
            allow_mass_removal,
            tuple(ProtectMatch.of(m) for m in protect),
            allow_protected_change,
        )

    def in_scope(self, entity: Entity) -> bool:
        """in_scope: the entity is owned under this policy (every entity without a scope)."""
        if self.scope is None:
            return True
        return any(m.matches(entity) for m in self.scope)

    def observed_in(self, entities: Iterable[Entity]) -> list[Entity]:
        """observed_in are the ``entities`` in an observed scope (``policy.observe``), or all
        of them when the whole cluster is observed (``policy.mode: observe``)."""
        if self.observe:
            return list(entities)
        if not self.observed:  # most policies: no generator per entity (100k: 0.025 s)
            return []
        return [e for e in entities if any(m.matches(e) for m in self.observed)]

    def guard(self, removals: Removals, *, desired_empty: bool) -> str | None:
        """guard returns why a plan's removals are unsafe, or None.

        The verdict does not depend on ``allow_mass_removal``: the plan keeps the message and
        records the override separately, so a reviewer still sees what was overridden.
        """
        n, managed = removals.quotas, removals.managed_quotas
        if n == 0:
            return None
        if desired_empty:
            return (
                f"the desired state is empty (nothing declared in scope) but the plan would "
                f"remove {n} quota value(s) of {removals.entities} entities; check the "
                "desired-state paths"
            )
        if n > self.max_removals:
            return f"the plan removes {n} quota values, more than max_removals={self.max_removals}"
        if managed >= MIN_MANAGED_FOR_FRACTION and n / managed > self.max_removal_fraction:
            return (
                f"the plan removes {n} of {managed} managed quota values ({n / managed:.0%}), "
                f"more than max_removal_fraction={self.max_removal_fraction:g}"
            )
        return None
