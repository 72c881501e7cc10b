"""The planner: a pure function (desired, snapshot, policy) -> Plan.

Workflow:

1. walk the desired entities, looking each up in the snapshot (a hash join on plain dicts:
   one dict pop per entity, no sorting, no intermediate rows);
2. walk the snapshot entities left over, which the desired state does not declare;
3. classify every (entity, key) through :mod:`kquota.plan.rules` (entities whose keys all
   share one outcome, such as out-of-scope ones, take the table's entity-level shortcut);
4. sort only the alterations (the output), not the whole union of entities;
5. count removals and ask the policy's guard (an empty desired state, or one with nothing in
   scope, that would remove anything always trips it).

deepdiff is deliberately not used (and no longer a dependency): it is generic, measured 36x
slower than this planner on 10k entities with 10 % changed, and would blur the one place the
rules live. The plan itself is the readable diff.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from operator import attrgetter
from typing import cast

from kquota.model import Entity, QuotaState, QuotaValues, sorted_by_entity
from kquota.names import as_cluster_spells
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.rules import Outcome, classify, entity_outcome
from kquota.plan.types import Alteration, ChangeKind, IgnoredGroup, IgnoreReason, Op, Plan
from kquota.policy import Policy, Removals

_NO_VALUES: QuotaValues = {}
_SETS_LIMIT = 1 << 16  # values dicts whose ops are kept: as many as the loader pools


def plan(
    desired: QuotaState,
    snapshot: QuotaState,
    policy: Policy,
    *,
    cluster: str | None = None,
    order: Sequence[Entity] | None = None,
) -> Plan:
    """plan computes the alterations that turn ``snapshot`` into ``desired`` under ``policy``.

    ``snapshot_fingerprint`` covers the entities the plan alters (see
    :mod:`kquota.plan.fingerprint`): applying a saved plan is safe exactly when those are
    unchanged. The metadata fields (cluster_id, digest, version, time) are left to the caller.

    ``order``: distinct entities in :func:`~kquota.model.sorted_entities` order, which the
    caller has at hand (:attr:`kquota.desired.DesiredState.order`). When they are exactly
    ``desired``'s (checked), desired is walked in that order, and a plan that only touches
    declared entities needs no sort; the plan is the same either way.
    """
    # ip names: the cluster may spell a declared address another way (kquota.names).
    spelled = as_cluster_spells(desired, snapshot)
    walk, in_order = _declared_walk(desired, order) if spelled is desired else (None, False)
    desired = spelled
    in_scope = policy.in_scope
    prune = policy.prune
    alterations: list[Alteration] = []
    unchanged = 0
    ignored: dict[IgnoreReason, list[Entity]] = {r: [] for r in IgnoreReason}
    managed_entities = managed_quotas = 0
    declared_in_scope = 0

    # Matched snapshot entities are popped from a copy (copying a dict reuses its stored
    # hashes), so the second walk needs no lookups: Entity hashing is the join's main cost.
    rest = dict(snapshot)
    # A new key is set under every rule table so far; the check keeps the table the judge.
    new_is_set = _new_key_outcome(prune) is Outcome.SET
    # A new entity's ops depend on its values alone, and the loader shares equal values dicts
    # (kquota.model.pooled): their ops are made once a dict, by identity (every dict lives
    # in desired for the whole walk, so no id is reused).
    sets_of: dict[int, tuple[Op, ...]] = {}
    # Without a scope every entity is in it: no call an entity to say so.
    scoped = policy.scope is not None
    for entity, want in walk or desired.items():
        have = rest.pop(entity, None)
        if scoped and not in_scope(entity):
            ignored[IgnoreReason.DECLARED_OUT_OF_SCOPE].append(entity)
            continue
        declared_in_scope += 1
        if have is None and new_is_set:
            # A new entity (a first apply: all of them), what _declared_ops and alteration_of
            # make of it without their calls: each key set, CREATE; nothing declared, nothing.
            if want:
                sets = sets_of.get(id(want))
                if sets is None:
                    sets = tuple([Op(key, want[key], False, None) for key in sorted(want)])
                    if len(sets_of) < _SETS_LIMIT:
                        sets_of[id(want)] = sets
                alterations.append(Alteration(entity, sets, ChangeKind.CREATE))
            else:
                unchanged += 1
            continue
        if have is not None:
            managed_entities += 1
            managed_quotas += len(have)
            # The common case, an entity already as declared, without a call. Plain dict
            # equality is the table's "every key same_value -> UNCHANGED" except for signed
            # zeros (0.0 == -0.0), so values equal to zero take the exact path.
            if want == have and 0.0 not in want.values():
                unchanged += 1
                continue
        ops = _declared_ops(want, have or _NO_VALUES, prune)
        if not ops:
            unchanged += 1
            continue
        alterations.append(alteration_of(entity, ops, have))

    declared_alterations = len(alterations)
    if in_order and ignored[IgnoreReason.DECLARED_OUT_OF_SCOPE]:
        # Listed in desired's own order, as the plain walk lists them (scope is pure).
        ignored[IgnoreReason.DECLARED_OUT_OF_SCOPE] = [e for e in desired if not in_scope(e)]

    shortcut = entity_outcome(in_scope=True, declared=False, prune=prune)
    for entity, have in rest.items():
        if scoped and not in_scope(entity):
            ignored[IgnoreReason.OUT_OF_SCOPE].append(entity)
            continue
        managed_entities += 1
        managed_quotas += len(have)
        if shortcut is Outcome.UNCHANGED:
            ignored[IgnoreReason.NOT_DECLARED].append(entity)
            continue
        ops = _undeclared_ops(have, prune) if shortcut is None else _all(shortcut, have)
        if not ops:
            ignored[IgnoreReason.NOT_DECLARED].append(entity)
            continue
        alterations.append(alteration_of(entity, ops, have))

    return finish_plan(
        alterations,
        ordered=in_order and len(alterations) == declared_alterations,
        policy=policy,
        cluster=cluster,
        snapshot=snapshot,
        declared_in_scope=declared_in_scope,
        managed_entities=managed_entities,
        managed_quotas=managed_quotas,
        unchanged=unchanged,
        ignored={r: (len(ents), tuple(ents)) for r, ents in ignored.items()},
    )


def _declared_walk(
    desired: QuotaState, order: Sequence[Entity] | None
) -> tuple[Iterable[tuple[Entity, QuotaValues]] | None, bool]:
    """_declared_walk is desired's entities and values in ``order``, and True, when ``order``
    (distinct entities) holds exactly desired's entities; else None and False."""
    if order is None or len(order) != len(desired):
        return None, False
    # A lookup per entity costs half of sorting them; a missing one (None) means another set.
    wants = list(map(desired.get, order))
    if None in wants:
        return None, False
    return zip(order, cast("list[QuotaValues]", wants), strict=True), True


