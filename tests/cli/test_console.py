"""The root flags' settings: kquota's log lines on standard error with -v, and nothing of
the logging machinery loaded by a command that logs nothing."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

from kquota.cli import console

# A whole offline plan (read, plan, render as JSON), then which of these it imported.
_PLAN_THEN_MODULES = """
import sys
from kquota.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\nloaded:", *[m for m in ("logging", "tempfile", "html", "importlib.resources")
                        if m in sys.modules])
"""


def test_an_offline_plan_loads_no_module_only_other_steps_use(tmp_path: Path) -> None:
    # logging (console), tempfile (--out), html (markdown), importlib.resources (the
    # look-alike table) are each a few ms of every start: loaded only where they are used.
    desired = tmp_path / "quotas.yaml"
    desired.write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {user: alice}\n    set: {producer_byte_rate: 1024}\n"
    )
    snapshot = tmp_path / "snapshot.json"
    entry = {"entity": {"user": "bob"}, "quotas": {"consumer_byte_rate": 2048.0}}
    snapshot.write_text(json.dumps({"format_version": 1, "entries": [entry]}))
    argv = ["plan", str(desired), "--snapshot", str(snapshot), "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", _PLAN_THEN_MODULES, *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    plan, _, loaded = done.stdout.rpartition("\nloaded:")
    assert json.loads(plan)["alterations"][0]["entity"] == {"user": "alice"}
    assert loaded.split() == []


def test_verbose_adds_one_handler_and_a_later_command_without_it_removes_it() -> None:
    log = logging.getLogger("kquota")
    try:
        console.configure(2, False, False)
        console.configure(1, False, False)  # tests run many commands in one process
        ours = [h for h in log.handlers if getattr(h, "kquota_verbose", False)]
        assert len(ours) == 1
        assert log.level == logging.INFO
        console.configure(0, False, False)
        assert [h for h in log.handlers if getattr(h, "kquota_verbose", False)] == []
        assert log.level == logging.NOTSET
    finally:
        console.configure(0, False, False)
