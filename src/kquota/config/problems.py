"""kquota.yaml's problems as every file of kquota reports them: ``file:line:column: where:
what is wrong; allowed: …``, one line each, in the order they stand in the file.

The models (:mod:`kquota.config.project`) are checked by pydantic; its errors are translated
here, by their type, into the desired state's wording (:mod:`kquota.desired.document`):
pydantic's own sentences ("Input should be…", "Value error, …") and its union-branch names
never reach a person. The position is the offending value's, an unknown field's key's, a
missing field's mapping's. A value is shown only when it is a plain scalar outside the
``kafka`` properties (which hold secrets): a mapping or a property is named, never printed.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

Path = tuple[str | int, ...]
Mark = tuple[int, int]
"""A 1-based line and column."""

_QUOTED = re.compile(r"'([^']*)'")


@dataclass(frozen=True)
class Marks:
    """Marks are where each part of the file stands: ``values`` by the path of the value
    (the whole file is ``()``), ``keys`` by the path of the value a key introduces."""

    values: dict[Path, Mark]
    keys: dict[Path, Mark]


def format_problems(
    e: ValidationError, root: type[BaseModel], data: Any, marks: Marks, src: str
) -> str:
    """format_problems is ``e`` as one line per problem, in line order, duplicates once."""
    from kquota.display import safe_text

    found: list[tuple[Mark, str]] = []
    errors = e.errors(include_url=False)
    for err in errors:
        loc, union_at = _real(err["loc"], data)
        if union_at is not None and loc == union_at and _has_deeper(errors, data, union_at):
            continue  # the other branch of the union says what is wrong inside the list
        kind = err["type"]
        if kind == "extra_forbidden":
            mark = marks.keys.get(loc) or _nearest(marks.values, loc)
        elif kind == "missing":
            mark = _nearest(marks.values, loc[:-1])
        else:
            mark = _nearest(marks.values, loc)
        named = loc[:-1] if kind == "missing" else loc
        where = safe_text(".".join(str(x) for x in named)) or "the file"  # names from the file
        text = _message(err, loc, union_at, root, data)
        found.append((mark, f"{src}:{mark[0]}:{mark[1]}: {where}: {text}"))
    found.sort(key=lambda item: item[0])
    return "\n".join(dict.fromkeys(line for _, line in found))


def _has_deeper(errors: Sequence[Any], data: Any, union_at: Path) -> bool:
    for err in errors:
        loc, at = _real(err["loc"], data)
        if at == union_at and len(loc) > len(union_at):
            return True
    return False


def _real(loc: Sequence[Any], data: Any) -> tuple[Path, Path | None]:
    """_real is ``loc`` without pydantic's union-branch names (``literal['all']``), and the
    path of the union they were under (None outside one): parts that index the data are
    kept, as is a missing or unknown field's name at the end."""
    out: list[str | int] = []
    union_at: Path | None = None
    here: Any = data
    for i, part in enumerate(loc):
        indexes = (isinstance(here, Mapping) and part in here) or (
            isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here)
        )
        if indexes:
            here = here[part]
        elif i == len(loc) - 1 and isinstance(part, str) and not _branch(part):
            pass  # a missing field's name
        else:
            if union_at is None:
                union_at = tuple(out)
            continue
        out.append(part)
    return tuple(out), union_at


def _branch(part: str) -> bool:
    return "[" in part or part[:1].isupper()


def _nearest(values: Mapping[Path, Mark], loc: Path) -> Mark:
    while loc not in values and loc:
        loc = loc[:-1]
    return values.get(loc, (1, 1))


