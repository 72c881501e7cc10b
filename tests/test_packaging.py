"""The package as a user meets it: one version everywhere, the licence, the metadata, the
snippets a user copies (the Action, pre-commit, the README's quick start).

The built sdist and wheel themselves are checked by tests/test_release.py
(scripts/release-check).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import yaml

import kquota
from kquota.version import __version__
from repo_root import ROOT

URL = "https://github.com/kquota/kquota"


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once() -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    assert "version" not in project and project["dynamic"] == ["version"]
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    assert tool["setuptools"]["dynamic"]["version"] == {"attr": "kquota.version.__version__"}
    assert kquota.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    # No other file of the package spells a version out.
    for path in (ROOT / "src" / "kquota").rglob("*.py"):
        if path.name != "version.py":
            text = path.read_text(encoding="utf-8")
            assert f'"{__version__}"' not in text, path


def test_kquota_version_and_python_m_kquota() -> None:
    for argv in (["-m", "kquota", "--version"], ["-m", "kquota", "-V"]):
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True)
        assert proc.stdout == f"kquota, version {__version__}\n"
    # python -m kquota passes a command's exit code on (validate of a broken file: 1).
    proc = subprocess.run(
        [sys.executable, "-m", "kquota", "validate", "/nonexistent/quotas"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "no such file or folder" in proc.stderr


def test_the_changelog_names_this_version_first() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", text, re.M)
    assert released and released[0] == __version__
    assert f"[{__version__}]: {URL}/releases/tag/v{__version__}" in text


def test_licence_is_apache_2_and_shipped() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]


def test_metadata_has_classifiers_and_urls() -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    # A licence classifier beside a licence expression is an error for PyPI (PEP 639).
    assert not any(c.startswith("License ::") for c in classifiers)
    urls = project["urls"]
    assert all(u.startswith(URL) for u in urls.values()), urls
    # build and twine (scripts/release-check) come with the dev extra.
    dev = " ".join(project["optional-dependencies"]["dev"])
    assert "build" in dev and "twine" in dev


def test_snippets_point_at_a_real_tag_and_url() -> None:
    tag = f"v{__version__}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    hooks_text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    for name, text in (("README.md", readme), (".pre-commit-hooks.yaml", hooks_text)):
        # The pre-commit snippet: this repository at this release, no placeholder.
        assert re.search(rf"repo: {re.escape(URL)}\n[\s#]*rev: {tag}\n", text), name
    assert f"- uses: kquota/kquota@{tag}" in readme
    assert f"- uses: kquota/kquota@{tag}" in action
    for name, text in (("README.md", readme), ("action.yml", action), ("hooks", hooks_text)):
        assert "OWNER/" not in text and "repository URL>" not in text, name
    hooks = yaml.safe_load(hooks_text)
    assert [h["id"] for h in hooks] == ["kquota-validate"]


def test_readme_keeps_the_two_commands_first_then_a_quick_start() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, re.M | re.S)
    assert blocks[0].strip() == "./scripts/demo"
    assert blocks[1].strip() == "./scripts/check"
    quick = blocks[2].splitlines()
    assert len(quick) <= 5
    assert quick[0].startswith("pipx install kquota")
    assert any("kquota dev-broker start" in line for line in quick)
    assert any('"$(kquota dev-broker status --field bootstrap_servers)"' in line for line in quick)
    assert "Kafka 2.6 or newer" in readme
