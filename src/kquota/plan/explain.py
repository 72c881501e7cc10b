"""Why a principal gets its quotas: the precedence ladder behind a resolution.

``kquota resolve --explain``: every level of the broker's precedence for one principal (the
entity it looks up and what that entity sets, if it exists), and for each quota key which
level wins and why the others that set the key do not (docs/precedence.md). It is computed
from the same :func:`kquota.plan.precedence.chain` the resolver uses, and the winner of each
key is checked against :func:`kquota.plan.resolver.resolve`'s answer (one definition, two
readings of it that cannot drift apart).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kquota.model import IP, Entity
from kquota.names import ip_address
from kquota.plan.precedence import Level, candidate, chain
from kquota.plan.resolver import Resolution, resolve
from kquota.quotakeys import CLIENT_KEYS, IP_KEYS


@dataclass(frozen=True, slots=True)
class Rung:
    """Rung is one level of the ladder: its number (1-8 for client quotas, ``ip-1``..
    ``ip-3`` for ip quotas), the entity it looks up, and that entity's values (None: the
    entity does not exist in the state)."""

    level: str
    entity: Entity
    values: Mapping[str, float] | None


@dataclass(frozen=True, slots=True)
class KeyVerdict:
    """KeyVerdict is one key's outcome: the winning rung's level (None: unlimited), and a
    reason for the winner and for every other rung that sets the key."""

    key: str
    winner: str | None
    value: float | None
    reasons: tuple[tuple[str, str], ...]
    """(level, why) for the winner first, then for each losing rung that sets the key"""


@dataclass(frozen=True, slots=True)
class Explanation:
    """Explanation is the ladder and the verdict per key, beside the plain resolution."""

    resolution: Resolution
    ladder: tuple[Rung, ...]
    verdicts: tuple[KeyVerdict, ...]

    def to_data(self) -> dict[str, Any]:
        """to_data is the JSON form: the resolution's, plus ``ladder`` and ``explain``."""
        data = self.resolution.to_data()
        data["ladder"] = [
            {
                "level": r.level,
                "entity": r.entity.to_json(),
                "exists": r.values is not None,
                "quotas": dict(r.values or {}),
            }
            for r in self.ladder
        ]
        data["explain"] = {
            v.key: {"winner": v.winner, "reasons": [{"level": lv, "why": w} for lv, w in v.reasons]}
            for v in self.verdicts
        }
        return data


def explain(
    state: Mapping[Entity, Mapping[str, float]],
    user: str | None,
    client_id: str | None,
    ip: str | None = None,
) -> Explanation:
    """explain builds the ladder for a principal and says, key by key, which rung wins."""
    resolution = resolve(state, user, client_id, ip)
    ladder: list[Rung] = []
    verdicts: list[KeyVerdict] = []
    if user is not None or client_id is not None:
        u, c = user or "", client_id or ""
        rungs = {level: candidate(level, u, c) for level in Level}
        for level, entity in rungs.items():
            values = None if _unnamed(entity) else state.get(entity)
            ladder.append(Rung(str(int(level)), entity, values))
        for key in CLIENT_KEYS:
            verdicts.append(_client_verdict(key, ladder, u, c))
    if ip is not None:
        rungs_ip = _ip_rungs(state, ip)
        ladder += rungs_ip
        for key in IP_KEYS:
            verdicts.append(_ip_verdict(key, rungs_ip))
    for v in verdicts:  # the same answer as the resolver's, always
        got = resolution.get(v.key)
        assert (got.value if got else None) == v.value, (v, got)
    return Explanation(resolution, tuple(ladder), tuple(verdicts))


def _unnamed(entity: Entity) -> bool:
    # An entity with an empty name cannot exist on a broker (a client without a client-id
    # has the empty one): its rung is never present.
    return any(name == "" for _, name in entity.parts)


def _client_verdict(key: str, ladder: list[Rung], user: str, client: str) -> KeyVerdict:
    present = [int(r.level) for r in ladder if r.values is not None and key in r.values]
    walk, tags = chain(present, user, client)
    winner = next((level for level in walk if level in present), None)
    if winner is None:
        if not present:
            return KeyVerdict(key, None, None, (("-", "no level sets it: unlimited"),))
        never = f"sets it, but is not in the walk for {_tags(tags)}: never applies"
        return KeyVerdict(key, None, None, tuple((str(level), never) for level in present))
    rung = ladder[winner - 1]
    assert rung.values is not None
    walked = ", ".join(str(int(level)) for level in walk)
    above = list(walk[: walk.index(winner)])
    first = f"the first level that sets it in the walk {walked} for {_tags(tags)}"
    if len(above) == 1:
        first += f" (level {_levels(above)} above it does not set it)"
    elif above:
        first += f" (levels {_levels(above)} above it do not set it)"
    reasons: list[tuple[str, str]] = [(str(winner), first)]
    for level in present:
        if level == winner:
            continue
        if level in walk:
            reasons.append((str(level), f"outranked by level {winner}"))
        else:
            reasons.append((str(level), f"not in the walk for {_tags(tags)}: never applies"))
    return KeyVerdict(key, str(winner), rung.values[key], tuple(reasons))


def _levels(levels: list[int] | list[Level]) -> str:
    return ", ".join(str(int(level)) for level in levels)


def _tags(tags: tuple[str, str]) -> str:
    user, client = tags
    parts = [
        f"user tag {'set' if user else 'empty'}",
        f"client-id tag {'set' if client else 'empty'}",
    ]
    return " and ".join(parts)


def _ip_rungs(state: Mapping[Entity, Mapping[str, float]], ip: str) -> list[Rung]:
    own = Entity(((IP, ip),))
    rungs = [Rung("ip-1", own, state.get(own))]
    address = ip_address(ip)
    if address is not None:
        for entity, values in state.items():
            name = entity.parts[0][1] if entity.types == (IP,) else None
            if name is not None and name != ip and ip_address(name) == address:
                rungs.append(Rung("ip-2", entity, values))
    default = Entity(((IP, None),))
    rungs.append(Rung("ip-3", default, state.get(default)))
    return rungs


def _ip_verdict(key: str, rungs: list[Rung]) -> KeyVerdict:
    present = [r for r in rungs if r.values is not None and key in r.values]
    if not present:
        return KeyVerdict(key, None, None, (("-", "no ip entity sets it: unlimited"),))
    win = present[0]
    assert win.values is not None
    what = {
        "ip-1": "the ip's own entity sets it",
        "ip-2": "another spelling of the same address sets it (the ip's own entity does not)",
        "ip-3": "only the default ip entity sets it",
    }[win.level]
    reasons = [(win.level, what)] + [(r.level, f"outranked by {win.level}") for r in present[1:]]
    return KeyVerdict(key, win.level, win.values[key], tuple(reasons))
