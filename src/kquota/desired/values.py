"""Quota values as the walker reads them, each spelling checked once.

Files repeat the same few values (tiers) thousands of times; constructing and checking each
again was a fifth of the walk. The answer depends only on the key and the scalar's tag and
text, so it is kept, for both readers of a document (:mod:`kquota.desired.document`,
:mod:`kquota.desired.plain`).
"""

from __future__ import annotations

from functools import lru_cache

from kquota.desired import rules
from kquota.desired.nodes import Scalar, scalar_value
from kquota.quotakeys import QUOTA_KEYS, allowed_keys

_VALUES: dict[tuple[str, str, str], float | rules.Complaint] = {}


def quota_value(key: str, tag: str, text: str) -> float | rules.Complaint:
    """quota_value is ``key``'s value written as the scalar ``text`` resolved as ``tag``, or
    what is wrong with it (as :func:`rules.quota_value` says, traps first)."""
    cache_key = (key, tag, text)
    got = _VALUES.get(cache_key)
    if got is None:
        trap = rules.number_trap(tag, text)
        if trap is not None:
            got = (trap, rules.allowed_values(key))
        else:
            got = rules.quota_value(key, scalar_value(Scalar(tag, text, 0, 0)))
        if len(_VALUES) < 100_000:
            _VALUES[cache_key] = got
    return got


@lru_cache(maxsize=64)
def allowed_key_set(types: tuple[str, ...] | None) -> frozenset[str]:
    """allowed_key_set is the quota keys entities of ``types`` may have (None: any key)."""
    return frozenset(allowed_keys(types) if types is not None else QUOTA_KEYS)
