"""The repository's GitHub Action (action.yml + scripts/action-run) and pre-commit hook.

GitHub's runner cannot run here, so the action is held to its promises in three real ways:
its body (scripts/action-run) runs against real files and kquota itself; actionlint reads
action.yml when a workflow uses it (wrong inputs fail); and the pre-commit hook runs through
the real pre-commit, which builds kquota into its own environment. Only GitHub's API is
faked (fake_gh: a script on PATH that records its calls), since no real one is reachable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

import gfm
from kquota.devbroker.launcher import BrokerInfo
from repo_root import ROOT

ACTION = ROOT / "action.yml"
RUN = ROOT / "scripts" / "action-run"
EXAMPLE = ROOT / "examples" / "gitops-repo"

GOOD_QUOTAS = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 1048576}
"""


def _action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _env(tmp_path: Path, **kq: str) -> dict[str, str]:
    env = dict(os.environ)
    # kquota of this checkout, from the interpreter running the tests.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["GITHUB_OUTPUT"] = str(tmp_path / "github_output")
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary.md")
    env["KQ_OUT_DIR"] = str(tmp_path / "out")
    env["GITHUB_WORKSPACE"] = kq.pop("workspace", str(tmp_path))
    env.update({f"KQ_{k.upper()}": v for k, v in kq.items()})
    return env


def _run(tmp_path: Path, cwd: Path, **kq: str) -> tuple[int, dict[str, str], str, str]:
    proc = subprocess.run(
        [str(RUN), "run"],
        cwd=cwd,
        env=_env(tmp_path, **kq),
        capture_output=True,
        text=True,
        timeout=120,
    )
    out_file = tmp_path / "github_output"
    lines = out_file.read_text(encoding="utf-8").splitlines() if out_file.exists() else []
    outputs = dict(line.split("=", 1) for line in lines)
    return proc.returncode, outputs, proc.stdout, proc.stderr


def _snapshot(path: Path, producer_byte_rate: float) -> Path:
    entry = {"entity": {"user": "alice"}, "quotas": {"producer_byte_rate": producer_byte_rate}}
    path.write_text(json.dumps({"format_version": 1, "entries": [entry]}), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / "quotas").mkdir(parents=True)
    (work / "quotas" / "team.yaml").write_text(GOOD_QUOTAS, encoding="utf-8")
    return work


@pytest.fixture
def stale(tmp_path: Path) -> Path:
    """A snapshot in which alice's quota differs from the desired state."""
    return _snapshot(tmp_path / "stale.json", 1024.0)


# --- action.yml -----------------------------------------------------------------------------


def test_action_is_composite_and_every_input_it_uses_is_declared_and_described() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {"command", "cluster", "args", "comment", "working-directory"} <= set(inputs)
    for name, spec in inputs.items():
        assert spec.get("description"), f"input {name} has no description"
    text = ACTION.read_text(encoding="utf-8")
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used <= set(inputs), used - set(inputs)
    # Credentials only through the step's env, never an input (GitHub logs inputs).
    assert "secrets." not in json.dumps(action)


def test_every_output_of_the_action_is_written_by_the_script() -> None:
    outputs = _action()["outputs"]
    script = RUN.read_text(encoding="utf-8")
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"
        assert re.search(rf"output {re.escape(name)} ", script), name


