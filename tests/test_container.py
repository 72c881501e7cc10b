"""The container image (Dockerfile): read as a builder reads it, and built where one runs.

The static checks always run: two stages (the wheels are built in the first and only mounted
into the second), a base given by one ARG whose digest pin is documented, a numeric non-root
USER, kquota as the entry point, nothing copied beyond what the build needs, no secret in an
ENV, ARG or LABEL. The build itself (scripts/container-check: buildah, a local Debian base
where no registry is reachable, then a smoke test of the image) runs when buildah is
installed and the suite runs as root. KQUOTA_REQUIRE_CONTAINER=1 turns their absence into a
failure: .ci/run sets it (root, buildah installed). CI=true alone does not, since GitHub's
runners are not root: their workflows leave the `container` marker out and build the image in
a job of its own, under sudo (.github/workflows/ci.yml).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_root import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def _instructions() -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) with continuation lines joined and comments dropped,
    as a builder reads the file."""
    out: list[tuple[int, str, str]] = []
    pending: tuple[int, str] | None = None
    for n, raw in enumerate(DOCKERFILE.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        start, text = pending if pending is not None else (n, "")
        text += " " + line.rstrip("\\").strip() if text else line.rstrip("\\").strip()
        if line.endswith("\\"):
            pending = (start, text)
            continue
        pending = None
        word, _, args = text.partition(" ")
        out.append((start, word.upper(), args.strip()))
    assert pending is None, "Dockerfile ends inside a continued line"
    return out


def test_dockerfile_instructions_are_known() -> None:
    known = {"ARG", "FROM", "WORKDIR", "COPY", "RUN", "LABEL", "ENV", "USER", "ENTRYPOINT", "CMD"}
    for line, word, _ in _instructions():
        assert word in known, f"Dockerfile:{line}: {word}"


def test_two_stages_from_one_documented_base() -> None:
    instructions = _instructions()
    assert instructions[0][1] == "ARG" and instructions[0][2].startswith("PYTHON_IMAGE=python:3.11")
    froms = [args for _, word, args in instructions if word == "FROM"]
    assert froms == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
    text = DOCKERFILE.read_text(encoding="utf-8")
    # How to pin the base by digest is written beside it.
    assert "--build-arg PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:<digest>" in text


def test_the_final_stage_runs_kquota_as_a_non_root_user() -> None:
    instructions = _instructions()
    final = instructions[max(i for i, (_, w, _) in enumerate(instructions) if w == "FROM") :]
    users = [args for _, word, args in final if word == "USER"]
    assert users and re.fullmatch(r"[1-9]\d{3,}:[1-9]\d{3,}", users[-1]), users
    assert [a for _, w, a in final if w == "ENTRYPOINT"] == ['["kquota"]']
    (run,) = [a for _, w, a in final if w == "RUN"]
    # The wheels are mounted, never copied into a layer; pip keeps no cache.
    assert "--mount=type=bind,from=build,source=/wheels" in run
    assert "--no-cache-dir" in run and "--no-index" in run
    assert not [a for _, w, a in final if w == "COPY"]


def test_only_what_the_build_needs_is_copied_and_no_secret_is_baked_in() -> None:
    copies = [args for _, word, args in _instructions() if word == "COPY"]
    assert copies == [
        "requirements/bootstrap.txt requirements/demo.txt ./requirements/",
        "pyproject.toml README.md LICENSE ./",
        "src ./src",
    ]
    secretish = re.compile(r"PASSWORD|SECRET|TOKEN|CREDENTIAL|API_?KEY|sasl\.", re.I)
    for line, word, args in _instructions():
        if word in ("ENV", "ARG", "LABEL"):
            assert not secretish.search(args), f"Dockerfile:{line}: {args}"
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert ignored[1] == "*"  # everything is excluded but what is named


def test_every_install_is_from_the_hashed_lock() -> None:
    """As scripts/venv-from-lock installs everywhere else: every third-party file is checked
    against the hashes of a lock, and kquota's own wheel is built and installed without
    resolving (or fetching) anything unpinned."""
    steps = [
        step.strip()
        for _, word, args in _instructions()
        if word == "RUN"
        for step in args.split("&&")
        if "pip " in step
    ]
    hashed = [s for s in steps if "--require-hashes" in s]
    assert [re.search(r"-r (\S+)", s).group(1) for s in hashed] == [  # type: ignore[union-attr]
        "requirements/bootstrap.txt",
        "requirements/demo.txt",
        "/requirements/demo.txt",
    ]
    assert all("--no-deps" in s for s in hashed)
    for step in steps:
        if step not in hashed and " check" not in step:
            assert "--no-deps" in step, step  # kquota itself: nothing resolved
            assert step.endswith((" .", "/wheels/kquota-*.whl")), step
    assert "--only-binary=:all:" in hashed[1]  # no sdist: nothing built from unhashed sources
    lock = (ROOT / "requirements" / "demo.txt").read_text(encoding="utf-8")
    assert not re.search(r"^kquota\b", lock, re.M)  # installed from its own wheel, last


def test_the_image_is_documented_for_the_action_and_kubernetes() -> None:
    doc = (ROOT / "docs" / "container.md").read_text(encoding="utf-8")
    assert "examples/kubernetes/drift-cronjob.yaml" in doc
    assert "kquota drift" in doc and '"--format", "prometheus"' in doc
    assert "runAsNonRoot: true" in doc
    assert "container:" in doc  # a GitHub Actions job running in the image


@pytest.mark.container
def test_the_image_builds_and_runs(tmp_path: Path) -> None:
    if shutil.which("buildah") is None or os.geteuid() != 0:
        if os.environ.get("KQUOTA_REQUIRE_CONTAINER") == "1":
            pytest.fail(
                "buildah (as root) is required to build the image: KQUOTA_REQUIRE_CONTAINER=1",
                pytrace=False,
            )
        pytest.skip(
            "no container builder here: buildah is not installed or not root "
            "(KQUOTA_REQUIRE_CONTAINER=1 makes this a failure)"
        )
    proc = subprocess.run(
        [str(ROOT / "scripts" / "container-check")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "container check passed" in proc.stdout
    assert "\n10001\n" in proc.stdout


def test_the_kubernetes_cronjob_example_runs_drift_as_non_root() -> None:
    import yaml

    doc = yaml.safe_load((ROOT / "examples" / "kubernetes" / "drift-cronjob.yaml").read_text())
    assert doc["kind"] == "CronJob" and doc["apiVersion"] == "batch/v1"
    pod = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    (container,) = pod["containers"]
    assert container["args"][0] == "drift" and "--publish-topic" in container["args"]
    # Credentials only through the environment, from a Secret.
    for env in container["env"]:
        assert set(env) == {"name", "valueFrom"} and "secretKeyRef" in env["valueFrom"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True


def _image_test_without_buildah(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The image test run where no buildah is on PATH (as on a runner that never installed
    it), with ``env`` on top of this environment minus the variables that decide."""
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "KQUOTA_REQUIRE_CONTAINER")}
    empty = tmp_path / "bin"
    empty.mkdir(parents=True)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
         f"{Path(__file__)}::test_the_image_builds_and_runs"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**base, "PATH": str(empty), **env},
    )  # fmt: skip


def test_ci_alone_does_not_demand_the_image_but_the_explicit_variable_does(
    tmp_path: Path,
) -> None:
    # GitHub's runners set CI=true and are not root: the image is built by a job of its own.
    proc = _image_test_without_buildah(tmp_path, CI="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout and "KQUOTA_REQUIRE_CONTAINER=1 makes this" in proc.stdout
    # .ci/run (root, buildah installed) sets the variable: there a missing builder fails.
    proc = _image_test_without_buildah(tmp_path / "x", CI="true", KQUOTA_REQUIRE_CONTAINER="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "buildah (as root) is required to build the image" in proc.stdout
