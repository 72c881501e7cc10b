"""The GitHub Action's text work (scripts/action-run calls it): standard library only.

It runs in the Action's Python (actions/setup-python), beside kquota, never inside it:

  annotate FILE            validate's ``file:line:col: message`` lines as ``::error`` commands
  apply-summary LOG CODE RESULT
                           the markdown report of an apply, from its JSON result
                           (``kquota apply --result``): the outcome first, then the
                           entities committed with their changes, verification, audit
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
from typing import Any

FULL_PLAN_AT = "the JSON plan (`kquota plan --format json`)"
"""Where kquota's markdown plan says the full plan is (kquota.render.markdown.FULL_PLAN_AT)."""
COMMENT_LIMIT = 65_536
"""GitHub refuses an issue comment longer than this many characters."""

_PROBLEM = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")
_APPLY_ROWS = 50
"""Committed entities listed in the apply's report; the rest are counted (the job's log and
the result file have them all)."""
_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_BYTE_KEYS = ("producer_byte_rate", "consumer_byte_rate")
# Characters that mean something to GitHub's markdown (or its mentions and emoji) inside a
# table cell, as character references: a name shows as itself and never as markup.
_CELL = {c: f"&#{ord(c)};" for c in "\\`*_[]<>&|~@:$#"}
_BACKTICKS = re.compile(r"`+")
_FENCE = re.compile(r"^(?:>\s?)*\s{0,3}(`{3,}|~{3,})")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL = re.compile(r"https://[A-Za-z0-9.-]+(:\d+)?")
_ARTIFACT = re.compile(
    r"https://[A-Za-z0-9.-]+(:\d+)?/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/actions/runs/\d+/artifacts/\d+"
)


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


def cell(text: str) -> str:
    """cell is ``text`` safe in a markdown table cell: markup characters as references,
    control and invisible characters as visible escapes, on one line."""
    out = []
    for c in text:
        if c in _CELL:
            out.append(_CELL[c])
        elif not c.isprintable() or c.isspace() and c != " ":
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


def entity_text(entity: object) -> str:
    """entity_text is kquota's form of an entity from its JSON: ``{user=alice}``; the
    default entity's name (JSON null) is ``<default>``."""
    if not isinstance(entity, dict):
        return "?"
    parts = [f"{t}={'<default>' if n is None else n}" for t, n in entity.items()]
    return "{" + ", ".join(parts) + "}"


def _value(key: str, value: object) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "unlimited"
    shown = f"{value:g}" if isinstance(value, float) and not value.is_integer() else f"{value:.0f}"
    if key in _BYTE_KEYS and value >= 1024:
        scaled, unit = float(value), "B"
        for u in _UNITS:
            if scaled < 1024:
                break
            scaled, unit = scaled / 1024, u
        human = f"{scaled:.2f}".rstrip("0").rstrip(".")
        return f"{shown} ({human} {unit}/s)"
    return shown


def _change(op: dict[str, Any]) -> str:
    direction = op.get("direction")
    pct = op.get("percent")
    size = "" if not isinstance(pct, (int, float)) else f"{abs(pct):g}%"
    return {
        "lower": f"▼{size}",
        "higher": f"▲{size}",
        "new": "new limit",
        "removed": "▲\u00a0removed",
        "same": "=\u00a0same",
    }.get(str(direction), "")


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def _outcome(result: dict[str, Any], code: int) -> str:
    """_outcome is the report's first line: what happened, a failure's decisive words."""
    outcome = result.get("outcome")
    committed = len(result.get("committed") or [])
    total = result.get("total")
    of = f" of {total}" if isinstance(total, int) else ""
    error = _first_line(result.get("error"))
    if outcome == "applied":
        return f"**Applied:** {committed}{of} entities committed and verified."
    if outcome == "nothing to do":
        return "**Nothing to do:** the cluster already matches the desired state."
    if outcome == "refused":
        why = cell(error or "see the job's log")
        return f"**Not applied** (exit {code}): {why}. Nothing was committed."
    stopped = _first_line(result.get("stopped"))
    why = error or stopped or _failure_words(result) or "see the job's log"
    return f"**Failed** (exit {code}): {cell(why)}. Committed {committed}{of} entities."


def _failure_words(result: dict[str, Any]) -> str:
    for field in ("validation_failures", "failed"):
        failures = result.get(field) or []
        if failures:
            f = failures[0]
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            return f"{entity_text(f.get('entity'))}: {f.get('error')}{more}"
    if result.get("unconverged"):
        return "verification: committed changes do not show yet"
    if result.get("overwritten"):
        return "another writer changed entities this run wrote"
    return ""


def _committed_table(result: dict[str, Any]) -> list[str]:
    committed = result.get("committed") or []
    if not committed:
        return []
    rows = ["| | entity | key | before | after | change |", "|---|---|---|---:|---:|---|"]
    glyphs = {"create": "+", "update": "~", "delete": "-"}
    for alteration in committed[:_APPLY_ROWS]:
        first = True
        for op in alteration.get("ops") or []:
            key = str(op.get("key"))
            glyph = f"`{glyphs.get(str(alteration.get('change')), '?')}`" if first else ""
            entity = f"<code>{cell(entity_text(alteration.get('entity')))}</code>" if first else ""
            before = "" if op.get("before") is None else _value(key, op.get("before"))
            after = "unlimited" if op.get("remove") else _value(key, op.get("value"))
            rows.append(
                f"| {glyph} | {entity} | <code>{cell(key)}</code> | {before} | {after} | "
                f"{_change(op)} |"
            )
            first = False
    if len(committed) > _APPLY_ROWS:
        rows.append(f"| | … and {len(committed) - _APPLY_ROWS} more entities | | | | |")
    return ["#### Committed", "", *rows, ""]


