"""Look-alike names: invisible characters by Unicode's property, confusables by UTS #39."""

from __future__ import annotations

import unicodedata

import pytest

from kquota.confusables import (
    confusable,
    default_ignorable,
    invisible_chars,
    name_key,
    skeleton,
)
from kquota.names import unusual_name

FILLERS = ["\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f"]
BIDI = [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
]
SELECTORS = [chr(c) for c in (0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0x180B)]
TAGS = [chr(c) for c in (0xE0001, 0xE0020, 0xE0041, 0xE007F)]


@pytest.mark.parametrize("ch", FILLERS + BIDI + SELECTORS + TAGS + ["\u200b", "\u00ad", "\ufeff"])
def test_every_invisible_character_makes_a_name_unusual(ch: str) -> None:
    name = f"pay{ch}ments"
    assert invisible_chars(name) == [ch]
    assert unusual_name(name)


def test_the_property_matches_unicode_data() -> None:
    """Every code point unicodedata calls a format character (Cf) outside the few visible
    ones (Arabic number signs and the like) is default-ignorable, and a sample of letters is
    not."""
    visible_cf = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x0890, 0x0891,
                  0x08E2, 0x110BD, 0x110CD}  # fmt: skip
    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch) == "Cf" and code not in visible_cf and code < 0xE0000:
            assert default_ignorable(ch) or code in (0xFFF9, 0xFFFA, 0xFFFB) or code >= 0x13430
    for ch in "aZ09éж中":
        assert not default_ignorable(ch)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("payments", "p\u0430yments"),  # Cyrillic а
        ("paypal", "paypaI"),  # capital I for l
        ("scope", "\u0455\u0441\u043e\u0440\u0435"),  # all Cyrillic
        ("rn", "m"),
        ("payments", "payments\u3164"),  # default-ignorable: dropped by the skeleton
    ],
)
def test_confusable_pairs(a: str, b: str) -> None:
    assert confusable(a, b) and skeleton(a) == skeleton(b)


def test_different_names_are_not_confusable() -> None:
    assert not confusable("alice", "bob")
    assert not confusable("payments", "payments")  # the same name is not a look-alike


def test_name_key_also_drops_a_braille_blank() -> None:
    # UTS #39 keeps U+2800 (it is not default-ignorable); it still reads as nothing.
    assert skeleton("payments\u2800") != skeleton("payments")
    assert name_key("payments\u2800") == name_key("payments")