def test_pip_is_cached_keyed_on_kquotas_dependencies(tmp_path: Path) -> None:
    steps = _action()["runs"]["steps"]
    (i, setup), *_ = (
        (i, s) for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/setup-python")
    )
    assert setup["with"]["cache"] == "pip"
    assert "cache-key" in steps[i - 1]["run"]  # the key file is written first
    env = {**os.environ, "GITHUB_WORKSPACE": str(tmp_path), "KQ_VERSION": "1.2.3"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([str(RUN), "cache-key"], env=env, check=True, timeout=60)
    deps = (tmp_path / setup["with"]["cache-dependency-path"]).read_text(encoding="utf-8")
    assert deps.startswith("kquota==1.2.3\n# pyproject.toml\n")
    assert (ROOT / "pyproject.toml").read_text(encoding="utf-8") in deps
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=no"], cwd=tmp_path, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    assert status.stdout == ""  # the user's checkout stays clean


# --- scripts/action-run run -----------------------------------------------------------------


def test_plan_with_changes_succeeds_and_says_changed(
    tmp_path: Path, repo: Path, stale: Path
) -> None:
    code, outputs, stdout, _ = _run(tmp_path, repo, command="plan", args=f"--snapshot {stale}")
    assert code == 0
    assert outputs["exit-code"] == "2" and outputs["changed"] == "true"
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    assert "### kquota plan" in markdown and "producer_byte_rate" in markdown
    assert markdown in stdout
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == markdown
    saved = json.loads(Path(outputs["plan-file"]).read_text(encoding="utf-8"))
    assert saved["alterations"]


def test_plan_without_changes_says_unchanged(tmp_path: Path, repo: Path) -> None:
    snapshot = _snapshot(tmp_path / "same.json", 1048576.0)
    code, outputs, _, _ = _run(tmp_path, repo, command="plan", args=f"--snapshot {snapshot}")
    assert code == 0
    assert outputs["exit-code"] == "0" and outputs["changed"] == "false"


def test_a_failing_plan_fails_the_step_and_its_report_says_why(
    tmp_path: Path, repo: Path, stale: Path
) -> None:
    (repo / "quotas" / "bad.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {user: bob}\n    set: {producer_byte_rate: -5}\n",
        encoding="utf-8",
    )
    code, outputs, _, _ = _run(tmp_path, repo, command="plan", args=f"--snapshot {stale}")
    assert code == 1
    assert outputs["exit-code"] == "1" and outputs["changed"] == "false"
    assert "plan-file" not in outputs
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    assert "**kquota plan failed** (exit 1)" in markdown
    assert "bad.yaml:5" in markdown


def test_drift_fails_the_step_unless_told_not_to(tmp_path: Path, repo: Path, stale: Path) -> None:
    args = f"--snapshot {stale}"
    code, outputs, _, _ = _run(tmp_path, repo, command="drift", args=args, cluster="")
    assert code == 2 and outputs["changed"] == "true"
    (tmp_path / "github_output").unlink()
    code, outputs, _, _ = _run(tmp_path, repo, command="drift", args=args, fail_on_drift="false")
    assert code == 0 and outputs["exit-code"] == "2" and outputs["changed"] == "true"


def test_validate_passes_kquotas_exit_code_through(tmp_path: Path, repo: Path) -> None:
    assert _run(tmp_path, repo, command="validate")[0] == 0
    (repo / "quotas" / "bad.yaml").write_text("quotas: [", encoding="utf-8")
    code, _, stdout, _ = _run(tmp_path, repo, command="validate")
    assert code == 1 and "bad.yaml" in stdout


def test_an_unknown_command_is_refused(tmp_path: Path, repo: Path) -> None:
    code, _, _, stderr = _run(tmp_path, repo, command="destroy")
    assert code == 1
    assert "command must be one of validate, plan, apply, drift (got 'destroy')" in stderr


def test_args_never_pass_through_a_shell(tmp_path: Path, repo: Path) -> None:
    marker = tmp_path / "pwned"
    code, _, _, _ = _run(tmp_path, repo, command="validate", args=f"$(touch {marker}) ;")
    assert code != 0
    assert not marker.exists()


# --- the Actions log: kquota's output cannot become a workflow command ----------------------


def _commands(log: str) -> list[str]:
    """_commands are the workflow commands GitHub's runner would act on in ``log``: lines
    starting with ``::``, except between ``::stop-commands::TOKEN`` and ``::TOKEN::``."""
    found: list[str] = []
    stopped = ""
    for line in log.splitlines():
        if stopped:
            if line == f"::{stopped}::":
                stopped = ""
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.removeprefix("::stop-commands::")
            assert re.fullmatch(r"[0-9a-f]{32}", stopped), "the token must be random"
        elif line.startswith("::"):
            found.append(line)
    assert not stopped, "commands were never resumed"
    return found


def test_validate_problems_become_annotations_and_output_never_commands(
    tmp_path: Path, repo: Path
) -> None:
    # A real kquota line starting with '::': a problem in a file named like a command.
    (repo / "::add-mask::x,y.yaml").write_text(
        GOOD_QUOTAS.replace("1048576", "-5"), encoding="utf-8"
    )
    code, _, stdout, _ = _run(
        tmp_path, repo, command="validate", args="::add-mask::x,y.yaml", workspace=str(repo)
    )
    assert code == 1
    assert "\n::add-mask::x,y.yaml:5:31: producer_byte_rate = -5" in stdout  # text in the log
    # The one command is the problem's annotation, escaped by GitHub's rules.
    (annotation,) = _commands(stdout)
    assert annotation.startswith(
        "::error file=%3A%3Aadd-mask%3A%3Ax%2Cy.yaml,line=5,col=31::producer_byte_rate = -5: "
        "must be greater than 0; allowed: "
    )


def test_no_line_of_a_plan_becomes_a_command(tmp_path: Path, repo: Path, stale: Path) -> None:
    code, outputs, stdout, _ = _run(tmp_path, repo, command="plan", args=f"--snapshot {stale}")
    assert code == 0 and _commands(stdout) == []
    assert Path(outputs["markdown"]).read_text(encoding="utf-8") in stdout


def test_escaping_follows_githubs_rules() -> None:
    tools = _tools()
    assert tools.escape_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d"
    assert tools.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


# --- a plan a guard stops -------------------------------------------------------------------


def test_a_guard_stopped_plan_is_the_report_the_step_fails_and_the_plan_is_kept(
    tmp_path: Path, repo: Path, stale: Path
) -> None:
    (repo / "quotas" / "team.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n", encoding="utf-8"
    )
    code, outputs, stdout, _ = _run(
        tmp_path, repo, command="plan", args=f"--snapshot {stale} --prune"
    )
    assert code == 1
    assert outputs["exit-code"] == "1" and outputs["stopped"] == "true"
    assert outputs["changed"] == "true"
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    assert markdown.startswith("> [!CAUTION]\n> **Stopped: this plan will not be applied.**")
    assert "> **Mass-removal guard:** the desired state is empty" in markdown
    assert "`{user=alice}`" in markdown  # the whole plan, not one error line
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == markdown
    saved = json.loads(Path(outputs["plan-file"]).read_text(encoding="utf-8"))
    assert saved["summary"]["guard_violation"] and saved["alterations"]
    (error,) = _commands(stdout)
    assert error.startswith("::error title=kquota plan stopped::error: mass-removal guard")
    # Posted like any plan, verdict first.
    _, body = _comment(tmp_path, markdown, existing="[]")
    assert body.startswith("<!-- kquota-plan-prod -->\n> [!CAUTION]")


def test_apply_still_refuses_the_kept_plan_without_the_override(
    tmp_path: Path, repo: Path, stale: Path
) -> None:
    (repo / "quotas" / "team.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n", encoding="utf-8"
    )
    stopped = json.loads(_snapshot(tmp_path / "snap.json", 1024.0).read_text())
    stopped.update(cluster="127.0.0.1:1", cluster_id="c1")
    (tmp_path / "snap.json").write_text(json.dumps(stopped), encoding="utf-8")
    _, outputs, _, _ = _run(
        tmp_path, repo, command="plan", args=f"--snapshot {tmp_path / 'snap.json'} --prune"
    )
    plan_file = outputs["plan-file"]
    code, outputs, stdout, _ = _run(
        tmp_path, repo, command="apply", args=f"--bootstrap-server 127.0.0.1:1 {plan_file}"
    )
    assert code == 1
    assert "the mass-removal guard trips" in stdout and "nothing was applied" in stdout
    # the refusal's decisive words are the report's first line, and nothing else is there
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    first = markdown.splitlines()[2]
    assert first.startswith("**Not applied** (exit 1): ") and "mass-removal guard trips" in first
    assert first.endswith("Nothing was committed.") and len(markdown.splitlines()) == 3
    _, body = _comment(tmp_path, markdown, existing="[]")
    assert body.startswith(f"{MARKER}\n{markdown}")


# --- apply's report -------------------------------------------------------------------------


def _result(**fields: Any) -> str:
    """_result is a ``kquota apply --result`` document: for outcomes a real broker does not
    produce on demand (a partial failure), written here in the shape kquota writes."""
    data: dict[str, Any] = {
        "format_version": 1,
        "outcome": "applied",
        "exit_code": 0,
        "error": None,
        "cluster": "prod",
        "total": 1,
        "committed": [],
        "already_applied": [],
        "failed": [],
        "validation_failures": [],
        "uncertain": [],
        "not_attempted": [],
        "stopped": None,
        "verified": None,
        "unconverged": [],
        "overwritten": [],
        "audit": None,
    }
    data.update(fields)
    return json.dumps(data)


LOWERED = {
    "entity": {"user": "alice"},
    "change": "update",
    "ops": [
        {
            "key": "producer_byte_rate",
            "value": 2097152.0,
            "remove": False,
            "before": 8388608.0,
            "direction": "lower",
            "percent": -75.0,
        }
    ],
}


def test_apply_summary_of_a_partial_failure_leads_with_its_decisive_words() -> None:
    result = _result(
        outcome="failed",
        exit_code=1,
        total=3,
        committed=[LOWERED],
        failed=[{"entity": {"user": "bob"}, "error": "INVALID_REQUEST", "message": "no"}],
        not_attempted=[{"user": "carol"}],
        stopped="the connection broke: broker 1 went away",
        verified=True,
    )
    report = _tools().apply_summary("error: ignored, the result says it all\n", 1, result)
    lines = report.splitlines()
    assert lines[:3] == [
        "### kquota apply for cluster <code>prod</code>",
        "",
        "**Failed** (exit 1): the connection broke&#58; broker 1 went away. "
        "Committed 1 of 3 entities.",
    ]
    doc = gfm.assert_aligned(report)
    committed, failed = doc.tables()
    assert committed.header == ["", "entity", "key", "before", "after", "change"]
    assert committed.rows == [
        [
            "~",
            "{user=alice}",
            "producer_byte_rate",
            "8388608 (8 MiB/s)",
            "2097152 (2 MiB/s)",
            "▼75%",
        ]
    ]
    assert failed.rows == [["{user=bob}", "INVALID_REQUEST", "no"]]
    text = doc.text()
    assert "1 entities were not attempted" in text
    assert text.index("Committed") < text.index("Not committed") < text.index("Verified")


def test_apply_summary_of_nothing_and_of_an_unaudited_apply() -> None:
    tools = _tools()
    nothing = tools.apply_summary("", 0, _result(outcome="nothing to do", total=0))
    assert nothing.splitlines()[2] == (
        "**Nothing to do:** the cluster already matches the desired state."
    )
    assert "<table>" not in gfm.to_html(nothing)
    unaudited = _result(
        outcome="failed",
        exit_code=3,
        error="committed and verified, but the audit events were not confirmed",
        committed=[LOWERED],
        verified=True,
        audit={"confirmed": False, "message": "the audit events were not confirmed"},
    )
    lines = tools.apply_summary("", 3, unaudited).splitlines()
    assert lines[2].startswith("**Failed** (exit 3): committed and verified, but the audit")
    assert lines[-1] == "- **Not audited:** the audit events were not confirmed"


def test_apply_summary_names_are_data() -> None:
    hostile = "<b>x</b>|`y` [z](https://e.example) @team :smile: *w*\n"
    result = _result(
        cluster=hostile,
        committed=[{**LOWERED, "entity": {"user": hostile, "client-id": None}}],
        verified=True,
    )
    doc = gfm.assert_aligned(_tools().apply_summary("", 0, result))
    assert not {"a", "b", "em"} & doc.root.tags()
    [table] = doc.tables()
    assert (
        table.rows[0][1]
        == "{user=<b>x</b>|`y` [z](https://e.example) @team :smile: *w*\\x0a, client-id=<default>}"
    )


def test_apply_summary_without_a_result_gives_the_last_error() -> None:
    log = "kquota plan\nerror: first\nerror: cannot reach 127.0.0.1:1 | *bold*\n"
    report = _tools().apply_summary(log, 1, None)
    assert report.splitlines()[2] == (
        "**kquota apply failed** (exit 1): cannot reach 127.0.0.1&#58;1 &#124; &#42;bold&#42;"
    )


def test_a_failed_apply_reports_why_and_is_summarised(tmp_path: Path, repo: Path) -> None:
    code, outputs, stdout, _ = _run(
        tmp_path, repo, command="apply", args="--bootstrap-server 127.0.0.1:1 --timeout 5s"
    )
    assert code == 1 and outputs["exit-code"] == "1"
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    first = markdown.splitlines()[2]
    assert first.startswith("**Not applied** (exit 1): ") and "127.0.0.1" in first
    assert first.endswith("Nothing was committed.")
    assert "<table>" not in gfm.to_html(markdown)
    assert markdown in (tmp_path / "summary.md").read_text()
    assert _commands(stdout) == []


def test_apply_on_a_real_broker_reports_committed_and_verified(
    tmp_path: Path, repo: Path, kafka_broker: BrokerInfo
) -> None:
    user = f"action-{uuid.uuid4().hex[:8]}"
    (repo / "quotas" / "team.yaml").write_text(GOOD_QUOTAS.replace("alice", user), encoding="utf-8")
    code, outputs, stdout, _ = _run(
        tmp_path, repo, command="apply", args=f"--bootstrap-server {kafka_broker.bootstrap_servers}"
    )
    assert code == 0, stdout
    markdown = Path(outputs["markdown"]).read_text(encoding="utf-8")
    host, port = kafka_broker.bootstrap_servers.split(":")
    assert markdown.splitlines()[:3] == [
        f"### kquota apply for cluster <code>{host}&#58;{port}</code>",
        "",
        "**Applied:** 1 of 1 entities committed and verified.",
    ]
    doc = gfm.assert_aligned(markdown)
    [table] = doc.tables()
    assert table.rows == [
        ["+", f"{{user={user}}}", "producer_byte_rate", "", "1048576 (1 MiB/s)", "new limit"]
    ]
    assert doc.text().rstrip().endswith("Verified: the cluster shows every committed change.")
    # no discovery, capacity or plan noise from the log
    assert "kquota plan" not in markdown and "Plan:" not in markdown
    # and the comment step posts it as it is (GitHub's API faked)
    _, body = _comment(tmp_path, markdown, existing="[]")
    assert body == f"{MARKER}\n{markdown}"


# --- scripts/action-run comment (GitHub's API faked) ----------------------------------------

FAKE_GH = """\
#!/usr/bin/env bash
# fake_gh: records each call; `api user` answers $FAKE_GH_USER (or fails as it does for the
# workflow's GITHUB_TOKEN); the comment listing is the file $FAKE_GH_COMMENTS.
printf '%s\\n' "$*" >> "$FAKE_GH_LOG"
for a in "$@"; do
  case "$a" in body=@*) cp "${a#body=@}" "$FAKE_GH_LOG.body" ;; esac
done
prev=""
for a in "$@"; do
  if [ "$prev" = --body-file ]; then cp "$a" "$FAKE_GH_LOG.body"; fi
  prev="$a"
done
if [ "$1" = api ] && [ "$2" = user ]; then
  if [ -n "${FAKE_GH_USER:-}" ]; then echo "$FAKE_GH_USER"; exit 0; fi
  echo 'gh: Resource not accessible by integration (HTTP 403)' >&2
  exit 1
fi
if [ "$1" = api ] && [ "$2" = "repos/o/r/issues/7/comments" ]; then
  cat "$FAKE_GH_COMMENTS"
fi
if [ "$1" = api ] && [ "$2" = "repos/o/r/issues?state=open&per_page=100" ]; then
  cat "$FAKE_GH_COMMENTS"
fi
"""

MARKER = "<!-- kquota-plan-prod -->"


def _listing(*pages: list[tuple[int, str, str]]) -> str:
    """_listing is what ``gh api --paginate`` prints: one JSON array per page."""
    return "".join(
        json.dumps([{"id": i, "user": {"login": who}, "body": body} for i, who, body in page])
        for page in pages
    )


def _comment(
    tmp_path: Path,
    markdown: str,
    existing: str,
    *,
    user: str = "",
    with_gh: bool = True,
    command: str = "comment",
    **env_extra: str,
) -> tuple[list[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.unlink(missing_ok=True)
    if with_gh:
        gh.write_text(FAKE_GH, encoding="utf-8")
        gh.chmod(0o755)
    (tmp_path / "report.md").write_text(markdown, encoding="utf-8")
    (tmp_path / "comments").write_text(existing, encoding="utf-8")
    log = tmp_path / "gh.log"
    log.unlink(missing_ok=True)
    Path(f"{log}.body").unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "KQ_"))}
    env.update(
        PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        FAKE_GH_LOG=str(log),
        FAKE_GH_COMMENTS=str(tmp_path / "comments"),
        FAKE_GH_USER=user,
        GITHUB_REPOSITORY="o/r",
        KQ_PR_NUMBER="7",
        KQ_MARKDOWN=str(tmp_path / "report.md"),
        KQ_MARKER="kquota-plan-prod",
    )
    env.update(env_extra)
    proc = subprocess.run([str(RUN), command], env=env, capture_output=True, text=True, timeout=60)
    if not with_gh:
        return [proc.stderr], ""
    assert proc.returncode == 0, proc.stderr
    sent = Path(f"{log}.body")
    body = sent.read_text(encoding="utf-8") if sent.exists() else ""
    return log.read_text(encoding="utf-8").splitlines(), body


