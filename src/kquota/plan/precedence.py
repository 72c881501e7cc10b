"""Which user/client-id quota entity wins for a principal: the broker's choice, as a function
of which candidate entities set the key.

The broker's DefaultQuotaCallback (docs/precedence.md) first picks the metric tags
(``quotaMetricTags``), then walks a chain chosen by which tags are non-empty (``findQuota``).
For a user and a client-id that are both non-empty this is exactly the eight-level list of
Kafka's docs; an empty name (an absent client-id is ``""``) changes the chain. Keeping the
decision a pure function of "which levels are present" lets the local resolver and the Spark
fleet job (a join over the eight candidates) share one definition.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import IntEnum

from kquota.model import CLIENT_ID, USER, Entity


class Level(IntEnum):
    """Level numbers follow Kafka's documented precedence list, highest first."""

    USER_CLIENT = 1
    USER_DEFAULT_CLIENT = 2
    USER = 3
    DEFAULT_USER_CLIENT = 4
    DEFAULT_USER_DEFAULT_CLIENT = 5
    DEFAULT_USER = 6
    CLIENT = 7
    DEFAULT_CLIENT = 8


def candidate(level: Level, user: str, client: str) -> Entity:
    """candidate is the entity a level looks up for (user, client); names may be ``""``."""
    # Builds only the one entity asked for: resolving thousands of principals calls this
    # eight times per principal, and building all eight each time dominated --impact.
    if level is Level.USER_CLIENT:
        return Entity(((USER, user), (CLIENT_ID, client)))
    if level is Level.USER_DEFAULT_CLIENT:
        return Entity(((USER, user), (CLIENT_ID, None)))
    if level is Level.USER:
        return Entity(((USER, user),))
    if level is Level.DEFAULT_USER_CLIENT:
        return Entity(((USER, None), (CLIENT_ID, client)))
    if level is Level.DEFAULT_USER_DEFAULT_CLIENT:
        return Entity(((USER, None), (CLIENT_ID, None)))
    if level is Level.DEFAULT_USER:
        return Entity(((USER, None),))
    if level is Level.CLIENT:
        return Entity(((CLIENT_ID, client),))
    return Entity(((CLIENT_ID, None),))


def choose(present: Collection[int], user: str, client: str) -> Level | None:
    """choose returns the level whose value applies, given the levels that set the key.

    ``present`` holds the levels whose candidate entity sets the key. Entities with an empty
    name cannot exist on a broker, so callers never report those levels present.
    """
    has = set(present).__contains__
    return next((level for level in chain(present, user, client)[0] if has(level)), None)


def chain(
    present: Collection[int], user: str, client: str
) -> tuple[tuple[Level, ...], tuple[str, str]]:
    """chain is the broker's walk for one key: the levels ``findQuota`` looks at, in order,
    and the metric tags ``quotaMetricTags`` picked from the levels that set the key (which
    decide that walk). The first level of the walk that is ``present`` wins
    (:func:`choose`); a present level outside the walk never applies (docs/precedence.md)."""
    has = set(present).__contains__
    L = Level
    # quotaMetricTags: the tags this connection's quota is tracked under.
    if has(L.USER_CLIENT) or has(L.USER_DEFAULT_CLIENT):
        tag_user, tag_client = user, client
    elif has(L.USER):
        tag_user, tag_client = user, ""
    elif has(L.DEFAULT_USER_CLIENT) or has(L.DEFAULT_USER_DEFAULT_CLIENT):
        tag_user, tag_client = user, client
    elif has(L.DEFAULT_USER):
        tag_user, tag_client = user, ""
    else:
        tag_user, tag_client = "", client
    # findQuota: the chain depends on which tags are non-empty.
    walk: tuple[Level, ...]
    if tag_user and tag_client:
        walk = (
            L.USER_CLIENT,
            L.USER_DEFAULT_CLIENT,
            L.DEFAULT_USER_CLIENT,
            L.DEFAULT_USER_DEFAULT_CLIENT,
        )
    elif tag_user:
        walk = (L.USER, L.DEFAULT_USER)
    elif tag_client:
        walk = (L.CLIENT, L.DEFAULT_CLIENT)
    else:
        walk = ()
    return walk, (tag_user, tag_client)
