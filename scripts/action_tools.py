"""The GitHub Action's text work (scripts/action-run calls it): standard library only.

It runs in the Action's Python (actions/setup-python), beside kquota, never inside it:

  annotate FILE            validate's ``file:line:col: message`` lines as ``::error`` commands
  apply-summary LOG CODE   a short markdown report of an apply: committed, verified, audit
  failed COMMAND CODE ERR  the markdown report of a failed plan or drift: what kquota said
  error TITLE FILE         an ``::error`` command: TITLE and FILE's last line, escaped
  find-comment LOGIN MARK  the id of the last comment LOGIN wrote that starts with MARK,
                           from ``gh api …/comments --paginate`` on standard input
  find-issue LOGIN MARK    the number of the last open issue (not a pull request) LOGIN
                           opened whose body starts with MARK, from ``gh api …/issues``
  comment-body MD MARKER   the comment: MARKER, the report cut to fit GitHub's limit at a line
                           outside any open element (saying where the whole report is), and
                           a footer naming the commit and linking the run

Everything kquota printed is data here: it lands in fenced code blocks (longer than any run
of backticks in it) or in escaped workflow-command fields, never as markup or as a command.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from pathlib import Path

COMMENT_LIMIT = 65_536
"""GitHub refuses an issue comment longer than this many characters."""

_PROBLEM = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")
_APPLY_LINES = re.compile(
    r"^(committed |verified|verification|validate-only|nothing to apply|audit|failed |"
    r"error: |  )"
)
_BACKTICKS = re.compile(r"`+")
_FENCE = re.compile(r"^(?:>\s?)*\s{0,3}(`{3,}|~{3,})")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL = re.compile(r"https://[A-Za-z0-9.-]+(:\d+)?")


def escape_data(text: str) -> str:
    """escape_data is GitHub's escaping of a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """escape_property is GitHub's escaping of a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(output: str, workspace: str | None, cwd: str) -> list[str]:
    """annotations turns validate's problems into ``::error`` commands, file paths made
    relative to the repository (the workspace), as GitHub places annotations."""
    out = []
    for raw in output.splitlines():
        m = _PROBLEM.match(raw)
        if m is None:
            continue
        path = Path(cwd, m["file"]).resolve()
        if workspace:
            with contextlib.suppress(ValueError):
                path = path.relative_to(Path(workspace).resolve())
        props = f"file={escape_property(str(path))},line={m['line']},col={m['col']}"
        out.append(f"::error {props}::{escape_data(m['message'])}")
    return out


