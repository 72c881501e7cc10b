"""md_escape: the one escaping rule for GitHub-flavoured markdown (pull-request comments,
job summaries, drift reports).

Every string kquota did not write itself (entity names and types, quota keys, cluster and
file names, principal names, broker messages) reaches markdown through this module, and
only in one of three shapes:

- :func:`code`: a code span. Nothing inside a code span is markup: no emphasis, link,
  image, raw HTML or comment, heading, GFM autolink, and GitHub's own filters (``@mention``,
  ``#123``, ``:emoji:``) skip ``<code>``. The fence is one backtick longer than the longest
  run of backticks in the text, padded with a space where the text starts or ends with a
  backtick or a space, so any run of backticks stays text. In a table cell every ``|``
  becomes ``\\|`` (cmark-gfm splits cells before it reads code spans).
- :func:`html_code`: the same inside a raw HTML block (``<details><summary>…``), where
  markdown is not read: ``<code>`` with ``<``, ``>``, ``&`` and quotes as entities.
- :func:`text`: prose that may carry names (a guard's verdict). ASCII punctuation is
  backslash-escaped (no emphasis, heading, list, HTML, link or table syntax can start), and
  any word holding ``@``, ``#``, ``:`` or ``www.`` goes into a code span: GFM's autolinks
  and GitHub's mention and reference filters work on the rendered text, where a backslash
  no longer is.

All three first make the text one visible line with :func:`kquota.display.safe_text`
(control, format and default-ignorable characters as ``\\u…``), so a newline cannot end a
table row or open a block, and an invisible character cannot hide in a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kquota.display import safe_text
from kquota.model import Entity, display_entity

_BACKTICKS = re.compile(r"`+")
# Markup that can start anywhere in a line, and markup that can start only a word (a list, a
# heading, a setext underline, a quote, an ordered-list number).
_ANYWHERE = re.compile(r"([\\`*_\[\]<>&!|~])")
_WORD_START = re.compile(r"^([#+\-=>]|[0-9]+(?=[.)]))")
# Autolinks (GFM's www., scheme:// and e-mail addresses) and GitHub's @mention, #123 and
# :emoji: filters work on the rendered text: no backslash stops them, a code span does.
_NEEDS_CODE = re.compile(r"[@#]|www\.|://|(?:mailto|xmpp):|:[\w+-]+:", re.IGNORECASE)


def code(raw: str, *, cell: bool = False) -> str:
    """code is ``raw`` (any string) as a markdown code span; ``cell``: inside a table."""
    return _span(safe_text(raw), cell)


def entity(e: Entity, *, cell: bool = False) -> str:
    """entity is an entity's KIP-546 form (already made safe) as a markdown code span."""
    return _span(display_entity(e), cell)


def html_code(raw: str) -> str:
    """html_code is ``raw`` as ``<code>`` for a raw HTML block, where markdown is not read."""
    import html  # here: html.entities is 3 ms of the start of every command that renders

    return "<code>" + html.escape(safe_text(raw), quote=True) + "</code>"


def text(raw: str, *, cell: bool = False) -> str:
    """text is prose that may hold names, escaped to read as plain text (see the module)."""
    words = safe_text(raw).split(" ")
    out = []
    for word in words:
        if _NEEDS_CODE.search(word):
            out.append(_span(word, cell))
        else:
            escaped = _ANYWHERE.sub(r"\\\1", word)
            out.append(_WORD_START.sub(_escape_start, escaped))
    # Leading spaces would make an indented code block; runs of spaces read as one anyway.
    return " ".join(out).lstrip(" ")


def fenced(raw: str) -> str:
    """fenced is ``raw`` (several lines, e.g. a command's error output) as a fenced code
    block: each line made visible by safe_text, the fence longer than any run of backticks
    inside, so no line can close it. Nothing in a code block is markup."""
    return fenced_lines(raw.rstrip("\n").split("\n"))


def fenced_lines(items: Sequence[str]) -> str:
    """fenced_lines is :func:`fenced` with one line per item; a newline inside an item is
    shown (``\\x0a``), not followed."""
    lines = [safe_text(item) for item in items]
    longest = max((len(m) for line in lines for m in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence, *lines, fence]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m kquota.render.md_escape fenced|code|text``: standard input escaped for
    markdown on standard output, for scripts (the Action's error block)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    shapes = {"fenced": fenced, "code": code, "text": text}
    if len(args) != 1 or args[0] not in shapes:
        print("usage: python -m kquota.render.md_escape fenced|code|text", file=sys.stderr)
        return 2
    data = sys.stdin.read()
    out = shapes[args[0]](data if args[0] == "fenced" else data.rstrip("\n"))
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 0


def _escape_start(m: re.Match[str]) -> str:
    start = m.group(1)
    return start + "\\" if start[0].isdigit() else "\\" + start


def _span(safe: str, cell: bool) -> str:
    if not safe:
        return "` `"  # an empty code span is not one: show one space
    longest = max((len(m) for m in _BACKTICKS.findall(safe)), default=0)
    fence = "`" * (longest + 1)
    pad = (
        safe[0] == "`"
        or safe[-1] == "`"
        or (safe[0] == " " and safe[-1] == " " and safe.strip(" ") != "")
    )
    inner = f" {safe} " if pad else safe
    if cell:
        inner = inner.replace("|", "\\|")
    return fence + inner + fence


if __name__ == "__main__":
    raise SystemExit(main())
