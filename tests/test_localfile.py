"""Every local file kquota reads (saved plans, snapshots, kquota.yaml, client properties,
principals, desired state) is a regular file of bounded size: anything else is a message
naming the path, never a hang or a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kquota.localfile import MiB, UnreadableFile, open_regular, read_regular

_READ = {"limit": MiB, "larger": "split it"}


def test_a_regular_file_within_the_limit_is_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * MiB)
    assert read_regular(tmp_path / "f", **_READ) == b"x" * MiB  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: os.mkfifo(p), "not read: it is a FIFO (named pipe)"),
        (lambda p: os.symlink("/dev/zero", p), "not read: it is a character device"),
        (lambda p: p.mkdir(), "not read: it is a folder"),
        (lambda p: os.symlink(p, p), "cannot read: a symlink loop"),
        (lambda p: None, "cannot read: No such file or directory"),
        (lambda p: os.truncate(p.touch() or p, MiB + 1), "file too large (1048577 bytes;"),
    ],
    ids=["fifo", "device", "folder", "loop", "missing", "too-large"],
)
def test_anything_else_is_refused_with_the_reason(tmp_path: Path, make: object, what: str) -> None:
    path = tmp_path / "input.json"
    make(path)  # type: ignore[operator]
    with pytest.raises(UnreadableFile) as info:
        read_regular(path, **_READ)  # type: ignore[arg-type]
    assert info.value.what.startswith(what), info.value.what
    allowed = "files up to 1 MiB: split it" if "too large" in what else "a readable regular file"
    assert info.value.allowed == allowed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply", "{f}", "--bootstrap-server", "127.0.0.1:1", "--auto-approve"],
         "{f}: cannot read the saved plan: it is a FIFO (named pipe)"),
        (["plan", "{d}", "--snapshot", "{f}"], "{f}: cannot read snapshot: it is a FIFO"),
        (["plan", "{d}", "--config", "{f}"], "{f}: cannot read config: it is a FIFO"),
        (["plan", "{d}", "--bootstrap-server", "127.0.0.1:1", "--command-config", "{f}"],
         "{f}: cannot read properties file: it is a FIFO"),
    ],
    ids=["plan-file", "snapshot", "kquota.yaml", "command-config"],
)  # fmt: skip
def test_a_fifo_given_to_any_command_is_refused_without_hanging(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    # In a child with a timeout: a reader that opened the FIFO would block forever, as no
    # process ever writes to it (and port 1 is closed: a connection would fail differently).
    fifo, desired = tmp_path / "input.json", tmp_path / "quotas.yaml"
    os.mkfifo(fifo)
    desired.write_text("apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n")
    args = [a.format(f=fifo, d=desired) for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert message.format(f=fifo) in done.stderr
    assert "Traceback" not in done.stderr


def test_open_regular_streams_a_regular_file_and_refuses_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"one\ntwo\n")
    with open_regular(path, limit=8, larger="split it") as f:
        assert list(f) == [b"one\n", b"two\n"]
    with pytest.raises(UnreadableFile) as e:
        open_regular(path, limit=7, larger="split it")
    assert str(e.value) == (
        "file too large (8 bytes; the limit is 7 bytes, 6.67572e-06 MiB); allowed: files up to "
        "6.67572e-06 MiB: split it"
    )
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile, match="it is a FIFO"):
        open_regular(fifo, limit=MiB, larger="split it")  # refused, never opened to block


def test_replace_file_replaces_a_planted_symlink_instead_of_writing_through_it(
    tmp_path: Path,
) -> None:
    from kquota.localfile import replace_file

    victim, target = tmp_path / "victim", tmp_path / "record.json"
    victim.write_text("not kquota's\n")
    target.symlink_to(victim)
    replace_file(target, b"{}\n")
    assert victim.read_text() == "not kquota's\n"
    assert not target.is_symlink() and target.read_bytes() == b"{}\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["record.json", "victim"]
