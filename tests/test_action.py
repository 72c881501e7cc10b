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
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
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
    code, _, _, stderr = _run(tmp_path, repo, command="validate")
    assert code == 1 and "bad.yaml" in stderr


def test_an_unknown_command_is_refused(tmp_path: Path, repo: Path) -> None:
    code, _, _, stderr = _run(tmp_path, repo, command="destroy")
    assert code == 1
    assert "command must be one of validate, plan, apply, drift (got 'destroy')" in stderr


def test_args_never_pass_through_a_shell(tmp_path: Path, repo: Path) -> None:
    marker = tmp_path / "pwned"
    code, _, _, _ = _run(tmp_path, repo, command="validate", args=f"$(touch {marker}) ;")
    assert code != 0
    assert not marker.exists()


# --- scripts/action-run comment (GitHub's API faked) ----------------------------------------

FAKE_GH = """\
#!/usr/bin/env bash
# fake_gh: records each call; answers the comment listing from $FAKE_GH_COMMENTS.
printf '%s\\n' "$*" >> "$FAKE_GH_LOG"
for a in "$@"; do
  case "$a" in body=@*) cp "${a#body=@}" "$FAKE_GH_LOG.body" ;; esac
done
prev=""
for a in "$@"; do
  if [ "$prev" = --body-file ]; then cp "$a" "$FAKE_GH_LOG.body"; fi
  prev="$a"
done
if [ "$1" = api ] && [ "$2" = "repos/o/r/issues/7/comments" ]; then
  cat "$FAKE_GH_COMMENTS"
fi
"""


def _comment(tmp_path: Path, markdown: str, existing: str) -> tuple[list[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH, encoding="utf-8")
    gh.chmod(0o755)
    (tmp_path / "report.md").write_text(markdown, encoding="utf-8")
    (tmp_path / "comments").write_text(existing, encoding="utf-8")
    log = tmp_path / "gh.log"
    log.unlink(missing_ok=True)
    env = dict(os.environ)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        FAKE_GH_LOG=str(log),
        FAKE_GH_COMMENTS=str(tmp_path / "comments"),
        GITHUB_REPOSITORY="o/r",
        KQ_PR_NUMBER="7",
        KQ_MARKDOWN=str(tmp_path / "report.md"),
        KQ_MARKER="kquota-plan-prod",
    )
    proc = subprocess.run(
        [str(RUN), "comment"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    body = Path(f"{log}.body").read_text(encoding="utf-8")
    return log.read_text(encoding="utf-8").splitlines(), body


def test_comment_is_created_once_then_edited(tmp_path: Path) -> None:
    calls, body = _comment(tmp_path, "### kquota plan\n", existing="")
    assert calls[-1].startswith("pr comment 7 --repo o/r --body-file ")
    assert body == "<!-- kquota-plan-prod -->\n### kquota plan\n"
    # The fake's listing stands for gh's --jq result: the id of the marked comment.
    calls, body = _comment(tmp_path, "### kquota plan v2\n", existing="4242\n")
    assert calls[-1].startswith("api --method PATCH repos/o/r/issues/comments/4242 -F body=@")
    assert body.endswith("### kquota plan v2\n")


def test_a_long_report_is_truncated_below_githubs_limit(tmp_path: Path) -> None:
    _, body = _comment(tmp_path, "x" * 70_000, existing="")
    assert 60_000 < len(body) < 65_536
    assert body.rstrip().endswith("the workflow run summary has the whole report._")


# --- actionlint reads action.yml ------------------------------------------------------------


def test_actionlint_checks_workflows_against_the_actions_inputs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(ROOT / "scripts" / "actionlint"), "--install-only"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(f"actionlint cannot be installed:\n{proc.stderr}", pytrace=False)
    actionlint = proc.stdout.strip().splitlines()[-1]
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
        [actionlint, str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=60
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
