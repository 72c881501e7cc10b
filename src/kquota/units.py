"""Byte sizes with units, for the byte-rate keys (``producer_byte_rate``, ``consumer_byte_rate``).

``10MiB``, ``500KB``, ``1.5MiB``, ``1048576B``, optionally followed by ``/s``. IEC units are
powers of 1024 (``KiB``, ``MiB``, ``GiB``, ``TiB``); SI units are powers of 1000 (``KB`` or
``kB``, ``MB``, ``GB``, ``TB``). Units are case-sensitive on purpose: ``mb`` could mean
millibits. The result must be a whole number of bytes: ``1.5KiB`` is 1536, ``1.0001KiB`` is
an error. Arithmetic is exact (fractions), so ``0.1MB`` is exactly 100000.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

UNITS: dict[str, int] = {
    "B": 1,
    "KB": 1000,
    "kB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}

SIZE_HELP = "a size like 10MiB, 500KB, 1.5MiB (KiB/MiB/GiB/TiB = 1024^n, KB/MB/GB/TB = 1000^n)"
UNITS_HELP = "a whole number of bytes, or " + SIZE_HELP

_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ?([A-Za-z]+)(?:/s)?")


class UnitError(ValueError):
    """UnitError says why a byte size cannot be read; its text is the 'what is wrong' part."""


@lru_cache(maxsize=4096)  # files repeat the same few sizes thousands of times
def parse_byte_size(text: str) -> int:
    """parse_byte_size turns ``10MiB`` into 10485760; raises UnitError when it cannot."""
    m = _SIZE.fullmatch(text)
    if m is None:
        raise UnitError(f"{text!r} is not a byte size")
    number, unit = m[1], m[2]
    scale = UNITS.get(unit)
    if scale is None:
        raise UnitError(f"{text!r} has an unknown unit {unit!r}")
    size = Fraction(number) * scale
    if size.denominator != 1:
        raise UnitError(f"{text!r} is not a whole number of bytes ({float(size)})")
    return int(size)


def format_byte_size(size: int) -> str:
    """format_byte_size is the shortest exact unit form (IEC first): 10485760 -> ``10MiB``."""
    for unit in ("TiB", "GiB", "MiB", "KiB", "TB", "GB", "MB", "KB"):
        scale = UNITS[unit]
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"