def _problems(result: dict[str, Any]) -> list[str]:
    out = []
    for field, title in (
        ("validation_failures", "Refused by the broker's validation (nothing committed)"),
        ("failed", "Not committed"),
    ):
        failures = result.get(field) or []
        if failures:
            out += [f"#### {title}: {len(failures)}", "", "| entity | error | message |"]
            out.append("|---|---|---|")
            for f in failures[:_APPLY_ROWS]:
                out.append(
                    f"| <code>{cell(entity_text(f.get('entity')))}</code> | "
                    f"{cell(str(f.get('error')))} | {cell(str(f.get('message') or ''))} |"
                )
            if len(failures) > _APPLY_ROWS:
                out.append(f"| … and {len(failures) - _APPLY_ROWS} more | | |")
            out.append("")
    for field, words in (
        ("uncertain", "may or may not have been committed"),
        ("not_attempted", "were not attempted"),
    ):
        n = len(result.get(field) or [])
        if n:
            out += [f"- {n} entities {words}: run apply again to converge.", ""]
    return out


def _verification(result: dict[str, Any]) -> list[str]:
    out = []
    verified = result.get("verified")
    if verified is True:
        out.append("- **Verified:** the cluster shows every committed change.")
    elif verified is False:
        late = len(result.get("unconverged") or [])
        over = len(result.get("overwritten") or [])
        if late:
            out.append(f"- **Not verified:** {late} committed entities do not show their changes.")
        if over:
            out.append(f"- **Overwritten:** another writer changed {over} entities after this run.")
        if not late and not over:
            out.append("- **Not verified:** verification was cut short.")
    audit = result.get("audit")
    if isinstance(audit, dict):
        state = "Audited" if audit.get("confirmed") else "Not audited"
        out.append(f"- **{state}:** {cell(_first_line(audit.get('message')))}")
    return [*out, ""] if out else []


def apply_summary(log: str, code: int, result_text: str | None) -> str:
    """apply_summary is the report of an apply, from its JSON result: the outcome first (a
    failure's decisive words in it), the entities committed with their changes, what failed,
    verification and audit. Without a result (kquota stopped before writing one), the
    outcome and the log's last error line."""
    result: dict[str, Any] | None = None
    if result_text:
        with contextlib.suppress(ValueError):
            loaded = json.loads(result_text)
            result = loaded if isinstance(loaded, dict) else None
    if result is None:
        errors = [line for line in log.splitlines() if line.startswith("error: ")]
        why = f": {cell(errors[-1].removeprefix('error: '))}" if errors else ""
        head = f"**kquota apply failed** (exit {code}){why}" if code else "**Applied.**"
        return f"### kquota apply\n\n{head}\n\n_No result was written; the job's log has it all._\n"
    cluster = result.get("cluster")
    title = "### kquota apply" + (
        f" for cluster <code>{cell(str(cluster))}</code>" if cluster else ""
    )
    lines = [title, "", _outcome(result, code), ""]
    lines += _committed_table(result) + _problems(result) + _verification(result)
    return "\n".join(lines).rstrip("\n") + "\n"


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
    """footer names the commit the report is of and links the workflow run and the saved
    plan's artifact."""
    parts = []
    sha = env.get("KQ_COMMIT") or env.get("GITHUB_SHA", "")
    if _SHA.fullmatch(sha):
        parts.append(f"commit `{sha[:12]}`")
    url = run_url(env)
    if url:
        parts.append(f"[workflow run]({url})")
    artifact = plan_url(env)
    if artifact:
        parts.append(f"[saved plan]({artifact})")
    return f"\n---\n<sub>{' · '.join(['kquota', *parts])}</sub>\n" if parts else ""


def run_url(env: dict[str, str]) -> str:
    server = env.get("GITHUB_SERVER_URL", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    run = env.get("GITHUB_RUN_ID", "")
    if _URL.fullmatch(server) and _REPO.fullmatch(repo) and run.isdigit():
        return f"{server}/{repo}/actions/runs/{run}"
    return ""


def plan_url(env: dict[str, str]) -> str:
    """plan_url is the saved plan's artifact (upload-artifact's artifact-url), on the run's
    server, or nothing."""
    url = env.get("KQ_PLAN_URL", "")
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    if _URL.fullmatch(server) and _ARTIFACT.fullmatch(url) and url.startswith(server + "/"):
        return url
    return ""


def size(text: str) -> int:
    """size counts as GitHub may: UTF-16 code units, never fewer than the characters."""
    return len(text.encode("utf-16-le")) // 2


def comment_body(markdown: str, marker: str, env: dict[str, str]) -> str:
    """comment_body is the whole comment, under :data:`COMMENT_LIMIT`. A report too long is
    cut at the last line where no ``<details>``, code fence or HTML comment is open, and a
    visible note says how much is left out and where the whole report is."""
    head, foot = f"{marker}\n", footer(env)
    artifact = plan_url(env)
    if artifact:
        # kquota's own note on what it left out names the JSON plan; here it is an artifact.
        markdown = markdown.replace(
            f"The full plan is in {FULL_PLAN_AT}.",
            f"The full plan is in {FULL_PLAN_AT}: [this run's saved plan]({artifact}).",
        )
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
        artifact = plan_url(env)
        where_saved = f"[its artifact]({artifact})" if artifact else "its artifact"
        saved = f" and in the saved plan `{name}` ({where_saved}; `kquota show` renders it)"
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
        result = Path(args[2]) if len(args) > 2 else Path()
        found = len(args) > 2 and result.is_file()
        data = result.read_text(encoding="utf-8", errors="replace") if found else None
        sys.stdout.write(apply_summary(text, int(args[1]), data))
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
