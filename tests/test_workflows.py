"""GitHub Actions workflows: the project's CI and the GitOps example's plan / apply / drift.

actionlint (built from the Go module proxy by scripts/actionlint) must pass on every workflow
file; under CI=true a missing Go or actionlint fails these tests instead of skipping them.
The YAML is also read here to hold the workflows to their promises (which events, which
commands, least-privilege permissions, secrets only through env).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kquota.config.project import load_config
from kquota.desired.loader import load_desired
from kquota.model import Entity
from repo_root import ROOT

EXAMPLE = ROOT / "examples" / "gitops-repo"
EXAMPLE_WORKFLOWS = EXAMPLE / ".github" / "workflows"
PROJECT_WORKFLOWS = ROOT / ".github" / "workflows"
ALL_WORKFLOWS = sorted(PROJECT_WORKFLOWS.glob("*.yml")) + sorted(EXAMPLE_WORKFLOWS.glob("*.yml"))


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def _on(workflow: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean True.
    triggers = workflow.get("on", workflow.get(True))
    if isinstance(triggers, str):
        return {triggers: None}
    if isinstance(triggers, list):
        return dict.fromkeys(triggers)
    assert isinstance(triggers, dict)
    return triggers


def _steps(workflow: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


def _runs(workflow: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in _steps(workflow))


def _strings(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, (*path, i))
    elif isinstance(node, str):
        yield path, node


# --- actionlint -----------------------------------------------------------------------------


def test_every_workflow_passes_actionlint(actionlint: Path) -> None:
    assert len(ALL_WORKFLOWS) >= 4, ALL_WORKFLOWS
    proc = subprocess.run(
        [str(ROOT / "scripts" / "actionlint")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_rejects_a_broken_workflow(actionlint: Path, tmp_path: Path) -> None:
    # Proves the lint step can fail: an undefined context and a bad runner label.
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\n"
        "jobs:\n"
        "  a:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: echo ${{ nosuchcontext.value }}\n",
        encoding="utf-8",
    )
    proc = subprocess.run([str(actionlint), str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "nosuchcontext" in proc.stdout


# --- every workflow -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ALL_WORKFLOWS, ids=lambda p: p.parent.parent.parent.name + "/" + p.name
)
def test_workflow_hygiene(path: Path) -> None:
    workflow = _load(path)
    # Least privilege: the default token is read-only unless a job asks for more.
    assert workflow.get("permissions") == {"contents": "read"}, path
    for name, job in workflow["jobs"].items():
        assert "timeout-minutes" in job, f"{path.name}: job {name} has no timeout"
        for perm, level in job.get("permissions", {}).items():
            assert level in ("read", "write", "none"), (name, perm, level)
    # Actions pinned to a major version (a tag that only moves within that major; PyPA's
    # publish action names its major as the branch release/v1), or this repository's own
    # action from the checkout.
    for step in _steps(workflow):
        if "uses" in step:
            pinned = r"[\w.-]+/[\w.-]+@v\d+|pypa/gh-action-pypi-publish@release/v\d+|\./"
            assert re.fullmatch(pinned, step["uses"]), step["uses"]
    # Secrets only reach a step through env, never inline in a script or an action input.
    for where, value in _strings(workflow):
        if "secrets." in value:
            assert len(where) >= 2 and where[-2] == "env", f"{path.name}: secret used at {where}"


# --- the example's workflows ----------------------------------------------------------------


KQUOTA_ACTION = "kquota/kquota@v0"


def _action_steps(job: dict[str, Any], command: str) -> list[dict[str, Any]]:
    return [
        s
        for s in job["steps"]
        if s.get("uses") == KQUOTA_ACTION and s.get("with", {}).get("command") == command
    ]


def test_plan_runs_on_pull_requests_and_posts_a_comment() -> None:
    plan = _load(EXAMPLE_WORKFLOWS / "plan.yml")
    assert "pull_request" in _on(plan)
    (job,) = plan["jobs"].values()
    assert job["strategy"]["matrix"]["cluster"] == ["staging", "prod"]
    assert len(_action_steps(job, "validate")) == 1
    (step,) = _action_steps(job, "plan")
    # The action keeps the saved plan as an artifact and links it from the comment.
    assert step["with"] == {
        "command": "plan",
        "cluster": "${{ matrix.cluster }}",
        "comment": "true",
        "upload-plan": "true",
    }
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads == []
    assert plan["concurrency"]["cancel-in-progress"] is True


def test_apply_runs_on_push_to_main_and_never_races() -> None:
    apply = _load(EXAMPLE_WORKFLOWS / "apply.yml")
    assert _on(apply)["push"]["branches"] == ["main"]
    for name, cluster in (("apply-staging", "staging"), ("apply-prod", "prod")):
        job = apply["jobs"][name]
        (plan_step,) = _action_steps(job, "plan")
        (apply_step,) = _action_steps(job, "apply")
        # The operator's cluster is the target; the saved plan is only checked against it.
        assert plan_step["with"]["cluster"] == apply_step["with"]["cluster"] == cluster
        args = apply_step["with"]["args"]
        assert args.startswith("${{ steps.plan.outputs.plan-file }} ") and "--audit-topic" in args
        assert job["steps"].index(plan_step) < job["steps"].index(apply_step)
    # The action runs apply with --auto-approve.
    assert (
        'kquota apply "${target[@]}" --auto-approve'
        in (ROOT / "scripts" / "action-run").read_text()
    )
    # One apply at a time, and a queued one never cancels a running one.
    assert apply["concurrency"] == {"group": "kquota-apply", "cancel-in-progress": False}
    # Write credentials come from protected environments, prod after staging.
    assert apply["jobs"]["apply-staging"]["environment"] == "kafka-staging"
    assert apply["jobs"]["apply-prod"]["environment"] == "kafka-prod"
    assert apply["jobs"]["apply-prod"]["needs"] == "apply-staging"


def test_drift_runs_nightly_and_reports_to_an_issue() -> None:
    drift = _load(EXAMPLE_WORKFLOWS / "drift.yml")
    triggers = _on(drift)
    assert triggers["schedule"] and all("cron" in s for s in triggers["schedule"])
    assert "workflow_dispatch" in triggers
    (job,) = drift["jobs"].values()
    (step,) = _action_steps(job, "drift")
    # Every cluster (no cluster input: --all); drift becomes an issue instead of a red step.
    assert step["with"] == {"command": "drift", "fail-on-drift": "false"}
    runs = _runs(drift)
    assert "gh issue create" in runs and "gh issue edit" in runs
    assert job["permissions"] == {"contents": "read", "issues": "write"}
    # The issue step runs on drift (exit 2) only.
    conditions = [s.get("if", "") for s in job["steps"]]
    assert "steps.drift.outputs.exit-code == '2'" in conditions


def test_every_secret_kquota_yaml_needs_is_provided_by_the_workflows() -> None:
    config = load_config(EXAMPLE / "kquota.yaml")
    raw = [v for cluster in config.clusters.values() for v in cluster.kafka.values()]
    needed = {name for value in raw for name in re.findall(r"\$\{([A-Z0-9_]+)\}", value)}
    assert needed == {
        "KQUOTA_STAGING_USERNAME",
        "KQUOTA_STAGING_PASSWORD",
        "KQUOTA_PROD_USERNAME",
        "KQUOTA_PROD_PASSWORD",
    }
    for name in ("plan.yml", "drift.yml"):
        provided = {k for s in _steps(_load(EXAMPLE_WORKFLOWS / name)) for k in s.get("env", {})}
        assert needed <= provided, (name, needed - provided)
    apply = _load(EXAMPLE_WORKFLOWS / "apply.yml")
    for job, cluster in (("apply-staging", "STAGING"), ("apply-prod", "PROD")):
        provided = {k for s in apply["jobs"][job]["steps"] for k in s.get("env", {})}
        # Each apply job sees exactly its own cluster's credentials.
        assert needed & provided == {
            f"KQUOTA_{cluster}_USERNAME",
            f"KQUOTA_{cluster}_PASSWORD",
        }


# --- the example repository itself ---------------------------------------------------------


def test_example_config_and_quotas_load() -> None:
    config = load_config(EXAMPLE / "kquota.yaml")
    assert sorted(config.clusters) == ["prod", "staging"]
    for name, cluster in config.clusters.items():
        assert cluster.audit_topic == "kquota-audit"
        assert cluster.kafka["sasl.password"].startswith("${"), "secrets stay out of the file"
        desired = load_desired(cluster.desired_paths())
        assert desired.quotas, name
        policy = cluster.policy.to_policy()
        # Everything declared is inside the cluster's own scope (else plan reports a mistake).
        assert all(policy.in_scope(entity) for entity in desired.quotas), name
    staging = load_desired(config.cluster("staging").desired_paths()).quotas
    assert staging[Entity.of({"user": "alice", "client-id": None})] == {
        "producer_byte_rate": 1048576.0
    }


def test_example_quota_files_use_the_canonical_form() -> None:
    files = sorted((EXAMPLE / "quotas").glob("*/*.yaml"))
    assert {f.parent.name for f in files} == {"staging", "prod"}
    for f in files:
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        assert doc["apiVersion"] == "kquota/v1" and doc["kind"] == "ClientQuotas", f
        assert all(set(q) == {"match", "set"} for q in doc["quotas"]), f


# --- the project's own CI runs where it runs --------------------------------------------------


SUITE = re.compile(r"scripts/check|scripts/floors|\bpytest\b")


def _suite_runs() -> Iterator[tuple[str, str, str]]:
    """(workflow, job, command line) of every line of the project's workflows that runs the
    test suite."""
    for path in sorted(PROJECT_WORKFLOWS.glob("*.yml")):
        for name, job in _load(path)["jobs"].items():
            for step in job.get("steps", []):
                for line in step.get("run", "").splitlines():
                    if SUITE.search(line):
                        yield path.name, name, line.strip()


def test_every_suite_run_on_a_non_root_runner_leaves_out_the_image() -> None:
    """GitHub's runners run steps as a user that is not root, and buildah builds the image only
    as root: a suite run there that selects the `container` marker cannot pass. Only a step
    under sudo may build the image (ci.yml's container job)."""
    from test_floors import floors_expression, selects

    runs = list(_suite_runs())
    assert {(w, j) for w, j, _ in runs} >= {
        ("ci.yml", "check"),
        ("ci.yml", "floors"),
        ("newest.yml", "newest"),
    }, runs
    for workflow, job, line in runs:
        if line.startswith("sudo "):
            continue
        given = re.findall(r"-m '([^']+)'", line)
        if "scripts/floors" in line:
            assert not given, f"{workflow} {job}: a -m replaces scripts/floors' own: {line}"
            given = [floors_expression()]
        assert len(given) == 1, f"{workflow} {job}: runs the suite with every marker: {line}"
        assert not selects(given[0], {"container"}), f"{workflow} {job}: {line}"
        assert selects(given[0], set()), f"{workflow} {job}: selects no plain test: {line}"
    # Where the image is built, it is built as root.
    container = _load(PROJECT_WORKFLOWS / "ci.yml")["jobs"]["container"]
    assert any(
        s.get("run", "").startswith("sudo -E ./scripts/container-check") for s in container["steps"]
    )


def test_every_job_that_runs_actionlint_has_go() -> None:
    """scripts/actionlint builds actionlint with Go, and tests/test_workflows.py runs it in
    every suite run: each job that runs the suite sets Go up."""
    jobs = {(w, j) for w, j, _ in _suite_runs()}
    for workflow, job in jobs:
        steps = _load(PROJECT_WORKFLOWS / workflow)["jobs"][job]["steps"]
        assert any(s.get("uses", "").startswith("actions/setup-go@") for s in steps), (
            workflow,
            job,
        )


def test_only_the_newest_job_installs_unpinned_packages() -> None:
    """Every other install comes from a lock with hashes (scripts/venv-from-lock); newest.yml
    installs the newest allowed versions on purpose."""
    for path in sorted(PROJECT_WORKFLOWS.glob("*.yml")):
        for name, job in _load(path)["jobs"].items():
            if (path.name, name) == ("newest.yml", "newest"):
                continue
            for step in job.get("steps", []):
                for line in step.get("run", "").splitlines():
                    if re.search(r"pip3? install|-m pip install", line):
                        assert "--require-hashes" in line, f"{path.name} {name}: {line.strip()}"