def test_comment_is_created_once_then_edited(tmp_path: Path) -> None:
    calls, body = _comment(tmp_path, "### kquota plan\n", existing="[]")
    assert calls[-1].startswith("pr comment 7 --repo o/r --body-file ")
    assert body == f"{MARKER}\n### kquota plan\n"
    mine = _listing([(4242, "github-actions[bot]", f"{body}")])
    calls, body = _comment(tmp_path, "### kquota plan v2\n", existing=mine)
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/comments/4242 -F body=@")
    assert body.endswith("### kquota plan v2\n")


def test_a_comment_someone_else_wrote_is_never_edited(tmp_path: Path) -> None:
    planted = f"{MARKER}\nplanted by mallory"
    # GITHUB_TOKEN: `gh api user` is refused, the identity is github-actions[bot].
    listing = _listing(
        [(1, "mallory", planted), (2, "github-actions[bot]", f"{MARKER}\nold plan")],
        [(3, "mallory", planted), (4, "github-actions[bot]", "<!-- kquota-plan-staging -->")],
    )
    calls, _ = _comment(tmp_path, "### kquota plan\n", existing=listing)
    assert calls[0] == "api user --jq .login"
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/comments/2 ")
    # Only someone else's marked comments: a new comment, none edited.
    calls, _ = _comment(tmp_path, "### kquota plan\n", existing=_listing([(1, "mallory", planted)]))
    assert not any("PATCH" in c for c in calls) and calls[-1].startswith("pr comment 7 ")
    # A personal token: its own login, and the bot's comments are someone else's too.
    listing = _listing([(2, "github-actions[bot]", planted), (5, "kquota-bot", f"{MARKER}\nx")])
    calls, _ = _comment(tmp_path, "### kquota plan\n", existing=listing, user="kquota-bot")
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/comments/5 ")


