"""``--principals FILE``: the format, and hostile files (file:line messages, limits)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kquota.desired.problems import DesiredStateError
from kquota.plan.resolver import Principal
from kquota.principals import listed
from kquota.principals.listed import read_principals
from kquota.principals.model import SourceReport


def test_reads_every_form_skips_comments_and_repeats(tmp_path: Path) -> None:
    f = tmp_path / "p.txt"
    f.write_text(
        "# service accounts\n\nuser=svc-etl\r\n client-id = app ,user=bob\n"
        "ip=2001:db8::1\nuser=svc-etl\nuser=a b\n"
    )
    found = read_principals(f)
    assert found.principals == (
        Principal(None, None, "2001:db8::1"),
        Principal("a b"),
        Principal("bob", " app "),  # names are taken exactly, types trimmed
        Principal("svc-etl"),
    )
    assert found.reports == (SourceReport(f"file:{f}", 4),)


@pytest.mark.parametrize(
    ("text", "line", "wrong"),
    [
        ("user=a\ngroup=x\n", 2, "expected type=name pairs"),
        ("user=a,user=b\n", 1, "user given twice"),
        ("user=\n", 1, "user: empty name"),
        ("ip=host.example\n", 1, "is not an IP literal"),
        ("user=a\n\nnonsense\n", 3, "expected type=name pairs"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, text: str, line: int, wrong: str) -> None:
    f = tmp_path / "p.txt"
    f.write_text(text)
    with pytest.raises(DesiredStateError) as e:
        read_principals(f)
    assert f"{f}:{line}:1: " in str(e.value) and wrong in str(e.value)
    assert "allowed:" in str(e.value)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "p.txt"
    f.write_bytes(b"user=a\nuser=\xff\n")
    with pytest.raises(DesiredStateError, match=r"p.txt:2:1: not UTF-8 text"):
        read_principals(f)


def test_problems_are_capped(tmp_path: Path) -> None:
    f = tmp_path / "p.txt"
    f.write_text("x\n" * 1000)
    with pytest.raises(DesiredStateError) as e:
        read_principals(f)
    lines = str(e.value).splitlines()
    assert len(lines) == listed.MAX_PROBLEMS + 1 and "stopped after 100 problems" in lines[-1]


def test_size_limit_folder_and_fifo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.txt"
    big.write_text("user=a\n" * 100)
    monkeypatch.setattr(listed, "MAX_FILE_BYTES", 64)
    with pytest.raises(DesiredStateError, match="file too large .* split the principals"):
        read_principals(big)
    with pytest.raises(DesiredStateError, match="it is a folder"):
        read_principals(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(DesiredStateError, match="FIFO"):
        read_principals(fifo)  # never blocks waiting for a writer
    with pytest.raises(DesiredStateError, match="missing.txt"):
        read_principals(tmp_path / "missing.txt")


def test_fleet_resolve_reads_the_same_format_in_order_and_refuses_ip(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("# fleet\nuser=b,client-id=x\nclient-id=y\nuser=b,client-id=x\nuser=a\n")
    assert listed.read_user_clients(path) == [("b", "x"), ("", "y"), ("b", "x"), ("a", "")]
    path.write_text("user=a\nip=203.0.113.7\nuser=\n")
    with pytest.raises(DesiredStateError) as info:
        listed.read_user_clients(path)
    message = str(info.value)
    assert f"{path}:2:1: ip: fleet resolve resolves user and client-id quotas" in message
    assert f"{path}:3:1: user: empty name" in message
