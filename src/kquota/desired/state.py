"""DesiredState: what the YAML files declare, merged, with where each entity came from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property

from kquota.desired.problems import SourceLocation
from kquota.model import Entity, QuotaState, sorted_entities


@dataclass(frozen=True)
class DesiredState:
    """DesiredState is the merged desired state of one cluster.

    ``quotas`` is the shape planners use (entity -> {key -> float}); ``sources`` points each
    entity at the entry that declared it (the overlay's entry when one replaced a base
    entry); ``files`` are the files read, in order; ``digest`` identifies the content.
    """

    quotas: QuotaState
    sources: dict[Entity, SourceLocation]
    files: tuple[str, ...] = ()

    @cached_property
    def digest(self) -> str:
        """digest is :func:`state_digest` of ``quotas``, computed once, on first use."""
        return state_digest(self.quotas)


def state_digest(quotas: QuotaState) -> str:
    """state_digest is a sha256 over the canonical content, for saved plans.

    Canonical: entities in :func:`sorted_entities` order, keys sorted, values as JSON floats
    (shortest round-trip repr); file names, comments, profiles and units do not change it.
    """
    canonical = [[e.to_json(), dict(sorted(quotas[e].items()))] for e in sorted_entities(quotas)]
    text = json.dumps(canonical, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()