def test_the_comment_names_the_commit_and_links_the_run(tmp_path: Path) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    _, body = _comment(
        tmp_path, "### kquota plan\n", existing="[]",
        KQ_COMMIT=sha, GITHUB_SERVER_URL="https://github.com", GITHUB_RUN_ID="99",
    )  # fmt: skip
    assert body.startswith(f"{MARKER}\n### kquota plan\n")
    assert "commit `0123456789ab`" in body
    assert "[workflow run](https://github.com/o/r/actions/runs/99)" in body
    # Values that are not what GitHub sets are left out, never pasted into the comment.
    _, body = _comment(
        tmp_path, "### kquota plan\n", existing="[]",
        KQ_COMMIT="](javascript:x)", GITHUB_SERVER_URL="javascript:alert(1)//", GITHUB_RUN_ID="9",
    )  # fmt: skip
    assert body == f"{MARKER}\n### kquota plan\n"


def test_a_plan_too_big_for_a_comment_links_its_saved_plan(tmp_path: Path) -> None:
    from kquota.model import Entity
    from kquota.plan.planner import plan as make_plan
    from kquota.policy import Policy
    from kquota.render import markdown as render_markdown

    desired = {
        Entity.of({"user": f"u{i:05}"}): {"producer_byte_rate": 1024.0 * (i + 1)}
        for i in range(3000)
    }
    report = render_markdown.render_plan(make_plan(desired, {}, Policy(), cluster="prod"))
    assert render_markdown.FULL_PLAN_AT == _tools().FULL_PLAN_AT
    url = "https://github.com/o/r/actions/runs/99/artifacts/1234"
    _, body = _comment(
        tmp_path, report, existing="[]",
        GITHUB_SERVER_URL="https://github.com", GITHUB_RUN_ID="99", KQ_PLAN_URL=url,
        KQ_PLAN_FILE="/tmp/kquota/plan-prod.json",
    )  # fmt: skip
    doc = gfm.parse(body)
    note = next(q for q in doc.root.all("blockquote") if "Not all shown here" in q.text())
    assert [a.attrs["href"] for a in note.all("a")] == [url]
    assert "[saved plan](" + url + ")" in body  # and in the footer
    # An address that is not an artifact of this server's runs is never linked.
    _, body = _comment(
        tmp_path, report, existing="[]", KQ_PLAN_URL="https://evil.example/o/r/actions/runs/1/artifacts/2",
    )  # fmt: skip
    assert "evil" not in body and "this run's saved plan" not in body


