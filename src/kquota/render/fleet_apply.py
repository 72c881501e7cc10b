"""The fleet apply report: per cluster committed / failed / not attempted, and how to resume.

Markdown follows the review-surface rules: every string kquota did not write (cluster names,
broker and audit messages) goes through :mod:`kquota.render.md_escape`.
"""

from __future__ import annotations

import json
import shlex

from kquota.display import safe_text
from kquota.plan.rollout import DONE, FleetApplyReport
from kquota.render import md_escape as md


def resume_command(report: FleetApplyReport) -> str:
    root = shlex.quote(str(report.desired_root)) if report.desired_root is not None else "ROOT"
    plans = shlex.quote(str(report.plans_dir))
    return safe_text(f"kquota fleet apply {plans} --desired {root} --resume")


def _counts(report: FleetApplyReport) -> str:
    done = sum(1 for c in report.clusters if c.status in DONE)
    return f"{done} of {len(report.clusters)} clusters done"


def render_text(report: FleetApplyReport) -> str:
    lines = []
    for c in report.clusters:
        detail = f": {safe_text(c.detail.splitlines()[0])}" if c.detail else ""
        lines.append(f"wave {c.wave}  {safe_text(c.cluster)}  {c.status}{detail}")
    if report.ok:
        lines.append(f"rollout complete: {_counts(report)}")
    else:
        lines.append(f"rollout stopped: {safe_text(report.stopped or '')}; {_counts(report)}")
        lines.append(f"resume with: {resume_command(report)}")
    return "\n".join(lines) + "\n"


def render_json(report: FleetApplyReport) -> str:
    data = report.to_data()
    if not report.ok:
        data["resume"] = resume_command(report)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_markdown(report: FleetApplyReport) -> str:
    head = "rollout complete" if report.ok else "rollout stopped"
    lines = [f"### kquota fleet apply: {head}, {_counts(report)}", ""]
    if not report.ok:
        lines += [f"Stopped: {md.text(report.stopped or '')}", ""]
    lines += ["| wave | cluster | status | detail |", "| ---: | --- | --- | --- |"]
    for c in report.clusters:
        detail = md.text(c.detail.splitlines()[0], cell=True) if c.detail else ""
        lines.append(f"| {c.wave} | {md.code(c.cluster, cell=True)} | {c.status} | {detail} |")
    if not report.ok:
        lines += [
            "",
            "Resume from the first cluster not done:",
            "",
            md.fenced(resume_command(report)),
        ]
    return "\n".join(lines) + "\n"
