"""Snapshot fingerprints: tie a saved plan to the cluster state it was planned against.

The encoding is canonical and versioned (``kquota-fp-1``): entities in
:func:`~kquota.model.sorted_entities` order, each as its (type, name) pairs and its keys in
sorted order with each value as the hex of its IEEE 754 bits, so that values differing only
in the last bit, or -0.0 against 0.0, give different fingerprints. An entity asked for but
absent from the state is encoded as absent, so an entity that appears later changes the
fingerprint too. Pure: hashing only, no I/O, so the planner may call it.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterable, Mapping

from kquota.model import Entity, QuotaValues, sorted_entities

_PREFIX = b"kquota-fp-1\n"
# One encoder for every line: json.dumps with separators builds a new encoder per call.
_LINE = json.JSONEncoder(separators=(",", ":")).encode


def snapshot_fingerprint(
    state: Mapping[Entity, QuotaValues],
    entities: Iterable[Entity] | None = None,
    *,
    ordered: bool = False,
) -> str:
    """snapshot_fingerprint is ``sha256:<hex>`` of the given entities' quotas in ``state``.

    ``entities`` None means every entity of the state. ``ordered``: the caller's entities
    are distinct and already in :func:`~kquota.model.sorted_entities` order (a plan's
    alterations are), so they are not sorted again (100k entities: a second sort was a
    quarter of planning them).
    """
    if entities is None:
        chosen = sorted_entities(state)
    elif ordered:
        chosen = list(entities)
    else:
        chosen = sorted_entities(dict.fromkeys(entities))
    h = hashlib.sha256(_PREFIX)
    for entity in chosen:
        values = state.get(entity)
        encoded = (
            None
            if values is None
            else [[k, struct.pack(">d", values[k]).hex()] for k in sorted(values)]
        )
        h.update(_LINE([entity.parts, encoded]).encode() + b"\n")
    return "sha256:" + h.hexdigest()
