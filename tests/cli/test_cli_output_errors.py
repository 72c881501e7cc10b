"""Output that cannot be written: a closed pipe and a full disk end in one line, exit 1.

Real processes, real pipes and the real /dev/full: the pipe's read end is closed before the
child writes, so every write gets EPIPE, as when ``kquota export | head`` stops reading.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

DESIRED = (
    "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
    "  - match: {user: alice}\n    set: {producer_byte_rate: 2MiB}\n"
)
# Every command that writes to standard output, offline: big enough to overflow any buffer.
COMMANDS = {
    "export": ["export", "--snapshot", "snap.json"],
    "plan": ["plan", "--snapshot", "snap.json", "--prune", "--allow-mass-removal", "q.yaml"],
    "plan-json": ["plan", "--snapshot", "snap.json", "--prune", "--allow-mass-removal", "q.yaml"]
    + ["--format", "json"],
    "drift": ["drift", "--snapshot", "snap.json", "--prune", "q.yaml"],
    "resolve": ["resolve", "--snapshot", "snap.json", "--names", "user=u1"],
    "validate": ["validate", "q.yaml"],
    "schema": ["validate", "--print-schema"],
}
EXIT = {
    "plan": 0,
    "plan-json": 0,
    "drift": 2,
    "export": 0,
    "resolve": 0,
    "validate": 0,
    "schema": 0,
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("out")
    state = {Entity.of({"user": f"u{i}"}): {"producer_byte_rate": 1024.0} for i in range(5000)}
    (d / "snap.json").write_bytes(dump_snapshot(state))
    (d / "q.yaml").write_text(DESIRED)
    return d


def kquota(args: list[str], cwd: Path, stdout: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kquota.cli.main", *args],
        cwd=cwd,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("name", COMMANDS)
def test_output_commands_work_on_a_real_pipe(name: str, workdir: Path) -> None:
    # The control: the same commands succeed when the reader reads.
    p = kquota(COMMANDS[name], workdir, subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    assert p.returncode == EXIT[name], err
    assert out


@pytest.mark.parametrize("name", COMMANDS)
def test_output_closed_pipe_is_one_line(name: str, workdir: Path) -> None:
    p = kquota(COMMANDS[name], workdir, subprocess.PIPE)
    assert p.stdout is not None
    p.stdout.close()  # the reader goes away before the first byte
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1
    assert err == "error: output closed before kquota finished writing (broken pipe)\n"


@pytest.mark.parametrize("name", COMMANDS)
def test_output_full_disk_is_one_line(name: str, workdir: Path) -> None:
    with open("/dev/full", "w") as full:
        p = kquota(COMMANDS[name], workdir, full)
        _, err = p.communicate(timeout=120)
    assert p.returncode == 1
    assert err == "error: cannot write output: No space left on device\n"


@pytest.mark.parametrize("name", ["export", "drift"])
def test_output_out_file_on_a_full_disk_is_one_line(name: str, workdir: Path) -> None:
    p = kquota([*COMMANDS[name], "--out", "/dev/full"], workdir, subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1
    assert len(err.splitlines()) == 1 and "No space left on device" in err
    assert "Traceback" not in err
    # drift writes --out atomically (rename over the target): never over a device.
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
