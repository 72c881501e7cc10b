"""The precedence function the fleet engines share agrees with the resolver everywhere."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.fleet.resolve import resolve_local
from kquota.model import Entity
from kquota.plan.resolver import resolve

NAMES = st.sampled_from(["u1", "u2", None])
CLIENTS = st.sampled_from(["c1", "c2", None])
KEYS = st.sampled_from(["producer_byte_rate", "consumer_byte_rate"])


@st.composite
def states(draw: st.DrawFn) -> dict[Entity, dict[str, float]]:
    state: dict[Entity, dict[str, float]] = {}
    for _ in range(draw(st.integers(0, 12))):
        shape = draw(st.sampled_from(["u", "c", "uc"]))
        parts: dict[str, str | None] = {}
        if "u" in shape:
            parts["user"] = draw(NAMES)
        if "c" in shape:
            parts["client-id"] = draw(CLIENTS)
        state.setdefault(Entity.of(parts), {})[draw(KEYS)] = float(draw(st.integers(1, 99)))
    return state


@settings(max_examples=400, deadline=None)
@given(states(), st.sampled_from(["u1", "u3", ""]), st.sampled_from(["c1", "c3", ""]))
def test_fleet_resolution_equals_the_resolver(
    state: dict[Entity, dict[str, float]], user: str, client: str
) -> None:
    (eff,) = resolve_local(state, [(user, client)])
    expected = resolve(state, user, client)
    assert {k: (v, src) for k, (v, src) in eff.items()} == {
        q.key: (q.value, q.source) for q in expected.quotas
    }