def _message(err: Any, loc: Path, union_at: Path | None, root: type[BaseModel], data: Any) -> str:
    kind: str = err["type"]
    ctx: Mapping[str, Any] = err.get("ctx") or {}
    shown = _shown(err.get("input"), loc)
    if kind == "extra_forbidden":
        fields = _fields_at(root, loc[:-1])
        allowed = f"; allowed: {', '.join(fields)}" if fields else ""
        return f"unknown field {loc[-1]!r}{allowed}"
    if kind == "missing":
        return f"missing field {loc[-1]!r} (required)"
    if kind == "value_error":
        return str(ctx.get("error", "not allowed"))
    if union_at is not None and loc == union_at:
        return f"{shown} is not allowed; allowed: {_union_help(root, loc)}"
    if kind == "literal_error":
        allowed = ", ".join(_QUOTED.findall(str(ctx.get("expected", ""))))
        return f"{shown} is not allowed; allowed: {allowed}"
    if kind in ("bool_parsing", "bool_type"):
        return f"{shown} is not true or false; allowed: true, false"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{shown} is not a whole number; allowed: {_range(root, loc, 'a whole number')}"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return f"{shown} is not a number; allowed: {_range(root, loc, 'a number')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        noun = "a whole number" if _annotation_at(root, loc) is int else "a number"
        return f"{shown} is out of range; allowed: {_range(root, loc, noun)}"
    if kind == "string_type":
        if _secret(loc) and len(loc) == 4:
            return "the value is not a string; allowed: a string, number or boolean"
        return f"{shown} is not a string; allowed: a string"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        fields = _fields_at(root, loc)
        ann = _annotation_at(root, loc)
        if fields:
            allowed = f"fields {', '.join(fields)}"
        elif typing.get_origin(ann) is dict and (named := _fields_at(root, (*loc, "x"))):
            allowed = f"names, each a mapping of fields {', '.join(named)}"
        else:
            allowed = "key: value pairs"
        return f"{shown} is not a mapping; allowed: a mapping of {allowed}"
    if kind == "list_type":
        return f"{shown} is not a list; allowed: a list ([a, b] or one '- item' a line)"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        if typing.get_origin(_annotation_at(root, loc)) is dict:
            return f"the mapping is empty; allowed: at least {n} item{'s' * (n != 1)}"
        return f"the list is empty; allowed: at least {n} item{'s' * (n != 1)}"
    return f"{shown} is not allowed here"


def _shown(value: Any, loc: Path) -> str:
    from kquota.display import safe_text

    if _secret(loc):
        return "the value"  # properties and signing keys hold secrets: never shown
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value[:80])  # repr escapes control and format characters
    return safe_text(str(value)[:80])


def _secret(loc: Path) -> bool:
    """_secret: ``loc`` is inside a cluster's client properties or its audit signing keys."""
    if loc[:1] != ("clusters",) or len(loc) < 3:
        return False
    return loc[2] == "kafka" or loc[2:4] == ("audit_signing", "keys")


def _annotation_at(root: type[BaseModel], loc: Path) -> Any:
    """_annotation_at is the type the models declare at ``loc`` (None if none)."""
    ann: Any = root
    for part in loc:
        ann = _plain(ann)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            field = ann.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            ann = field.annotation
        elif typing.get_origin(ann) in (dict, list):
            ann = typing.get_args(ann)[-1]
        else:
            return None
    return _plain(ann)


def _plain(ann: Any) -> Any:
    """_plain: ``X | None`` as ``X``; other unions as they are."""
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return ann


def _fields_at(root: type[BaseModel], loc: Path) -> list[str]:
    ann = _annotation_at(root, loc)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return list(ann.model_fields)
    return []


def _range(root: type[BaseModel], loc: Path, noun: str) -> str:
    """_range: ``noun`` with the bounds the field declares (``a number from 0 to 1``)."""
    owner = _annotation_at(root, loc[:-1])
    if not (isinstance(owner, type) and issubclass(owner, BaseModel)) or not loc:
        return noun
    field = owner.model_fields.get(str(loc[-1]))
    if field is None:
        return noun
    low = high = None
    low_open = high_open = False
    for rule in field.metadata:
        for name, is_low, is_open in (("ge", 1, 0), ("gt", 1, 1), ("le", 0, 0), ("lt", 0, 1)):
            value = getattr(rule, name, None)
            if value is None:
                continue
            if is_low:
                low, low_open = value, bool(is_open)
            else:
                high, high_open = value, bool(is_open)
    if low is not None and high is not None and not low_open and not high_open:
        return f"{noun} from {low:g} to {high:g}"
    parts = []
    if low is not None:
        parts.append(f"{'more than' if low_open else 'at least'} {low:g}")
    if high is not None:
        parts.append(f"{'less than' if high_open else 'at most'} {high:g}")
    return f"{noun} {' and '.join(parts)}" if parts else noun


def _union_help(root: type[BaseModel], loc: Path) -> str:
    """_union_help: what a union field takes, from its declared branches."""
    ann = _annotation_at(root, loc)
    choices = []
    for arg in typing.get_args(ann):
        if typing.get_origin(arg) is typing.Literal:
            choices += [str(v) for v in typing.get_args(arg)]
        elif typing.get_origin(arg) is list:
            item = typing.get_args(arg)[0]
            is_match = typing.get_origin(item) is dict
            choices.append('a list of matches such as {user: "team-*"}' if is_match else "a list")
    return " or ".join(choices) or "see docs/kquota-yaml.md"
