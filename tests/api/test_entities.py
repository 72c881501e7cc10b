"""kquota.api.entities: what describe's filter path loads."""

from __future__ import annotations

import subprocess
import sys


def test_describe_all_loads_no_desired_state_reader() -> None:
    # kquota describe builds its filter here: the desired-state reader (YAML included) is about a
    # tenth of a 100k describe's CPU and describe never reads a file.
    code = (
        "import sys, kquota.cli.describe; from kquota.api.entities import filter_components;"
        " filter_components({}); print(sorted(m for m in sys.modules"
        " if m.startswith('kquota.desired') or m == 'yaml'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_ip_entity_is_still_checked() -> None:
    from kquota.api.entities import entity_problems
    from kquota.model import Entity

    assert entity_problems(Entity.of({"ip": "10.0.0.1"})) == []
    assert "is not an IP address" in entity_problems(Entity.of({"ip": "db.example.com"}))[0]
