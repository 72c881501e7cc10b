"""The digest's fast encoder must write exactly the bytes json.dumps writes.

Saved plans record ``desired_digest``; if the encoding moved, every saved plan would stop
matching its files. Hypothesis draws names (ASCII, quotes, backslashes, DEL, control and
non-ASCII characters) and values (whole, fractional, tiny, huge, signed zero); the digest
must equal a sha256 over the reference encoding.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.desired.state import DesiredState, state_digest
from kquota.model import Entity, QuotaState, sorted_entities


def reference_digest(quotas: QuotaState) -> str:
    canonical = [[e.to_json(), dict(sorted(quotas[e].items()))] for e in sorted_entities(quotas)]
    text = json.dumps(canonical, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


names = st.one_of(
    st.none(),
    st.text(alphabet=st.sampled_from("az09-_.@"), min_size=1, max_size=8),
    st.text(min_size=1, max_size=6),  # quotes, backslashes, DEL, controls, non-ASCII
)
numbers = st.one_of(
    st.integers(1, 2**63).map(float),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-05, 1.5e-07, 1e16, 1e22, -0.0, 0.0, 5e-324, 1048576.0]),
)
entities = st.one_of(
    st.builds(lambda u: Entity.of({"user": u}), names),
    st.builds(lambda u, c: Entity.of({"user": u, "client-id": c}), names, names),
    st.builds(lambda i: Entity.of({"ip": i}), names),
)
values = st.dictionaries(
    st.sampled_from(["producer_byte_rate", "consumer_byte_rate", "request_percentage"]),
    numbers,
    min_size=1,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(entities, values, max_size=6))
def test_desired_digest_bytes_equal_json_dumps(quotas: QuotaState) -> None:
    assert state_digest(quotas) == reference_digest(quotas)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(entities, values, max_size=6))
def test_desired_state_sorts_once_for_digest_and_order(quotas: QuotaState) -> None:
    state = DesiredState(quotas, {})
    assert state.digest == reference_digest(quotas)
    assert state.order == tuple(sorted_entities(quotas))
    assert state_digest(quotas, state.order) == state.digest


def test_desired_digest_refuses_nan_as_json_does() -> None:
    with pytest.raises(ValueError):
        state_digest({Entity.of({"user": "a"}): {"request_percentage": math.nan}})
