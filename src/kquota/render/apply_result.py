"""The outcome of an apply as JSON (``kquota apply --result FILE``): what a CI job builds its
summary from, instead of reading the log.

One object, outcome first: ``applied`` (every change committed and verified), ``nothing to
do``, ``failed`` (something was not committed, verified or audited: ``error`` says what,
``committed`` what was written anyway) or ``refused`` (stopped before the first write: a
guard, a check, a bad input, no connection; nothing was committed). Then each committed
entity with its ops (each with its direction and percent, as the JSON plan's ``groups``),
what failed and what was left uncertain, verification, and the audit. Names are JSON
strings: a consumer escapes them for its own medium.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from kquota.model import Entity
from kquota.plan.types import Alteration
from kquota.render.apply_report import AppliedReport
from kquota.render.change_groups import op_data
from kquota.render.failures import Failure

RESULT_FORMAT_VERSION = 1
APPLIED, NOTHING, FAILED, REFUSED = "applied", "nothing to do", "failed", "refused"


def _entities(entities: Sequence[Entity]) -> list[dict[str, str | None]]:
    return [e.to_json() for e in entities]


def _failures(failures: Sequence[Failure]) -> list[dict[str, Any]]:
    return [
        {"entity": f.entity.to_json(), "error": f.error_name, "message": f.message}
        for f in failures
    ]


def _committed(committed: Sequence[object]) -> list[dict[str, Any]]:
    return [
        {"entity": a.entity.to_json(), "change": a.kind.word, "ops": [op_data(o) for o in a.ops]}
        for a in committed
        if isinstance(a, Alteration)
    ]


def result_data(
    *,
    cluster: str | None,
    total: int | None,
    report: AppliedReport | None,
    audit: tuple[bool, str] | None,
    error: str | None,
    exit_code: int,
) -> dict[str, Any]:
    """result_data is the outcome as data. ``total``: the plan's alterations (None when no
    plan was read); ``report`` None: nothing was committed (an empty plan, or a stop before
    the commit); ``audit``: (confirmed, message) when an audit topic was asked for;
    ``error``: the error kquota printed, if any."""
    committed = [] if report is None else _committed(report.committed)
    if exit_code == 0:
        outcome = NOTHING if not committed else APPLIED
    elif report is None:
        outcome = REFUSED
    else:
        outcome = FAILED
    verified: bool | None = None
    if report is not None and committed:
        verified = not (report.unconverged or report.overwritten) and report.stopped_by in (
            None,
            "connection",
        )
    return {
        "format_version": RESULT_FORMAT_VERSION,
        "outcome": outcome,
        "exit_code": exit_code,
        "error": error,
        "cluster": cluster,
        "total": total,
        "committed": committed,
        "already_applied": _entities([] if report is None else report.already_applied),
        "failed": _failures([] if report is None else report.failed),
        "validation_failures": _failures([] if report is None else report.validation_failures),
        "uncertain": _entities([] if report is None else report.uncertain),
        "not_attempted": _entities([] if report is None else report.not_attempted),
        "stopped": None if report is None else report.interrupted,
        "verified": verified,
        "unconverged": _entities([] if report is None else report.unconverged),
        "overwritten": [
            {"entity": e.to_json(), "how": how}
            for e, how in ([] if report is None else report.overwritten)
        ],
        "audit": None if audit is None else {"confirmed": audit[0], "message": audit[1]},
    }


def render_result(data: dict[str, Any]) -> str:
    """render_result is :func:`result_data`'s data as indented JSON, newline-terminated."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
