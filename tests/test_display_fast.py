"""The shortcuts for plain names agree with the escaping rules, on every input.

:func:`kquota.display.display_name` returns a :data:`~kquota.display.PLAIN_NAME` name as it
is, and :func:`kquota.model.display_entities` writes entities of such names out without
calling the rules; both exist for speed only (a plan of 100k entities shows every name), so
each must give exactly what the rules give: for the hostile corpus, every invisible,
bidirectional and look-alike character, the names the rules quote, and generated names.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile_names import HOSTILE
from kquota.display import PLAIN_NAME, display_name, name_by_rules, safe_text
from kquota.model import Entity, display_entities, display_entity

# Invisible, bidirectional and look-alike characters (as tests/test_lookalike.py lists them).
INVISIBLE = [
    *"\u115f\u1160\u3164\uffa0\u2800\u034f\u200b\u00ad\ufeff\u180b",
    *"\u061c\u200e\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    *map(chr, (0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0xE0001, 0xE0020, 0xE0041, 0xE007F)),
]
LOOKALIKE = ["p\u0430yments", "paypaI", "\u0455\u0441\u043e\u0440\u0435", "rn", "ｐａｙ"]
EDGES = [
    "",
    "<default>",
    "<default> ",
    "<Default>",
    "{name: <default>}",
    " ",
    " lead",
    "trail ",
    "in side",
    "\tx",
    "x\n",
    "a,b",
    "a=b",
    "{a}",
    'say "hi"',
    "back\\slash",
    "\\",
    "\x00",
    "nul\x00",
    "\x7f",
    "\x1b[31m",
    "\x85",
    "\xa0nbsp",
    "café",
    "ж",
    "中文",
    "\ud800",  # a lone surrogate: the broker's strings may hold one
    "\U0001f600",
    "apply-user-0000001",
    "app-7",
    "192.168.0.1",
    "2001:db8::1",
    "CN=alice,OU=eng",
    "User:alice",
    "x" * 0x7FFF,
    "x" * 0x7FFE + "\u202e",
]
CORPUS = HOSTILE + INVISIBLE + [f"pay{c}ments" for c in INVISIBLE] + LOOKALIKE + EDGES


def test_plain_name_is_printable_ascii_without_what_the_rules_escape_or_quote() -> None:
    matched = {chr(c) for c in range(0x110000) if PLAIN_NAME.fullmatch(chr(c))}
    assert matched == set(string.printable) - set(string.whitespace) - set('\\,={}"')
    for ch in matched:
        assert safe_text(ch) == ch == name_by_rules(ch)
    assert PLAIN_NAME.fullmatch("") is None


@pytest.mark.parametrize("as_yaml", [False, True])
def test_display_name_is_the_rules_on_the_corpus(as_yaml: bool) -> None:
    for name in CORPUS:
        assert display_name(name, as_yaml=as_yaml) == name_by_rules(name, as_yaml=as_yaml), name
    assert display_name(None, as_yaml=as_yaml) == "<default>"


def test_the_shortcut_is_taken_for_ordinary_names() -> None:
    # not a proof of speed, a check that the fast path is the one ordinary names take
    for name in ("apply-user-0000001", "app-7", "svc_1.prod", "a:b@c/d"):
        assert PLAIN_NAME.fullmatch(name) and display_name(name) is name


# Pieces, not characters: "<default>" must come up whole.
_MIXED = st.lists(
    st.sampled_from(
        [*"ab-_.:<>@#`|~*[]!", "<default>", *'\\,={}" \t\n\x00\x1b\x7f', "\u00e9", *INVISIBLE]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(_MIXED, st.booleans())
def test_display_name_is_the_rules_on_generated_names(name: str, as_yaml: bool) -> None:
    assert display_name(name, as_yaml=as_yaml) == name_by_rules(name, as_yaml=as_yaml)


def _by_rules(entity: Entity) -> str:
    """An entity as the rules alone show it, no shortcut taken."""
    return (
        "{"
        + ", ".join(
            f"{safe_text(t)}={'<default>' if n is None else name_by_rules(n)}"
            for t, n in entity.parts
        )
        + "}"
    )


def _entities(names: list[str]) -> list[Entity]:
    out: list[Entity] = []
    for i, name in enumerate(names):
        other = names[(i * 7 + 3) % len(names)]
        out += [
            Entity.of({"user": name}),
            Entity.of({"client-id": name}),
            Entity.of({"ip": name}),
            Entity.of({"user": name, "client-id": other}),
            Entity.of({"user": name, "client-id": "app-7"}),  # beside a plain name
            Entity.of({"user": "svc", "client-id": name}),
            Entity.of({"user": other, "client-id": name}),
            Entity.of({"user": None, "client-id": name}),
            Entity.of({"user": name, "client-id": None}),
            Entity.of({name: "x"}),  # a hostile type
            Entity.of({"user": "a", name: name}),
            Entity.of({"user": name, "client-id": "c", "ip": other}),
            # not in canonical order: shown in the order the parts are
            Entity((("client-id", name), ("user", other))),
        ]
    out += [
        Entity.of({"user": None}),
        Entity.of({"client-id": None}),
        Entity.of({"ip": None}),
        Entity.of({"user": None, "client-id": None}),
        Entity.of({"User": "a"}),
        Entity.of({"group": "a", "user": "b"}),
    ]
    return out


@pytest.mark.parametrize("prefix", ["", "+ "])
def test_display_entities_is_the_rules_on_the_corpus(prefix: str) -> None:
    entities = _entities(CORPUS)
    expected = [prefix + _by_rules(e) for e in entities]
    assert display_entities(entities, prefix) == expected
    assert [prefix + display_entity(e) for e in entities] == expected
    assert display_entities(iter(entities[:5]), prefix) == expected[:5]
    assert display_entities([], prefix) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(_MIXED, min_size=1, max_size=6))
def test_display_entities_is_the_rules_on_generated_names(names: list[str]) -> None:
    entities = _entities(names)
    assert display_entities(entities) == [_by_rules(e) for e in entities]


def test_display_entity_as_yaml_is_the_rules() -> None:
    for name in CORPUS:
        e = Entity.of({"user": name, "client-id": None})
        shown = display_entity(e, as_yaml=True)
        assert shown == f"{{user={name_by_rules(name, as_yaml=True)}, client-id=<default>}}"
