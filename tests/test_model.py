"""The order every output uses: ``sorted_entities``' string key against ``Entity.sort_key``."""

from __future__ import annotations

import dataclasses
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.model import Entity, sorted_by_entity, sorted_entities

# Names drawn from a small alphabet hold NULs, prefixes of one another and equal names under
# different types often: the cases where a string key could order differently from the tuple.
_NAMES = st.one_of(st.none(), st.text(alphabet="\x00\x01ab\u00e9\U0001f600", max_size=4))
_TYPES = st.sampled_from(["user", "client-id", "ip", "group", "a\x00", "\x01", "zz"])
_ENTITIES = st.lists(
    st.dictionaries(_TYPES, _NAMES, min_size=1, max_size=3).map(Entity.of),
    max_size=40,
    unique=True,
)


@settings(max_examples=400, deadline=None)
@given(_ENTITIES)
def test_sorted_entities_orders_as_the_tuple_key_does(entities: list[Entity]) -> None:
    assert sorted_entities(entities) == sorted(entities, key=Entity.sort_key)


@settings(max_examples=200, deadline=None)
@given(_ENTITIES.filter(lambda es: "\x00" not in _text(es)))
def test_without_nul_the_string_key_alone_decides(entities: list[Entity]) -> None:
    # The same check with the NUL fallback out of reach: the string key itself is right.
    assert sorted_entities(entities) == sorted(entities, key=Entity.sort_key)


def _text(entities: list[Entity]) -> str:
    return "".join(t + (n or "") for e in entities for t, n in e.parts)


def test_a_name_sorts_before_the_longer_names_it_begins() -> None:
    a = Entity.of({"user": "a"})
    a_c = Entity.of({"user": "a", "client-id": "c"})
    ab = Entity.of({"user": "ab"})
    default = Entity.of({"user": None})
    default_c = Entity.of({"user": None, "client-id": None})
    client = Entity.of({"client-id": None})
    shuffled = [ab, a_c, client, default_c, a, default]
    random.Random(7).shuffle(shuffled)
    assert sorted_entities(shuffled) == [default, default_c, a, a_c, ab, client]


def test_sorted_by_entity_keeps_the_items_and_falls_back_on_nul() -> None:
    nul = Entity.of({"user": "a\x00b"})
    plain = Entity.of({"user": "a"})
    items = [(nul, 1), (plain, 2)]
    assert sorted_by_entity(items, lambda item: item[0]) == [(plain, 2), (nul, 1)]


_PARTS = st.lists(st.tuples(_TYPES, _NAMES), min_size=1, max_size=2).map(tuple)


@settings(max_examples=200)
@given(a=_PARTS, b=_PARTS)
def test_entities_are_equal_exactly_when_their_parts_are(
    a: tuple[tuple[str, str | None], ...], b: tuple[tuple[str, str | None], ...]
) -> None:
    x, y = Entity(a), Entity(b)
    assert (x == y) is (a == b)
    assert (x != y) is (a != b)
    if a == b:
        assert hash(x) == hash(y)
        assert {x: 1}[y] == 1
    # Never equal to what is not an Entity, its parts included.
    assert x != a
    assert (x == a) is False
    assert a != x


def test_an_entity_is_a_frozen_dataclass_whose_init_is_written_by_hand() -> None:
    # Its __init__ sets the slot through the slot's own setter (faster than a frozen
    # dataclass's own): everything else a dataclass gives stays as it was.
    e = Entity((("user", "alice"),))
    assert e.parts == (("user", "alice"),)
    assert repr(e) == "Entity(parts=(('user', 'alice'),))"
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.parts = ()  # type: ignore[misc]
    assert dataclasses.replace(e, parts=(("ip", "10.0.0.1"),)) == Entity((("ip", "10.0.0.1"),))
    assert pickle.loads(pickle.dumps(e)) == e
    assert [f.name for f in dataclasses.fields(Entity)] == ["parts"]