def finish_plan(
    alterations: list[Alteration],
    *,
    ordered: bool = False,
    policy: Policy,
    cluster: str | None,
    snapshot: Mapping[Entity, QuotaValues],
    declared_in_scope: int,
    managed_entities: int,
    managed_quotas: int,
    unchanged: int,
    ignored: Mapping[IgnoreReason, tuple[int, tuple[Entity, ...]]],
) -> Plan:
    """finish_plan turns an engine's classified entities into the Plan: every engine ends here.

    It orders the alterations, counts removals, asks the guard and fingerprints the snapshot
    values of the altered entities (``snapshot`` must hold at least those). ``ignored`` gives
    per reason a count and the entities, which an engine that only counts may leave empty.
    ``ordered``: the engine made the alterations in :func:`~kquota.model.sorted_by_entity`
    order (one per entity), so they are not sorted again.
    """
    if not ordered:
        alterations[:] = sorted_by_entity(alterations, attrgetter("entity"))
    removals = Removals(
        quotas=sum(1 for a in alterations for op in a.ops if op.remove),
        entities=sum(1 for a in alterations if a.kind is ChangeKind.DELETE),
        managed_quotas=managed_quotas,
        managed_entities=managed_entities,
    )
    # "Empty" means nothing declared in scope: a desired state whose every entity lies outside
    # the scope would otherwise prune the whole scope just as silently as an empty folder.
    violation = policy.guard(removals, desired_empty=declared_in_scope == 0)
    return Plan(
        alterations=tuple(alterations),
        cluster=cluster,
        snapshot_fingerprint=snapshot_fingerprint(
            snapshot, (a.entity for a in alterations), ordered=True
        ),
        removals=removals,
        guard_violation=violation,
        mass_removal_allowed=violation is not None and policy.allow_mass_removal,
        unchanged=unchanged,
        ignored=tuple(
            IgnoredGroup(reason, count, entities)
            for reason in IgnoreReason
            for count, entities in [ignored.get(reason, (0, ()))]
            if count
        ),
    )


def _declared_ops(want: QuotaValues, have: QuotaValues, prune: bool) -> list[Op]:
    # The exact path, key by key (the planner's loop has already counted an entity whose
    # values equal what is declared, none of them zero).
    ops: list[Op] = []
    for key in sorted(want.keys() | have.keys()) if have else sorted(want):
        d = want.get(key)
        c = have.get(key)
        outcome = classify(in_scope=True, declared=True, prune=prune, desired=d, current=c)
        if outcome is Outcome.SET:
            ops.append(Op(key, d, False, c))
        elif outcome is Outcome.REMOVE:
            ops.append(Op(key, None, True, c))
    return ops


@cache
def _new_key_outcome(prune: bool) -> Outcome:
    return classify(in_scope=True, declared=True, prune=prune, desired=1.0, current=None)


def _undeclared_ops(have: QuotaValues, prune: bool) -> list[Op]:
    ops: list[Op] = []
    for key in sorted(have):
        c = have[key]
        outcome = classify(in_scope=True, declared=False, prune=prune, desired=None, current=c)
        if outcome is Outcome.REMOVE:
            ops.append(Op(key, None, True, c))
    return ops


def _all(outcome: Outcome, have: QuotaValues) -> list[Op]:
    if outcome is Outcome.REMOVE:
        return [Op(key, None, True, have[key]) for key in sorted(have)]
    return []


def alteration_of(entity: Entity, ops: Sequence[Op], have: QuotaValues | None) -> Alteration:
    """alteration_of groups one entity's ops and decides its change kind.

    Public so that every engine decides CREATE / UPDATE / DELETE the same way: CREATE when the
    snapshot lacks the entity, DELETE when the ops remove every key it has, else UPDATE.
    """
    if have is None:
        kind = ChangeKind.CREATE
    elif all(op.remove for op in ops) and len(ops) == len(have):
        kind = ChangeKind.DELETE
    else:
        kind = ChangeKind.UPDATE
    return Alteration(entity, tuple(ops), kind)