def test_a_long_report_is_cut_outside_any_open_element(tmp_path: Path) -> None:
    rows = "".join(f"| `-` <code>{{user=u{i}}}</code> | x | 1 | |\n" for i in range(3000))
    markdown = (
        "### kquota plan\n\n| | entities |\n|---|---:|\n| `-` to delete | 3000 |\n\n"
        "<details><summary>3000 to delete</summary>\n\n| | entity | key | before | after |\n"
        f"|---|---|---|---:|---:|\n{rows}\n</details>\n\n"
        "<details><summary>1 to create</summary>\n\n```text\n" + "y\n" * 5000 + "```\n"
        "</details>\n"
    )
    assert len(markdown) > 65_536
    _, body = _comment(
        tmp_path, markdown, existing="[]", KQ_PLAN_FILE="/tmp/k/plan-prod.json",
        GITHUB_SERVER_URL="https://github.com", GITHUB_RUN_ID="99", KQ_COMMIT="abcdef1",
    )  # fmt: skip
    assert len(body.encode("utf-16-le")) // 2 <= 65_536
    kept, note = body.split("> [!WARNING]\n")
    # Cut at a line boundary before the open <details>: the summary counts are kept.
    assert kept.count("<details") == kept.count("</details>")
    assert kept.count("```") % 2 == 0
    assert "| `-` to delete | 3000 |" in kept
    assert "Cut to fit GitHub's comment limit:" in note
    assert "[this run's job summary](https://github.com/o/r/actions/runs/99)" in note
    assert "the saved plan `plan-prod.json`" in note
    assert body.rstrip().endswith("</sub>")  # the footer survives the cut


