"""Snapshot files: both formats, stable order, errors with file:line, fingerprints."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kquota.model import Entity, QuotaState
from kquota.snapshot import (
    SnapshotError,
    dump_snapshot,
    read_snapshot,
    snapshot_fingerprint,
    write_snapshot,
)

STATE: QuotaState = {
    Entity.of({"user": "bob"}): {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2.5},
    Entity.of({"user": "alice", "client-id": None}): {"producer_byte_rate": 1048576.0},
    Entity.of({"ip": None}): {"connection_creation_rate": 10.0},
    Entity.of({"user": None}): {"request_percentage": 0.1 + 0.2},
}


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_round_trip(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"s.{fmt}"
    with path.open("wb") as fh:
        write_snapshot(STATE, fh, fmt)  # type: ignore[arg-type]
    assert read_snapshot(path) == STATE
    text = io.StringIO()
    write_snapshot(STATE, text, fmt)  # type: ignore[arg-type]
    assert text.getvalue() == path.read_text()


def test_json_contract_and_order() -> None:
    assert dump_snapshot(STATE).decode() == (
        '{"format_version": 1, "entries": [\n'
        '{"entity":{"user":null},"quotas":{"request_percentage":0.30000000000000004}},\n'
        '{"entity":{"user":"alice","client-id":null},"quotas":{"producer_byte_rate":1048576.0}},\n'
        '{"entity":{"user":"bob"},"quotas":{"consumer_byte_rate":2.5,"producer_byte_rate":1048576.0}},\n'
        '{"entity":{"ip":null},"quotas":{"connection_creation_rate":10.0}}\n'
        "]}\n"
    )
    assert dump_snapshot({}) == b'{"format_version": 1, "entries": []}\n'


def test_reads_pretty_printed_documents(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        """{
  "format_version": 1,
  "entries": [
    {"entity": {"user": "alice", "client-id": null}, "quotas": {"producer_byte_rate": 1048576}}
  ]
}"""
    )
    assert read_snapshot(path) == {
        Entity.of({"user": "alice", "client-id": None}): {"producer_byte_rate": 1048576.0}
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ":1: empty snapshot file"),
        ('{"format_version": 2, "entries": []}', "unsupported snapshot format_version 2"),
        ('{"format_version": 1, "entries": [}', ":1:"),
        ('{"format_version": 1, "entries": [], "x": 1}', "unknown top-level field(s): x"),
        (
            '{"format_version": 1, "entries": [\n{"entity": {"user": "a"}, "quotas": {"k": 1}},\n'
            '{"entity": {"user": "b"}, "quotas": {"k": "1"}}\n]}',
            ":3: entries[1]: quota 'k' must be a number, got \"1\"",
        ),
        (
            '{"entity": {"user": "a"}, "quotas": {"k": 1}}\n'
            '{"entity": {"user": "a"}, "quotas": {"k": 2}}\n',
            ":2: duplicate entity {user=a}",
        ),
        (
            '{"entity": {"user": "a"}, "quotas": {"k": 1}}\n{"entity": {}, "quotas": {"k": 2}}\n',
            ":2: 'entity' must be",
        ),
        ('{"entity": {"user": "a"}, "quotas": {}}\n', ":1: 'quotas' must be a non-empty"),
        ('{"entity": {"user": "a"}, "quotas": {"k": true}}\n', "must be a number, got true"),
        ('{"entity": {"user": "a"}, "quotas": {"k": 1}}\n{"entity": \n', ":2:"),
        ('{"entity": {"user": 5}, "quotas": {"k": 1}}\n', "must be a string or null"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SnapshotError) as err:
        read_snapshot(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        read_snapshot(tmp_path / "nope.json")


def test_fingerprint_is_exact_and_canonical() -> None:
    fp = snapshot_fingerprint(STATE)
    reordered = dict(reversed(list(STATE.items())))
    assert snapshot_fingerprint(reordered) == fp
    bob = Entity.of({"user": "bob"})
    nudged = {**STATE, bob: {**STATE[bob], "consumer_byte_rate": 2.5000000000000004}}
    assert snapshot_fingerprint(nudged) != fp
    # Restricted to some entities; an absent entity counts.
    assert snapshot_fingerprint(STATE, [bob]) == snapshot_fingerprint(
        nudged | {bob: STATE[bob]}, [bob]
    )
    ghost = Entity.of({"user": "ghost"})
    assert snapshot_fingerprint(STATE, [ghost]) != snapshot_fingerprint(
        {**STATE, ghost: {"producer_byte_rate": 1.0}}, [ghost]
    )
    zero = snapshot_fingerprint({bob: {"k": 0.0}})
    assert zero != snapshot_fingerprint({bob: {"k": -0.0}})
