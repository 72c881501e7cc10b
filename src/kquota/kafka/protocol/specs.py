"""Loads the message specs shipped as package data (``specs/*.json``).

The specs are the single source of truth for field layouts and version ranges; everything
else (supported versions, header choice, the codec) is derived from them. They are read once,
through :mod:`importlib.resources` so that an installed wheel works the same as a checkout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from kquota.kafka.protocol.schema import MessageSpec, SpecError, parse_message


@dataclass(frozen=True, slots=True)
class Registry:
    """Registry indexes every spec by name and by ``(api_key, "request" | "response")``."""

    by_name: dict[str, MessageSpec]
    by_api: dict[tuple[int, str], MessageSpec]


@cache
def registry() -> Registry:
    """registry loads and checks all spec files once per process."""
    by_name: dict[str, MessageSpec] = {}
    by_api: dict[tuple[int, str], MessageSpec] = {}
    folder = resources.files("kquota.kafka.protocol").joinpath("specs")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        try:
            doc = json.loads(entry.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise SpecError(f"{entry.name}: not JSON: {e}") from e
        spec = parse_message(doc, entry.name)
        if spec.name != entry.name.removesuffix(".json"):
            raise SpecError(f"{entry.name}: name {spec.name!r} does not match the file name")
        by_name[spec.name] = spec
        if spec.api_key is not None:
            by_api[(spec.api_key, spec.kind)] = spec
    return Registry(by_name=by_name, by_api=by_api)