def test_a_long_report_of_short_sections_keeps_every_section_that_fits(tmp_path: Path) -> None:
    section = "<details><summary>s</summary>\n\n" + "z" * 1000 + "\n\n</details>\n\n"
    _, body = _comment(tmp_path, section * 100, existing="[]")
    kept = body.split("> [!WARNING]")[0]
    assert kept.count("</details>") >= 60 and kept.count("<details") == kept.count("</details>")


def _issue(tmp_path: Path, code: str, existing: str) -> tuple[list[str], str]:
    """The drift-issue step of a scheduled run: kquota drift exited ``code``; ``existing`` is
    the repository's open issues as the API lists them."""
    calls, body = _comment(
        tmp_path,
        "### kquota drift: `prod`: drift in 1 entities (1 findings)\n",
        existing,
        command="issue",
        KQ_EXIT_CODE=code,
        KQ_CLUSTER="prod",
        KQ_MARKER="kquota-drift-issue-prod",
    )
    return calls, body


ISSUE_MARKER = "<!-- kquota-drift-issue-prod -->"


def test_a_scheduled_drift_opens_an_issue_then_edits_it_then_closes_it(tmp_path: Path) -> None:
    calls, body = _issue(tmp_path, "2", existing="[]")
    assert calls[-1].startswith("issue create --repo o/r --title kquota drift: prod --body-file ")
    assert body.startswith(f"{ISSUE_MARKER}\n### kquota drift: `prod`: drift in 1 entities")
    # The bot's open issue is edited; a pull request and mallory's issue with the marker never.
    listing = json.dumps(
        [
            {"number": 12, "user": {"login": "github-actions[bot]"}, "body": f"{ISSUE_MARKER}\nx"},
            {"number": 13, "user": {"login": "github-actions[bot]"}, "body": ISSUE_MARKER,
             "pull_request": {"url": "https://api.github.com/repos/o/r/pulls/13"}},
            {"number": 14, "user": {"login": "mallory"}, "body": f"{ISSUE_MARKER}\nplanted"},
        ]
    )  # fmt: skip
    calls, _ = _issue(tmp_path, "2", existing=listing)
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/12 -F body=@")
    assert "state=closed" not in calls[-1]
    calls, _ = _issue(tmp_path, "1", existing=listing)  # a failed run is news too
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/12 -F body=@")
    calls, _ = _issue(tmp_path, "0", existing=listing)  # in sync again
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/12 -F body=@")
    assert calls[-1].endswith("-f state=closed")
    calls, _ = _issue(tmp_path, "0", existing="[]")  # in sync, nothing open: nothing to do
    assert not any(c.startswith(("issue create", "api --method")) for c in calls)


