"""Snapshot fingerprints: the escaper's lines are the encoder's, byte for byte.

Saved plans record ``snapshot_fingerprint``; if its bytes moved, every saved plan would be
refused as stale. The reference here is the encoding as first written (one ``JSONEncoder``
call a line, hashed line by line), independent of the module's own fallback; hostile names
(NUL, controls, quotes, backslashes, DEL, non-ASCII, bidi and zero-width characters, lone
surrogates, very long names), default entities, multi-part entities and values whose bits
only differ in sign or last place all go through it.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Iterable, Iterator, Mapping

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile_names import HOSTILE

from kquota.model import Entity, QuotaValues, sorted_entities
from kquota.plan.fingerprint import _CHUNK, escaped_lines, plain_lines, snapshot_fingerprint

EDGE_NAMES = [
    *HOSTILE,
    "",
    "nul\x00inside",
    "\x00",
    "quote\"and'apostrophe",
    "back\\slash",
    "\x01\x07\x08\x0b\x0c\x1b\x1f",
    "del\x7f",
    "\x80\x9f\u00a0",
    "ünïcödé",
    "名前",
    "emoji\U0001f600",
    "lone\ud800high",
    "lone\udfffLow",
    "\u2028\u2029",
    "\ufeffbom",
    "\u200d\u200c\u2060",
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    "<default>",
    "null",
    "x" * 40_000,
    "é" * 20_000,
]
VALUES = [
    0.0,
    -0.0,
    math.nan,
    -math.nan,
    math.inf,
    -math.inf,
    1e-05,
    5e-324,
    1.7976931348623157e308,
]
KEYS = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "connection_creation_rate",
]


def reference(
    state: Mapping[Entity, QuotaValues], entities: Iterable[Entity], *, ordered: bool = False
) -> str:
    h = hashlib.sha256(b"kquota-fp-1\n")
    for entity in list(entities) if ordered else sorted_entities(dict.fromkeys(entities)):
        values = state.get(entity)
        encoded = (
            None
            if values is None
            else [[k, struct.pack(">d", values[k]).hex()] for k in sorted(values)]
        )
        h.update(json.dumps([entity.parts, encoded], separators=(",", ":")).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def edge_state() -> dict[Entity, QuotaValues]:
    state: dict[Entity, QuotaValues] = {}
    for i, name in enumerate(EDGE_NAMES):
        state[Entity.of({"user": name})] = {KEYS[i % 3]: VALUES[i % len(VALUES)]}
        state[Entity.of({"user": name, "client-id": None})] = {}
        state[Entity.of({"client-id": name, "user": EDGE_NAMES[-i - 1]})] = {
            k: VALUES[(i + j) % len(VALUES)] for j, k in enumerate(KEYS)
        }
        state[Entity.of({"ip": name})] = {"connection_creation_rate": float(i)}
        state[Entity.of({name or "t": name, "user": None})] = {name or "k": 1.5}  # unknown type
    state[Entity.of({"user": None})] = {"producer_byte_rate": 1048576.0}
    state[Entity.of({"ip": None})] = {"connection_creation_rate": 0.0}
    state[Entity.of({"user": None, "client-id": None})] = {"consumer_byte_rate": -0.0}
    state[Entity(())] = {}
    return state


def test_escaped_lines_equal_the_encoders_on_edge_names_and_values() -> None:
    state = edge_state()
    chosen = sorted_entities(state)
    assert b"".join(escaped_lines(state, chosen)) == b"".join(plain_lines(state, chosen))
    # Absent from the state (a first apply): every entity encoded as absent.
    assert b"".join(escaped_lines({}, chosen)) == b"".join(plain_lines({}, chosen))
    assert snapshot_fingerprint(state) == reference(state, state)
    assert snapshot_fingerprint({}, chosen, ordered=True) == reference({}, chosen)
    half = chosen[::2]
    assert snapshot_fingerprint(state, half, ordered=True) == reference(state, half)


def test_lines_are_hashed_a_chunk_at_a_time() -> None:
    state = {
        Entity.of({"user": f"u{i:05d}"}): {"producer_byte_rate": float(i)} for i in range(9000)
    }
    chosen = sorted_entities(state)
    chunks = list(escaped_lines(state, chosen))
    assert [c.count(b"\n") for c in chunks] == [_CHUNK, _CHUNK, 9000 - 2 * _CHUNK]
    assert snapshot_fingerprint(state) == reference(state, state)


def test_signed_zero_and_last_bit_change_the_fingerprint() -> None:
    alice = Entity.of({"user": "alice"})
    prints = {
        snapshot_fingerprint({alice: {"producer_byte_rate": v}})
        for v in (0.0, -0.0, 1.0, math.nextafter(1.0, 2.0))
    }
    assert len(prints) == 4


def test_names_that_are_not_str_take_the_encoders_way() -> None:
    # Entity() trusts its caller; whatever json made of such a name, the fingerprint still does.
    odd = Entity((("user", 7),))  # type: ignore[arg-type]
    state: dict[Entity, QuotaValues] = {odd: {"producer_byte_rate": 1.0}}
    expected = reference(state, [odd], ordered=True)
    assert expected.startswith("sha256:")
    assert snapshot_fingerprint(state, [odd], ordered=True) == expected


def test_pinned_value() -> None:
    # The encoding is versioned: this value may only change with "kquota-fp-2".
    state = {
        Entity.of({"user": "alice"}): {"producer_byte_rate": 1048576.0},
        Entity.of({"user": "b\u00f6b", "client-id": None}): {"request_percentage": -0.0},
    }
    missing = Entity.of({"ip": "10.0.0.1"})
    assert snapshot_fingerprint(state, [*state, missing]) == reference(state, [*state, missing])
    assert snapshot_fingerprint(state, [*state, missing]) == PINNED


PINNED = "sha256:ad5215620ac49f298fb0a18a5eaa53b121177df62fa23f3b22df9a9a620a990a"

names = st.one_of(st.none(), st.text(max_size=8), st.sampled_from(EDGE_NAMES[:-2]))
numbers = st.one_of(st.floats(), st.sampled_from(VALUES))
entities = st.one_of(
    st.builds(lambda u: Entity.of({"user": u}), names),
    st.builds(lambda u, c: Entity.of({"user": u, "client-id": c}), names, names),
    st.builds(lambda c: Entity.of({"client-id": c}), names),
    st.builds(lambda i: Entity.of({"ip": i}), names),
    st.builds(lambda t, n: Entity.of({t: n}), st.text(min_size=1, max_size=4), names),
)
states = st.dictionaries(
    entities, st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text()), numbers), max_size=8
)


@settings(max_examples=300, deadline=None)
@given(states, st.lists(entities, max_size=8))
def test_fingerprint_equals_the_reference(
    state: dict[Entity, QuotaValues], asked: list[Entity]
) -> None:
    chosen = [*state, *asked]
    assert snapshot_fingerprint(state, chosen) == reference(state, chosen)
    assert snapshot_fingerprint(state) == reference(state, state)


def test_shared_values_are_written_as_their_own_every_time() -> None:
    # States share values dicts (a few tiers): written once, by identity, each entity still
    # encodes its own; equal dicts that are not the same object, and -0.0 beside 0.0, too.
    gold, zero, negative = (
        {"producer_byte_rate": 2.0, "consumer_byte_rate": 1.0},
        {"k": 0.0},
        {"k": -0.0},
    )
    state: dict[Entity, QuotaValues] = {}
    for i in range(300):
        shared = [gold, zero, negative, dict(gold)][i % 4]
        state[Entity.of({"user": f"u{i:03d}"})] = shared
        state[Entity.of({"user": f"u{i:03d}", "client-id": None})] = dict(shared)
    chosen = sorted_entities(state)
    assert b"".join(escaped_lines(state, chosen)) == b"".join(plain_lines(state, chosen))
    assert snapshot_fingerprint(state) == reference(state, state)


def test_values_made_afresh_on_each_lookup_are_written_as_their_own() -> None:
    # A mapping may build each entity's values when asked: freed at once, their ids are
    # reused, and must not find another entity's pairs.
    class Fresh(Mapping[Entity, QuotaValues]):
        def __init__(self, n: int) -> None:
            self.keys_ = [Entity.of({"user": f"u{i:03d}"}) for i in range(n)]

        def __getitem__(self, entity: Entity) -> QuotaValues:
            return {"producer_byte_rate": float(self.keys_.index(entity))}

        def __iter__(self) -> Iterator[Entity]:
            return iter(self.keys_)

        def __len__(self) -> int:
            return len(self.keys_)

    state = Fresh(200)
    chosen = sorted_entities(state)
    assert b"".join(escaped_lines(state, chosen)) == b"".join(plain_lines(state, chosen))