def code_block(text: str, info: str = "text") -> str:
    """code_block fences ``text`` so that nothing in it can close the fence."""
    longest = max((len(r) for r in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}\n"


def apply_summary(log: str, code: int) -> str:
    """apply_summary is the report of an apply: its outcome and the lines that say what was
    committed, verified and audited (the whole output is in the job's log)."""
    if code == 0:
        head = "**Applied.**"
    elif code == 3:
        head = "**Committed and verified, but not audited** (exit 3)."
    else:
        head = f"**kquota apply failed** (exit {code})."
    lines = [line for line in log.splitlines() if _APPLY_LINES.match(line)]
    body = code_block("\n".join(lines[:40] or ["(kquota printed no outcome)"]))
    more = f"\n_{len(lines) - 40} more lines in the job's log._\n" if len(lines) > 40 else ""
    return f"### kquota apply\n\n{head}\n\n{body}{more}"


def failed(command: str, code: int, err: str) -> str:
    """failed is the report of a plan or drift that did not run: what kquota said."""
    return f"**kquota {command} failed** (exit {code}):\n\n{code_block(err or '(no output)')}"


def find_comment(listing: str, login: str, marker: str) -> str:
    """find_comment is the id of the last comment ``login`` wrote that starts with
    ``marker``: a comment anyone else wrote is never edited, whatever it carries."""
    found = [c for c in _pages(listing) if _marked_by(c, login, marker)]
    return str(found[-1]["id"]) if found else ""


def find_issue(listing: str, login: str, marker: str) -> str:
    """find_issue is the number of the last issue ``login`` opened whose body starts with
    ``marker``; a pull request (the issues API lists them too) or anyone else's issue is
    never edited."""
    found = [c for c in _pages(listing) if "pull_request" not in c and _marked_by(c, login, marker)]
    return str(found[-1]["number"]) if found else ""


def _marked_by(item: dict[str, object], login: str, marker: str) -> bool:
    user = item.get("user") or {}
    body = item.get("body") or ""
    return (
        isinstance(user, dict)
        and user.get("login") == login
        and isinstance(body, str)
        and body.startswith(marker)
    )


def _pages(listing: str) -> list[dict[str, object]]:
    """_pages: every object of ``gh api --paginate``'s output (one JSON array per page)."""
    out = []
    decoder = json.JSONDecoder()
    i = 0
    while i < len(listing):
        if listing[i].isspace():
            i += 1
            continue
        page, i = decoder.raw_decode(listing, i)
        out += [c for c in page if isinstance(c, dict)] if isinstance(page, list) else []
    return out


def footer(env: dict[str, str]) -> str:
    """footer names the commit the report is of and links the workflow run."""
    parts = []
    sha = env.get("KQ_COMMIT") or env.get("GITHUB_SHA", "")
    if _SHA.fullmatch(sha):
        parts.append(f"commit `{sha[:12]}`")
    url = run_url(env)
    if url:
        parts.append(f"[workflow run]({url})")
    return f"\n---\n<sub>{' · '.join(['kquota', *parts])}</sub>\n" if parts else ""


def run_url(env: dict[str, str]) -> str:
    server = env.get("GITHUB_SERVER_URL", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    run = env.get("GITHUB_RUN_ID", "")
    if _URL.fullmatch(server) and _REPO.fullmatch(repo) and run.isdigit():
        return f"{server}/{repo}/actions/runs/{run}"
    return ""


def size(text: str) -> int:
    """size counts as GitHub may: UTF-16 code units, never fewer than the characters."""
    return len(text.encode("utf-16-le")) // 2


def comment_body(markdown: str, marker: str, env: dict[str, str]) -> str:
    """comment_body is the whole comment, under :data:`COMMENT_LIMIT`. A report too long is
    cut at the last line where no ``<details>``, code fence or HTML comment is open, and a
    visible note says how much is left out and where the whole report is."""
    head, foot = f"{marker}\n", footer(env)
    if size(head + markdown + foot) <= COMMENT_LIMIT:
        return head + markdown + foot
    note = _truncation_note(env, 0, 0)
    budget = COMMENT_LIMIT - size(head + foot + note) - 64  # the note's numbers grow a little
    lines = markdown.splitlines(keepends=True)
    used = cut = 0
    depth, fence, comment = 0, "", False
    for n, line in enumerate(lines):
        used += size(line)
        if used > budget:
            break
        depth, fence, comment = _open_after(line, depth, fence, comment)
        if depth == 0 and not fence and not comment:
            cut = n + 1
    kept = "".join(lines[:cut])
    return head + kept + _truncation_note(env, cut, len(lines)) + foot


def _open_after(line: str, depth: int, fence: str, comment: bool) -> tuple[int, str, bool]:
    """_open_after: what is still open after ``line``: ``<details>`` depth, fence, comment."""
    m = _FENCE.match(line)
    if fence:
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = ""
        return depth, fence, comment
    if m:
        return depth, m.group(1), comment
    if comment:
        return depth, fence, "-->" not in line
    depth += len(re.findall(r"<details\b", line, re.I)) - len(re.findall(r"</details>", line, re.I))
    if "<!--" in line:
        comment = "-->" not in line[line.rindex("<!--") :]
    return max(depth, 0), fence, comment


def _truncation_note(env: dict[str, str], shown: int, total: int) -> str:
    where = "this run's job summary"
    url = run_url(env)
    if url:
        where = f"[this run's job summary]({url})"
    plan = env.get("KQ_PLAN_FILE", "")
    saved = ""
    if plan:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(plan))
        saved = f" and in the saved plan `{name}` (its artifact; `kquota show` renders it)"
    return (
        f"\n> [!WARNING]\n> **Cut to fit GitHub's comment limit:** {shown} of {total} lines "
        f"shown. The whole report is in {where}{saved}.\n"
    )


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    env = dict(os.environ)
    if command == "annotate":
        text = Path(args[0]).read_text(encoding="utf-8", errors="replace")
        for line in annotations(text, env.get("GITHUB_WORKSPACE"), os.getcwd()):
            print(line)
    elif command == "apply-summary":
        text = Path(args[0]).read_text(encoding="utf-8", errors="replace")
        sys.stdout.write(apply_summary(text, int(args[1])))
    elif command == "failed":
        text = Path(args[2]).read_text(encoding="utf-8", errors="replace")
        sys.stdout.write(failed(args[0], int(args[1]), text))
    elif command == "error":
        lines = Path(args[1]).read_text(encoding="utf-8", errors="replace").splitlines() or [""]
        print(f"::error title={escape_property(args[0])}::{escape_data(lines[-1])}")
    elif command == "find-comment":
        print(find_comment(sys.stdin.read(), args[0], args[1]))
    elif command == "find-issue":
        print(find_issue(sys.stdin.read(), args[0], args[1]))
    elif command == "comment-body":
        text = Path(args[0]).read_text(encoding="utf-8", errors="replace")
        sys.stdout.write(comment_body(text, args[1], env))
    else:
        print(f"action_tools: unknown command {command!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
