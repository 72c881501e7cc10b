"""Reading one file into nodes: the scanner when the file has the canonical shape, else the
general reader when it is written in block style and one-line flow, else libyaml's composer.

Which reader ran never changes the result (same nodes, same positions, same scalar
resolution); it only changes the time. See :mod:`kquota.desired.scan`,
:mod:`kquota.desired.general` and :mod:`kquota.desired.nodes`.
"""

from __future__ import annotations

from kquota.desired.document import DocumentReader, read_document
from kquota.desired.fastpath import parse_canonical, plain_lines
from kquota.desired.general import read_general
from kquota.desired.nodes import Node, YAMLProblem, compose
from kquota.desired.parsed import ParsedFile
from kquota.desired.problems import Problems, SourceLocation
from kquota.desired.scan import scan_canonical
from kquota.display import safe_text

_YAML_ALLOWED = "well-formed YAML, one document per file"


def read_file(file: str, data: bytes, problems: Problems) -> ParsedFile | None:
    """read_file reads and validates one file; None when it is not YAML (problems say why).

    The canonical shape is scanned in one pass, other block and one-line flow styles read by
    the general reader, both with their entries validated as they are read (plainly valid
    ones from their tokens, without nodes), so their nodes never all exist at once; any
    other file is read whole by :func:`read_nodes`. Either way the entries, problems and
    positions are the same.
    """
    try:
        text: str | None = plain_lines(data.decode("utf-8"))
    except UnicodeDecodeError:
        text = None
    if text is not None:
        found = Problems()
        document = DocumentReader(file, found)
        root = scan_canonical(text, document.entry, document.flow_entry, document.entry_lines)
        if root is None:
            found = Problems()
            document = DocumentReader(file, found)
            root = read_general(text, document.entry, document.general_entry, plain=True)
        if root is not None:
            parsed = document.finish(root)
            problems.items.extend(found.items)
            problems.warned.extend(found.warned)
            return parsed
    root, ok = read_nodes(file, data, problems)
    return read_document(file, root, problems) if ok else None


def read_nodes(file: str, data: bytes, problems: Problems) -> tuple[Node | None, bool]:
    """read_nodes parses ``data``; returns (root or None, ok). Syntax errors go to problems."""
    try:
        text = data.decode("utf-8")
        root = parse_canonical(text)
        if root is None:
            root = read_general(text)
        if root is not None:
            return root, True
    except UnicodeDecodeError:
        pass  # libyaml also reads UTF-16 with a BOM, and words its own error otherwise
    try:
        return compose(data), True
    except YAMLProblem as e:
        # Escaped: a tag or character quoted from the file must not reach a terminal raw.
        at = SourceLocation(file, e.line, e.col)
        problems.add(at, f"invalid YAML: {safe_text(e.what)}", _YAML_ALLOWED)
    return None, False
