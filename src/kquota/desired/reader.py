"""Reading one file into nodes: the fast path when the file has the canonical shape, else YAML.

Which reader ran never changes the result (same nodes, same positions, same scalar
resolution); it only changes the time. See :mod:`kquota.desired.fastpath`.
"""

from __future__ import annotations

import yaml

from kquota.desired.fastpath import parse_canonical
from kquota.desired.nodes import Node, compose
from kquota.desired.problems import Problems, SourceLocation

_YAML_ALLOWED = "well-formed YAML, one document per file"


def read_nodes(file: str, data: bytes, problems: Problems) -> tuple[Node | None, bool]:
    """read_nodes parses ``data``; returns (root or None, ok). Syntax errors go to problems."""
    try:
        root = parse_canonical(data.decode("utf-8"))
        if root is not None:
            return root, True
    except UnicodeDecodeError:
        pass  # libyaml also reads UTF-16 with a BOM, and words its own error otherwise
    try:
        return compose(data), True
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = " ".join(p for p in (e.context, e.problem) if p)
        problems.add(SourceLocation(file, line, col), f"invalid YAML: {what}", _YAML_ALLOWED)
    except yaml.YAMLError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        problems.add(SourceLocation(file, 1, 1), f"invalid YAML: {first}", _YAML_ALLOWED)
    except RecursionError:
        problems.add(SourceLocation(file, 1, 1), "YAML nested too deeply", _YAML_ALLOWED)
    return None, False
