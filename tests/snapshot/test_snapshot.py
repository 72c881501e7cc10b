"""Snapshot files: both formats, stable order, errors with file:line, fingerprints."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kquota.snapshot.files as snapshot_module
from kquota.model import Entity, QuotaState
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.snapshot.files import (
    SnapshotError,
    dump_snapshot,
    parse_snapshot,
    read_snapshot,
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


def test_equal_values_are_shared_and_checked_as_before(tmp_path: Path) -> None:
    # Entries with equal quotas share one dict (memory at 1M entities); an entry whose
    # values merely compare equal to pooled ones (true == 1.0, -0.0 == 0.0) is still read
    # for what it is.
    rows = [
        '{"entity": {"user": "a"}, "quotas": {"request_percentage": 1.0}}',
        '{"entity": {"user": "b"}, "quotas": {"request_percentage": 1}}',
        '{"entity": {"user": "c"}, "quotas": {"consumer_byte_rate": 0.0}}',
        '{"entity": {"user": "d"}, "quotas": {"consumer_byte_rate": -0.0}}',
    ]
    state = read_snapshot(_write(tmp_path, "\n".join(rows)))
    a, b, c, d = (state[Entity.of({"user": u})] for u in "abcd")
    assert a is b and a == {"request_percentage": 1.0}
    assert type(b["request_percentage"]) is float
    assert str(c["consumer_byte_rate"]) == "0.0" and str(d["consumer_byte_rate"]) == "-0.0"
    bad = rows[0] + '\n{"entity": {"user": "e"}, "quotas": {"request_percentage": true}}'
    with pytest.raises(SnapshotError, match=r":2: quota 'request_percentage' must be a number"):
        read_snapshot(_write(tmp_path, bad))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(text + "\n")
    return path


def _outcome(data: bytes) -> tuple[QuotaState, dict[str, str | None]] | str:
    meta: dict[str, str | None] = {}
    try:
        return parse_snapshot(data, "s.json", meta), meta
    except SnapshotError as e:
        return str(e)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 6),
    edits=st.lists(
        st.tuples(
            st.integers(0, 2000),
            st.sampled_from([b"", b",", b"\n", b"]", b"}", b" ", b"1", b"true", b"[]", b"{}"]),
        ),
        max_size=3,
    ),
    chunk=st.integers(0, 400),
)
def test_written_layout_reads_as_the_document_path(
    n: int, edits: list[tuple[int, bytes]], chunk: int
) -> None:
    # The reader of dump_snapshot's layout, a chunk of lines at a time, must give what
    # parsing the whole document gives: the same state, or (after edits) the same error, or
    # decline. Entries of every shape the writer writes; values repeat (the pool's path).
    shapes: list[dict[str, str | None]] = [
        {"user": "u{}"},
        {"user": "u{}", "client-id": "c"},
        {"user": None, "client-id": "c{}"},
        {"client-id": "c{}"},
        {"ip": "10.0.0.{}"},
    ]
    state = {
        Entity.of({t: v and v.format(i) for t, v in shapes[i % 5].items()}): {
            "producer_byte_rate": 1024.0 * (i % 2 + 1)
        }
        for i in range(n)
    }
    data = dump_snapshot(state, meta={"cluster": "c", "cluster_id": "id-1"})
    for at, insert in edits:
        i = at % (len(data) + 1)
        data = data[:i] + insert + data[i + 1 :]
    chunked = snapshot_module._READ_CHUNK
    snapshot_module._READ_CHUNK = chunk
    try:
        fast = _outcome(data)
    finally:
        snapshot_module._READ_CHUNK = chunked
    if not edits:
        # The metadata too: a saved plan made from the snapshot records its cluster id.
        assert fast == (state, {"cluster": "c", "cluster_id": "id-1", "captured_at": None})
    written = snapshot_module._parse_as_written
    snapshot_module._parse_as_written = lambda data, meta=None: None  # type: ignore[assignment]
    try:
        assert fast == _outcome(data)
    finally:
        snapshot_module._parse_as_written = written


def test_entry_lines_match_one_encoding_per_entry_across_chunks() -> None:
    """The writer encodes entries in chunks and splits them into lines afterwards; names that
    look like an entry boundary, quotes and backslashes must not fool the split."""
    import orjson

    from kquota.model import sorted_entities

    tricky = ['},{"entity":', '\\"},{"entity":x', "a\\", 'q"q', "ü\n", "", "<default>"]
    state: QuotaState = {}
    for i in range(4500):  # more than two chunks
        name = f"{tricky[i % len(tricky)]}{i}"
        entity = Entity.of({"user": name, "client-id": None} if i % 3 else {"entity": name})
        state[entity] = {"z": float(i), "a": -0.0, tricky[i % len(tricky)]: 1e300}
    meta = {"cluster": "c", "cluster_id": None}

    def line(e: Entity, extra: dict[str, str | None]) -> bytes:
        quotas = {k: state[e][k] for k in sorted(state[e])}
        return orjson.dumps({"entity": e.to_json(), "quotas": quotas, **extra})

    order = sorted_entities(state)
    expected_json = b",\n".join(line(e, {}) for e in order)
    assert dump_snapshot(state) == (
        b'{"format_version": 1, "entries": [\n' + expected_json + b"\n]}\n"
    )
    expected_lines = b"".join(line(e, meta) + b"\n" for e in order)
    assert dump_snapshot(state, "jsonl", meta) == expected_lines
    assert parse_snapshot(dump_snapshot(state, "jsonl", meta)) == state
    assert parse_snapshot(dump_snapshot(state)) == state


def test_entry_lines_of_shared_and_whole_number_values() -> None:
    """The writer remembers the encoding of the values it met; entities on one tier, signed
    zeros (equal, printed apart), unknown single types and int values must come out as one
    ``orjson.dumps`` of the entry gives."""
    import orjson

    from kquota.model import sorted_entities

    tier = {"producer_byte_rate": 1048576, "consumer_byte_rate": 2.5}
    zeros = [{"producer_byte_rate": 0.0}, {"producer_byte_rate": -0.0}]
    state: QuotaState = {}
    for i in range(5000):
        entity = Entity.of({("user", "group", "ip")[i % 3]: None if i % 7 == 0 else f"n{i}"})
        state[entity] = tier if i % 2 else zeros[i % 4 // 2] if i % 10 == 0 else {"x": i}
    order = sorted_entities(state)
    expected = b"".join(
        orjson.dumps(
            {
                "entity": e.to_json(),
                "quotas": {k: float(v) for k, v in sorted(state[e].items())},
                "cluster": "c",
            }
        )
        + b"\n"
        for e in order
    )
    assert dump_snapshot(state, "jsonl", {"cluster": "c"}) == expected
    assert b'"producer_byte_rate":1048576.0' in expected
    assert b'"producer_byte_rate":-0.0' in expected and b'"producer_byte_rate":0.0' in expected


def test_the_entry_by_entry_reader_keeps_the_recorded_cluster(tmp_path: Path) -> None:
    # A saved plan made from a kquota snapshot records its cluster and id from this meta.
    from kquota.model import Entity
    from kquota.snapshot.files import dump_snapshot, read_snapshot_and_meta

    path = tmp_path / "s.json"
    meta = {"cluster": "c1", "cluster_id": "id-1", "captured_at": "2026-01-01T00:00:00+00:00"}
    path.write_bytes(
        dump_snapshot({Entity.of({"user": "a"}): {"request_percentage": 5.0}}, "json", meta)
    )  # type: ignore[arg-type]
    assert read_snapshot_and_meta(path)[1] == meta


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_every_double_a_broker_may_hold_reads_back_bit_for_bit(tmp_path: Path, fmt: str) -> None:
    import math
    import struct

    from kquota.snapshot.files import dump_snapshot

    odd = [math.nan, math.inf, -math.inf, 1.7976931348623157e308, 5e-324, -0.0, 0.1,
           float(2**53 + 2), float(2**63), 2.2250738585072014e-308]  # fmt: skip
    state = {
        Entity.of({"user": f"u{i}"}): {"request_percentage": v, "producer_byte_rate": 1.0}
        for i, v in enumerate(odd)
    }
    path = tmp_path / f"s.{fmt}"
    path.write_bytes(dump_snapshot(state, fmt))  # type: ignore[arg-type]
    back = read_snapshot(path)
    assert [struct.pack(">d", back[e]["request_percentage"]) for e in state] == [
        struct.pack(">d", v) for v in odd
    ]
    assert b'"request_percentage":"NaN"' in path.read_bytes()


@pytest.mark.parametrize("chunk", [0, 1, 150, 1 << 16])
def test_written_layout_reads_every_shape_a_chunk_at_a_time(chunk: int) -> None:
    # Entries the pool knows take the short road, the others the full check: all are read,
    # never declined to the document path, whatever the chunk size.
    names = ["a", "b", None, "ünï", 'q"\\', "x,\ny"]
    values = [{"producer_byte_rate": 1024.0}, {"request_percentage": 1.0}, {"k": -0.0}]
    values += [{"k": float("nan")}, {"k": float("inf"), "k2": 0.0}]
    shapes = [{"user": n} for n in names] + [{"user": n, "client-id": "c"} for n in names]
    shapes += [{"client-id": n} for n in names] + [{"ip": "10.0.0.1"}, {"ip": None}]
    shapes += [{"user": "a", "other": "z"}, {"client-id": "c", "ip": "10.0.0.2"}]
    state = {Entity.of(s): values[i % len(values)] for i, s in enumerate(shapes)}
    data = dump_snapshot(state)
    chunked = snapshot_module._READ_CHUNK
    snapshot_module._READ_CHUNK = chunk
    try:
        got = snapshot_module._parse_as_written(data)
    finally:
        snapshot_module._READ_CHUNK = chunked
    assert got is not None and set(got) == set(state)
    assert all(str(v) == str(state[e]) for e, v in got.items())  # -0.0 and NaN as written


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ('{"user":"b"},"quotas":{"request_percentage":true}', "must be a number, got true"),
        ('{"user":"a"},"quotas":{"request_percentage":1.0}', "duplicate entity"),
        ('{"user":1},"quotas":{"request_percentage":1.0}', "must be a string or null, got 1"),
    ],
)
def test_written_layout_refuses_what_the_pool_would_match(second: str, message: str) -> None:
    # The second entry's values equal the first's pooled ones (true == 1.0): still refused,
    # with the line the document path names.
    data = (
        '{"format_version": 1, "entries": [\n'
        '{"entity":{"user":"a"},"quotas":{"request_percentage":1.0}},\n'
        f'{{"entity":{second}}}\n]}}\n'
    ).encode()
    with pytest.raises(SnapshotError, match=rf"^s\.json:3: entries\[1\]: .*{message}"):
        parse_snapshot(data, "s.json")


_FORGED_PAST_A_CHUNK = [
    ({"entity": {"user": "late"}, "quotas": {"producer_byte_rate": True}},
     "entries[5000]: quota 'producer_byte_rate' must be a number, got true"),
    ({"entity": {"user": "x1"}, "quotas": {"producer_byte_rate": 1.0}},
     "entries[5000]: duplicate entity {user=x1}"),
    ({"entity": {"user": 5}, "quotas": {"producer_byte_rate": 1.0}},
     "entries[5000]: entity name for 'user' must be a string or null, got 5"),
    ({"entity": {"user": "z"}, "quotas": {"producer_byte_rate": 1.0}, "by": "mallory"},
     "entries[5000]: an entry has the fields 'entity' and 'quotas'"),
]  # fmt: skip


@pytest.mark.parametrize(("forged", "message"), _FORGED_PAST_A_CHUNK)
def test_a_forged_entry_past_the_first_chunk_is_refused_by_the_command(
    tmp_path: Path, forged: dict[str, object], message: str
) -> None:
    """A snapshot in kquota's own layout, edited by someone else: 5,000 entries it wrote (over
    64 KiB: the reader's first chunk of lines) and a forged one after them (``true`` equals
    the written 1.0 as a dict key: it must not pass as one). ``kquota plan``,
    a process of its own, refuses the file with its line and the entry, writes no plan and
    shows no traceback."""
    import json
    import subprocess
    import sys

    written = [
        {"entity": {"user": f"x{i}"}, "quotas": {"producer_byte_rate": 1.0}} for i in range(5000)
    ]
    lines = [json.dumps(e, separators=(",", ":")) for e in [*written, forged]]
    snap = tmp_path / "snap.json"
    snap.write_text('{"format_version": 1, "entries": [\n' + ",\n".join(lines) + "\n]}\n")
    assert snap.stat().st_size > 1 << 16
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "a.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {user: x0}\n    set: {producer_byte_rate: 1MiB}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "kquota", "plan", "q", "--snapshot", "snap.json", "--no-color"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: snap.json:5002: {message}"), done.stderr
    assert "Traceback" not in done.stderr
