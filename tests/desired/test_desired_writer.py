"""Exported YAML reads back, through the real desired loader, to exactly the same state."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.desired import load_desired
from kquota.desired.writer import render_desired
from kquota.model import Entity, QuotaState

NAMES = st.one_of(
    st.none(),
    st.sampled_from(["alice", "<default>", "true", "010", "1e3", "null", "a b", "x: y", "#c", "-"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8),
)
BYTES = st.one_of(st.integers(1, 2**53).map(float), st.sampled_from([1024.0**2, 500000.0, 2.0**63]))
DOUBLES = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False, allow_infinity=False)


@st.composite
def states(draw: st.DrawFn) -> QuotaState:
    state: QuotaState = {}
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            entity = Entity.of({"ip": draw(st.sampled_from([None, "10.0.0.1", "2001:db8::1"]))})
            state[entity] = {"connection_creation_rate": float(draw(st.integers(1, 2**31 - 1)))}
            continue
        parts = draw(st.sampled_from([("user",), ("client-id",), ("user", "client-id")]))
        entity = Entity.of({t: draw(NAMES) for t in parts})
        if any(n == "" for _, n in entity.parts):
            continue
        state[entity] = {"producer_byte_rate": draw(BYTES), "request_percentage": draw(DOUBLES)}
    return state


@settings(max_examples=150, deadline=None)
@given(states())
def test_export_round_trips_through_the_loader(state: QuotaState) -> None:
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.yaml"
        path.write_text(render_desired(state, "generated"), encoding="utf-8")
        assert load_desired([path]).quotas == state


def test_empty_state() -> None:
    assert render_desired({}).endswith("quotas: []\n")
