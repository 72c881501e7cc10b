"""kquota.yaml's JSON Schema (docs/kquota-config.schema.json) is the one generated from the
models, agrees with the loader on good and bad files, and the reference page
(docs/kquota-yaml.md) documents every field it has."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kquota.config.project import ConfigError, load_config
from kquota.config.schema import json_schema
from repo_root import ROOT

COMMITTED = ROOT / "docs" / "kquota-config.schema.json"
PAGE = ROOT / "docs" / "kquota-yaml.md"


def test_the_committed_schema_is_the_generated_one() -> None:
    assert json.loads(COMMITTED.read_text(encoding="utf-8")) == json_schema(), (
        "regenerate: python -m kquota.config.schema > docs/kquota-config.schema.json"
    )
    out = subprocess.run(
        [sys.executable, "-m", "kquota.config.schema"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == json_schema()


def _fields(schema: dict[str, object]) -> set[str]:
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                found.update(props)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found - {"bootstrap.servers"}


def test_every_field_is_described_and_documented() -> None:
    schema = json_schema()
    page = PAGE.read_text(encoding="utf-8")
    for field in _fields(schema):
        assert f"`{field}`" in page, f"docs/kquota-yaml.md does not document {field}"
    for rule in schema["$defs"]["ClusterConfig"]["properties"].values():
        assert rule["description"]


VALIDATOR = jsonschema.Draft202012Validator(json_schema())
GOOD = [
    ROOT / "examples" / "gitops-repo" / "kquota.yaml",
]
BAD = {
    "unknown field": "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n    prun: true\n",
    "no bootstrap": "clusters:\n  a:\n    kafka: {security.protocol: SSL}\n",
    "fraction": "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n"
    "    policy: {max_removal_fraction: 1.5}\n",
    "scope word": "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n"
    "    policy: {scope: some}\n",
    "scope type": "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n"
    "    policy: {scope: [{topic: x}]}\n",
    "no clusters": "{}\n",
}


def test_the_page_example_and_the_examples_load_both_ways(tmp_path: Path) -> None:
    example = re.search(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert example is not None
    page_example = tmp_path / "kquota.yaml"
    page_example.write_text(example.group(1), encoding="utf-8")
    no_topic = tmp_path / "no-topic.yaml"
    no_topic.write_text(
        "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x:1'}\n    audit_topic:\n"
    )
    for path in [*GOOD, page_example, no_topic]:
        load_config(path)
        assert VALIDATOR.is_valid(yaml.safe_load(path.read_text(encoding="utf-8"))), path


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_are_refused_by_both(name: str, tmp_path: Path) -> None:
    path = tmp_path / "kquota.yaml"
    path.write_text(BAD[name], encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(path)
    assert not VALIDATOR.is_valid(yaml.safe_load(BAD[name])), name
