"""Helpers shared by the protocol tests: golden-file loading and bit-exact comparison."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
GOLDEN_GEN = HERE / "golden_gen"


def from_golden_json(value: Any) -> Any:
    """from_golden_json unwraps the generator's {"float64_bits"} and {"bytes_hex"} forms."""
    if isinstance(value, dict):
        if value.keys() == {"float64_bits"}:
            return struct.unpack(">d", bytes.fromhex(value["float64_bits"]))[0]
        if value.keys() == {"bytes_hex"}:
            return bytes.fromhex(value["bytes_hex"])
        return {k: from_golden_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_golden_json(v) for v in value]
    return value


def bits(value: Any) -> Any:
    """bits replaces every float by its IEEE 754 bit pattern so == is bit-exact.

    Plain float == would call -0.0 equal to 0.0 and NaN unequal to itself, hiding exactly the
    bugs the float64 tests are for.
    """
    if isinstance(value, float):
        return ("float64", struct.pack(">d", value).hex())
    if isinstance(value, dict):
        return {k: bits(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bits(v) for v in value]
    return value


def f64(hex_bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_bits))[0])


def golden_cases() -> list[tuple[str, dict[str, Any], bytes]]:
    """golden_cases lists (name, json document, bytes) for every committed golden case."""
    cases = []
    for path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        cases.append((path.stem, doc, path.with_suffix(".bin").read_bytes()))
    return cases


def framed(hex_text: str) -> bytes:
    """framed turns a §1.9 vector (with its INT32 size prefix) into the payload after it."""
    raw = bytes.fromhex("".join(hex_text.replace("|", " ").split()))
    size = int.from_bytes(raw[:4], "big")
    assert size == len(raw) - 4, f"size prefix {size} but {len(raw) - 4} bytes follow"
    return raw[4:]
