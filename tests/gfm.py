"""gfm: read markdown as github.com does, for tests.

cmark-gfm (GitHub's own parser, via cmarkgfm) with the extensions GitHub turns on: table,
autolink, tagfilter, strikethrough and task lists. :func:`parse` gives a small tree of the
HTML it makes, so a test can check structure (tables, code spans, links) and the text a
reader sees, not bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

EXTENSIONS = ("table", "autolink", "tagfilter", "strikethrough", "tasklist")
_VOID = frozenset({"br", "hr", "img", "input"})


def to_html(markdown: str) -> str:
    """to_html renders as github.com: raw HTML is kept (then sanitised by GitHub), so a
    test sees any HTML a name could smuggle in."""
    return cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=Options.CMARK_OPT_UNSAFE, extensions=list(EXTENSIONS)
    )


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def outside_code(self) -> str:
        """outside_code is the text outside code spans and blocks: where GitHub's own filters
        (@mention, #123, :emoji:) act on the rendered page."""
        return "".join(
            c if isinstance(c, str) else ("" if c.tag == "code" else c.outside_code())
            for c in self.children
        )

    def all(self, tag: str) -> list[Node]:
        found = []
        for c in self.children:
            if isinstance(c, Node):
                if c.tag == tag:
                    found.append(c)
                found += c.all(tag)
        return found

    def tags(self) -> set[str]:
        out = set()
        for c in self.children:
            if isinstance(c, Node):
                out.add(c.tag)
                out |= c.tags()
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root")
        self.stack = [self.root]
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


@dataclass
class Doc:
    root: Node
    comments: list[str]
    html: str

    def tables(self) -> list[Table]:
        return [Table.of(t) for t in self.root.all("table")]

    def text(self) -> str:
        return self.root.text()


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    row_cells: list[int]

    @classmethod
    def of(cls, node: Node) -> Table:
        header = [th.text().strip() for th in node.all("th")]
        rows, counts = [], []
        for body in node.all("tbody"):
            for tr in body.all("tr"):
                cells = tr.all("td")
                counts.append(len(cells))
                rows.append([td.text().strip() for td in cells])
        return cls(header, rows, counts)

    def column(self, name: str) -> list[str]:
        i = self.header.index(name)
        return [r[i] for r in self.rows]


def parse(markdown: str) -> Doc:
    html = to_html(markdown)
    b = _Builder()
    b.feed(html)
    b.close()
    return Doc(b.root, b.comments, html)


def assert_aligned(markdown: str) -> Doc:
    """assert_aligned: every table row has as many cells as its header's delimiter row.

    cmark-gfm pads short rows and drops extra cells in its HTML, so alignment is checked
    on the source too: each row line of a table splits into as many cells as its header."""
    doc = parse(markdown)
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _is_delimiter(lines[i + 1]) and line.startswith("|"):
            want = _cells(line)
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                assert _cells(lines[j]) == want, (
                    f"line {j + 1}: {_cells(lines[j])} cells under a header of {want}: {lines[j]!r}"
                )
                j += 1
    return doc


def _is_delimiter(line: str) -> bool:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return bool(cells) and all(c and set(c) <= set("-:") for c in cells)


def _cells(line: str) -> int:
    n, i, body = 0, 0, line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    n = 1
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            i += 2
            continue
        if body[i] == "|":
            n += 1
        i += 1
    return n
