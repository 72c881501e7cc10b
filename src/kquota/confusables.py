"""confusables: names that read alike but are not the same name.

Two kinds of trap, both from Unicode's own data:

- Invisible characters: every Default_Ignorable_Code_Point (Unicode 15.0,
  DerivedCoreProperties.txt: zero-width characters, bidirectional controls, variation
  selectors, tag characters, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the
  combining grapheme joiner U+034F, ...) plus U+2800 BRAILLE PATTERN BLANK, which draws
  nothing but is not default-ignorable. Python's ``str.isprintable`` accepts several of
  them (U+3164, U+2800, U+034F, the variation selectors), so ``payments`` followed by one
  of them would pass for ``payments``.
- Confusable names: UTS #39 (Unicode Security Mechanisms) section 4 defines the skeleton
  of a string; two strings are confusable when their skeletons are equal. The prototypes come
  from Unicode's confusables.txt, shipped as package data (``kquota/data/confusables.txt``,
  Version 13.0.0; see the licence file beside it).
"""

from __future__ import annotations

import functools
import unicodedata
from bisect import bisect_right

# Default_Ignorable_Code_Point, Unicode 15.0 (DerivedCoreProperties-15.0.0.txt), as ranges.
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip
_STARTS = tuple(a for a, _ in _IGNORABLE)
# Blank but not default-ignorable: draws nothing, so reads as nothing.
_BLANK = frozenset({0x2800})


def default_ignorable(ch: str) -> bool:
    """default_ignorable: ``ch`` has Unicode's Default_Ignorable_Code_Point property."""
    code = ord(ch)
    i = bisect_right(_STARTS, code) - 1
    return i >= 0 and code <= _IGNORABLE[i][1]


def invisible(ch: str) -> bool:
    """invisible: ``ch`` draws nothing a reader can see (default-ignorable, a blank braille
    pattern, or a format or other non-printing character other than a plain space)."""
    if ch.isascii():
        return not ch.isprintable()
    return default_ignorable(ch) or ord(ch) in _BLANK or not ch.isprintable()


def invisible_chars(name: str) -> list[str]:
    """invisible_chars lists the invisible characters of ``name`` that are not controls
    (controls, U+0000-U+001F and U+007F-U+009F, are reported as such elsewhere)."""
    if name.isascii():
        return []
    return [c for c in name if invisible(c) and unicodedata.category(c) != "Cc"]


@functools.cache
def _prototypes() -> dict[int, str | None]:
    """The str.translate table of UTS #39's skeleton: each confusable character to its
    prototype, each default-ignorable one to nothing."""
    # Imported here: importlib.resources brings tempfile, shutil and random (about 5 ms of
    # every command's start), and only a look-alike check reads the table.
    from importlib import resources

    data = resources.files("kquota").joinpath("data/confusables.txt").read_text("utf-8")
    table: dict[int, str | None] = {}
    for line in data.splitlines():
        if not line or line.startswith("#"):
            continue
        source, _, target = line.partition(";")
        table[int(source, 16)] = "".join(chr(int(c, 16)) for c in target.split())
    for start, end in _IGNORABLE:
        table.update(dict.fromkeys(range(start, end + 1)))
    return table


def _nfd(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFD", text):
        return text
    return unicodedata.normalize("NFD", text)


def skeleton(text: str) -> str:
    """skeleton is UTS #39's skeleton(X): NFD, drop default-ignorable code points, map each
    character to its prototype, NFD again. Equal skeletons mean the strings are confusable."""
    return _nfd(_nfd(text).translate(_prototypes()))


def confusable(a: str, b: str) -> bool:
    """confusable: ``a`` and ``b`` differ but a reader may take one for the other."""
    return a != b and skeleton(a) == skeleton(b)


def name_key(name: str) -> str:
    """name_key is what a reader sees of a name: its skeleton with every invisible character
    dropped (also U+2800, which UTS #39 keeps). Equal keys, different names: a look-alike."""
    if not name.isascii():
        name = "".join(c for c in name if not invisible(c) or c.isascii())
    return skeleton(name)
