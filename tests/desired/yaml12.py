"""Reading YAML as editors do: YAML 1.2's core schema (yaml-language-server, VS Code, most
linters), on top of PyYAML's parser, which otherwise resolves plain scalars by YAML 1.1.

The differences that matter for desired state: ``010`` is the decimal 10 (1.1: octal 8),
``0x10`` is 16 in both, ``0b1010``, ``1:30``, ``+0_17``, ``1_048_576`` and ``2026-01-01`` are
strings (1.1: numbers and a timestamp), ``yes``/``no``/``on``/``off`` are strings (1.1:
booleans), and ``<<`` is an ordinary key (1.1: a merge).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

_INT = re.compile(r"[-+]?[0-9]+$")
_OCT = re.compile(r"0o[0-7]+$")
_HEX = re.compile(r"0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)$")
_NAN = re.compile(r"\.(nan|NaN|NAN)$")


class Yaml12Loader(yaml.SafeLoader):
    """Yaml12Loader resolves plain scalars by YAML 1.2's core schema."""


Yaml12Loader.yaml_implicit_resolvers = {}
for tag, pattern, first in [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
]:
    Yaml12Loader.add_implicit_resolver(tag, re.compile(pattern), first)


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    assert _INT.match(text), text  # an explicit !!int of something else: not in the corpus
    return int(text)


def _float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node))
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    assert _FLOAT.match(text), text
    return float(text)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", _float)


def load_all(text: str) -> list[Any]:
    """load_all is every document of ``text`` as YAML 1.2 reads it."""
    return list(yaml.load_all(text, Loader=Yaml12Loader))  # noqa: S506 (a safe loader)