def test_the_drift_issue_step_runs_outside_pull_requests_only() -> None:
    steps = _action()["runs"]["steps"]
    (step,) = [s for s in steps if s.get("run", "").endswith('action-run" issue')]
    assert "inputs.drift-issue == 'true'" in step["if"]
    assert "github.event_name != 'pull_request'" in step["if"]
    assert step["env"]["KQ_EXIT_CODE"] == "${{ steps.run.outputs.exit-code }}"


def test_without_gh_the_comment_step_says_so(tmp_path: Path) -> None:
    (stderr,), _ = _comment(tmp_path, "### kquota plan\n", existing="[]", with_gh=False)
    assert "gh (the GitHub CLI) is not on PATH" in stderr and "https://cli.github.com" in stderr


def test_a_failing_plans_report_cannot_be_broken_by_its_error_text(tmp_path: Path) -> None:
    err = tmp_path / "err"
    err.write_text("error: name ```\n# not a heading\n", encoding="utf-8")
    report = _tools().failed("plan", 1, err.read_text())
    assert report.startswith("**kquota plan failed** (exit 1):\n\n````text\n")
    assert report.endswith("# not a heading\n````\n")


def _tools() -> Any:
    """_tools is scripts/action_tools.py, imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "action_tools", ROOT / "scripts" / "action_tools.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- actionlint reads action.yml ------------------------------------------------------------


def test_actionlint_checks_workflows_against_the_actions_inputs(
    actionlint: Path, tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copy(ACTION, tmp_path / "action.yml")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    bad = workflows / "bad.yml"
    bad.write_text(
        "on: push\n"
        "permissions: {contents: read}\n"
        "jobs:\n"
        "  a:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - uses: ./\n"
        "        with:\n"
        "          comand: plan\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [str(actionlint), str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert '"comand" is not defined' in proc.stdout
    assert 'missing input "command"' in proc.stdout


# --- the pre-commit hook --------------------------------------------------------------------


def test_pre_commit_hook_runs_kquota_validate_on_a_real_repository(tmp_path: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "kquota-validate" and hook["entry"] == "kquota validate"
    assert hook["pass_filenames"] is False

    work = tmp_path / "quota-repo"
    (work / "quotas").mkdir(parents=True)
    (work / "quotas" / "team.yaml").write_text(GOOD_QUOTAS, encoding="utf-8")
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
    env["GIT_COMMITTER_EMAIL"] = "t@t"

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)

    def try_repo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "kquota-validate"]
            + ["--all-files"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    git("init", "-q")
    git("add", ".")
    good = try_repo()
    assert good.returncode == 0, good.stdout + good.stderr
    assert re.search(r"kquota validate\.+Passed", good.stdout), good.stdout

    (work / "quotas" / "bad.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {user: alice}\n    set: {producer_byte_rate: 2}\n",
        encoding="utf-8",
    )
    git("add", ".")
    bad = try_repo()
    assert bad.returncode == 1
    assert re.search(r"kquota validate\.+Failed", bad.stdout), bad.stdout
    assert "declared twice" in bad.stdout or "bad.yaml" in bad.stdout
