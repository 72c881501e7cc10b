"""Hostile trees: every odd file is a problem or a warning with its path, never a hang.

Built in tmp_path with real FIFOs, symlinks, devices and sparse files. The discovery rule
is in kquota.desired.loader and docs/desired-state.md.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kquota.desired import DesiredStateError, load_desired
from kquota.desired.loader import MAX_FILE_BYTES

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\n"


def entry(user: str, rate: int = 1024) -> str:
    return HEAD + f"quotas:\n  - match: {{user: {user}}}\n    set: {{producer_byte_rate: {rate}}}\n"


def problems_of(paths: list[Path]) -> list[str]:
    with pytest.raises(DesiredStateError) as info:
        load_desired(paths)
    return [str(p) for p in info.value.problems]


def test_tree_reads_every_letter_case_of_the_extension(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(entry("a"))
    (tmp_path / "b.YAML").write_text(entry("b"))
    (tmp_path / "c.Yml").write_text(entry("c"))
    state = load_desired([tmp_path])
    assert sorted(Path(f).name for f in state.files) == ["a.yaml", "b.YAML", "c.Yml"]
    assert len(state.quotas) == 3 and state.warnings == ()


def test_tree_names_files_it_does_not_read(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(entry("a"))
    (tmp_path / "a.yaml.bak").write_text(entry("old"))
    (tmp_path / "b.yml~").write_text(entry("old"))
    (tmp_path / ".hidden.yaml").write_text(entry("old"))
    (tmp_path / "notes.txt").write_text("not desired state")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.yaml").write_text(entry("git"))
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "o.yaml").write_text(entry("o"))
    (tmp_path / "linked").symlink_to(outside, target_is_directory=True)
    state = load_desired([tmp_path])
    assert [Path(f).name for f in state.files] == ["a.yaml"]
    warned = [str(w).removeprefix(str(tmp_path) + "/") for w in state.warnings]
    assert warned == [
        ".hidden.yaml: not read: a hidden file (names starting with '.' are skipped)",
        "a.yaml.bak: not read: the name does not end in .yaml or .yml",
        "b.yml~: not read: the name does not end in .yaml or .yml",
        "linked: not read: a symlinked folder (folders are walked without following symlinks;"
        " name it on the command line to read it)",
    ]


def test_tree_symlink_loop_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(entry("a"))
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    got = problems_of([tmp_path, tmp_path / "l1"])
    loop = "cannot read: a symlink loop (too many levels of symbolic links)"
    assert got == [
        f"{tmp_path / 'l1'}: {loop}; allowed: an existing file or folder",
        f"{tmp_path / 'loop.yaml'}: {loop}; allowed: a readable regular file",
    ]


def test_tree_dangling_symlink_is_named(tmp_path: Path) -> None:
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    assert problems_of([tmp_path / "gone.yaml"]) == [
        f"{tmp_path / 'gone.yaml'}: a symlink to a missing file or folder; "
        "allowed: an existing file or folder"
    ]


def test_tree_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    # In a child with a timeout: a reader that opened the FIFO would block forever, as no
    # process ever writes to it.
    (tmp_path / "a.yaml").write_text(entry("a"))
    os.mkfifo(tmp_path / "pipe.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{tmp_path / 'pipe.yaml'}: not read: it is a FIFO (named pipe); "
        "allowed: a readable regular file",
        "1 problem found",
    ]
    # Named on the command line, too.
    assert problems_of([tmp_path / "pipe.yaml"]) == [done.stderr.splitlines()[0]]


def test_tree_devices_are_refused(tmp_path: Path) -> None:
    (tmp_path / "null.yaml").symlink_to("/dev/null")
    got = problems_of([Path("/dev/zero"), tmp_path / "null.yaml"])
    assert got == [
        "/dev/zero: not read: it is a character device; allowed: a readable regular file",
        f"{tmp_path / 'null.yaml'}: not read: it is a character device; "
        "allowed: a readable regular file",
    ]


def test_tree_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:  # sparse: no disk used, and the loader must not read it
        f.truncate(MAX_FILE_BYTES + 1)
    assert problems_of([big]) == [
        f"{big}: file too large ({MAX_FILE_BYTES + 1} bytes; the limit is {MAX_FILE_BYTES} "
        "bytes, 256 MiB); allowed: files up to 256 MiB: split larger desired state into "
        "several files"
    ]


def _drop_dac_override() -> None:  # runs in the child before exec
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")


def test_tree_unreadable_file_and_folder(tmp_path: Path) -> None:
    # chmod 000 does not stop root, and these tests may run as root: the child then drops
    # the capabilities that let root read anything (from its bounding set, before exec), so
    # the refusal is the kernel's real EACCES.
    (tmp_path / "a.yaml").write_text(entry("a"))
    secret = tmp_path / "secret.yaml"
    secret.write_text(entry("s"))
    secret.chmod(0)
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "c.yaml").write_text(entry("c"))
    closed.chmod(0)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kquota.cli.main", "validate", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_drop_dac_override if os.geteuid() == 0 else None,  # noqa: PLW1509
        )
    finally:
        closed.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"{closed}: cannot read: Permission denied; allowed: a readable folder",
        f"{secret}: cannot read: Permission denied; allowed: a readable regular file",
        "2 problems found",
    ]


def test_tree_file_names_are_escaped_in_messages(tmp_path: Path) -> None:
    evil = tmp_path / "x\x1b[2K\nforged: ok.yaml"
    evil.write_text(HEAD + "quotas: {}\n")
    (got,) = problems_of([tmp_path])
    assert "\n" not in got and "\x1b" not in got
    assert got.startswith(f"{tmp_path}/x\\x1b[2K\\x0aforged: ok.yaml:3:9: quotas is ")
