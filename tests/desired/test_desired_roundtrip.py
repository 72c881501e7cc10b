"""Property: any valid quota state, written as canonical YAML, loads back exactly.

The writer here is deliberately plain (double-quoted names, ``repr`` floats with a dot), the
way an exporter would write; the property covers the fast reader, the walker and the
value rules together, and checks both readers give the same state.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import kquota.desired.reader as reader
from kquota.desired import load_desired
from kquota.model import Entity, QuotaState
from kquota.names import canonical_ip, unusual_name
from kquota.quotakeys import CLIENT_KEYS, INT_MAX, LONG_MAX, QUOTA_KEYS, ValueType

NAMES = st.one_of(
    st.sampled_from(["alice", "<default>", "yes", "007", "a b", "é", "x:y", "#", "'", '"', "~"]),
    st.text(min_size=1, max_size=8),
)
NAME = st.one_of(st.none(), NAMES)
# The loader canonicalises ip names (kquota.names), so the states drawn hold canonical ones.
IPS = st.one_of(st.none(), st.ip_addresses().map(lambda a: canonical_ip(str(a))))


def value_for(key: str) -> st.SearchStrategy[float]:
    spec = QUOTA_KEYS[key]
    if spec.value_type is ValueType.LONG:
        return st.integers(1, LONG_MAX >> 11).map(float)  # exactly representable
    if spec.value_type is ValueType.INT:
        return st.integers(1, INT_MAX).map(float)
    return st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@st.composite
def entry(draw: st.DrawFn) -> tuple[Entity, dict[str, float]]:
    if draw(st.integers(0, 4)) == 0:
        entity = Entity.of({"ip": draw(IPS)})
        keys = ["connection_creation_rate"]
    else:
        types = draw(st.sampled_from([["user"], ["client-id"], ["user", "client-id"]]))
        entity = Entity.of({t: draw(NAME) for t in types})
        keys = draw(st.lists(st.sampled_from(CLIENT_KEYS), min_size=1, unique=True))
    return entity, {k: draw(value_for(k)) for k in keys}


def yaml_name(name: str | None) -> str:
    if name is None:
        return "<default>"
    quoted = yaml.safe_dump(name, default_style='"', width=10**9).removesuffix("\n")
    # object form: always literal; verbatim for names the loader would refuse or warn about
    return "{name: " + quoted + (", verbatim: true}" if unusual_name(name) else "}")


def yaml_number(value: float) -> str:
    if value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if exponent and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"  # YAML 1.1 floats need a dot: 1e-05 is a string
    return text


def write(state: QuotaState) -> str:
    lines = ["apiVersion: kquota/v1", "kind: ClientQuotas", "quotas:" if state else "quotas: []"]
    for entity, values in state.items():
        match = ", ".join(f"{t}: {yaml_name(n)}" for t, n in entity.parts)
        sets = ", ".join(f"{k}: {yaml_number(v)}" for k, v in values.items())
        lines += [f"  - match: {{{match}}}", f"    set: {{{sets}}}"]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(entries=st.lists(entry(), max_size=8, unique_by=lambda e: e[0]))
def test_desired_state_round_trips(entries: list[tuple[Entity, dict[str, float]]]) -> None:
    state = dict(entries)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp, "q.yaml")
        f.write_text(write(state), encoding="utf-8")
        assert load_desired([f]).quotas == state
        with (
            mock.patch.object(reader, "scan_canonical", lambda *args: None),
            mock.patch.object(reader, "parse_canonical", lambda text: None),
            mock.patch.object(reader, "read_general", lambda *args, **kwargs: None),
        ):
            assert load_desired([f]).quotas == state  # the composer's reading
