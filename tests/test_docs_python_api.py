"""docs/python-api.md's examples, run in order against the real broker.

Each ```python block is run as written, with the broker's address in place of
``localhost:9092``; what a block prints is checked against the comments that promise it.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from kquota.devbroker.launcher import BrokerInfo
from repo_root import ROOT

DOC = ROOT / "docs" / "python-api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text())


def promised(code: str) -> list[str]:
    """promised is the output a block's ``# ...`` comment lines after ``print`` spell out."""
    return [line[2:] for line in code.splitlines() if re.match(r"# \w+=", line)]


@pytest.mark.integration
def test_python_api_examples_run(kafka_broker: BrokerInfo) -> None:
    codes = blocks()
    assert len(codes) == 7, "an example was added or lost: update this test's checks"
    outputs: list[str] = []
    for i, code in enumerate(codes):
        source = code.replace("localhost:9092", kafka_broker.bootstrap_servers)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, f"{DOC.name} block {i + 1}", "exec"), {"__name__": "__docs__"})
        outputs.append(out.getvalue())
    assert "producer_byte_rate=1.5: must be a whole number" in outputs[1]
    resolve_block = next(i for i, c in enumerate(codes) if "admin.resolve(" in c)
    assert outputs[resolve_block].splitlines() == promised(codes[resolve_block])
    assert "sasl.kerberos.service.name" in outputs[-1]
    workflow = next(i for i, c in enumerate(codes) if "kquota.execute_plan(" in c)
    assert outputs[workflow].splitlines() == promised(codes[workflow])
