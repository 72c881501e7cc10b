"""Sample files: each kind read to the same rows, and every bad input an error with its
file and line (row), never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kquota.usage.rows import FETCH_BYTE_RATE, PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample
from kquota.usage.samples import SampleFileError, SampleFiles
from sample_rows import T0, series, write_jsonl, write_parquet

GOOD = (
    '{"cluster": "prod", "broker": "1", "user": "alice", "client_id": null, '
    '"metric": "produce-byte-rate", "timestamp_ms": 1767225600000, "value": 1048576.0}\n'
)


def _read(*paths: Path, cluster: str | None = "prod", **kw: int) -> list[Sample]:
    return list(SampleFiles(paths, cluster, **kw))


def test_json_lines_read_to_rows(tmp_path: Path) -> None:
    rows = series("alice", None, PRODUCE_BYTE_RATE, [1, 2]) + series(
        None, "app", FETCH_BYTE_RATE, [3], broker="2"
    )
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    assert _read(path) == rows


def test_broker_ids_and_empty_tags(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(GOOD.replace('"broker": "1"', '"broker": 3').replace("null", '""') + "\n")
    [s] = _read(path)
    assert (s.broker, s.user, s.client_id) == ("3", "alice", None)


def test_parquet_reads_to_the_same_rows(tmp_path: Path) -> None:
    rows = series("alice", "app", PRODUCE_BYTE_RATE, range(100_000), step=1000)
    assert _read(write_parquet(tmp_path / "s.parquet", rows)) == rows


def test_a_folder_is_its_sample_files_by_name(tmp_path: Path) -> None:
    a = series("a", None, PRODUCE_BYTE_RATE, [1])
    b = series("b", None, PRODUCE_BYTE_RATE, [2])
    write_jsonl(tmp_path / "2.jsonl", b)
    write_jsonl(tmp_path / "1.jsonl", a)
    (tmp_path / "notes.md").write_text("not samples")
    assert _read(tmp_path) == a + b


BAD_LINES = [
    ("{not json\n", "invalid JSON"),
    ("[1, 2]\n", "a JSON list; allowed: one sample object a line"),
    (GOOD.replace('"metric": "produce-byte-rate"', '"metric": "bytes"'), "unknown metric 'bytes'"),
    (GOOD.replace('"user": "alice", ', ""), "missing user; allowed: exactly the fields"),
    (GOOD.replace('"client_id"', '"client-id"'), "missing client_id; unknown field(s) 'client-id'"),
    (GOOD.replace("1048576.0", "-1.0"), "value -1.0 is negative; allowed: 0 or more"),
    (GOOD.replace("1048576.0", "1e999"), "invalid JSON: number is infinity"),
    (GOOD.replace("1048576.0", "NaN"), "invalid JSON"),
    (GOOD.replace("1048576.0", '"1MiB"'), "value '1MiB'; allowed: a number"),
    (GOOD.replace("1767225600000", "1.5"), "timestamp_ms 1.5; allowed: milliseconds"),
    (GOOD.replace('"broker": "1"', '"broker": ""'), "broker ''"),
    (GOOD.replace('"alice"', "7"), "user 7; allowed: a string, or null"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(GOOD + "\n" + line)
    with pytest.raises(SampleFileError) as e:
        _read(path)
    assert str(e.value).startswith(f"{path}:3: ")
    assert message in str(e.value)


def test_a_sample_of_another_cluster_names_both(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(GOOD + GOOD.replace('"prod"', '"staging"'))
    with pytest.raises(
        SampleFileError,
        match=r"s.jsonl:2: a sample of cluster 'staging', not "
        r"of 'prod' \(the cluster read\)",
    ):
        _read(path, cluster=None)  # the first sample's cluster is the one read
    with pytest.raises(
        SampleFileError, match=r"s.jsonl:1: a sample of cluster 'prod', not of 'qa'"
    ):
        _read(path, cluster="qa")


def test_a_file_over_the_limit_is_refused_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(GOOD * 10)
    with pytest.raises(
        SampleFileError,
        match=rf"file too large \({len(GOOD) * 10} bytes; the "
        r"limit is 100 bytes",
    ):
        _read(path, max_file_bytes=100)
    parquet = write_parquet(tmp_path / "s.parquet", series("a", None, PRODUCE_BYTE_RATE, [1]))
    with pytest.raises(SampleFileError, match="file too large"):
        _read(parquet, max_file_bytes=100)


def test_not_a_regular_file_or_not_a_sample_file(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SampleFileError, match="cannot read sample file: it is a FIFO"):
        _read(fifo)
    (tmp_path / "x.csv").write_text("cluster,broker\n")
    with pytest.raises(SampleFileError, match=r"not a sample file by its name; allowed: \*.jsonl"):
        _read(tmp_path / "x.csv")
    with pytest.raises(SampleFileError, match="no such sample file"):
        _read(tmp_path / "gone")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SampleFileError, match="no sample file in this folder"):
        _read(empty)


def test_parquet_without_a_column_or_with_a_bad_row(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"cluster": ["prod"]}), path)
    with pytest.raises(SampleFileError, match=r"without column\(s\) broker, user, client_id"):
        _read(path)
    rows = series("a", None, PRODUCE_BYTE_RATE, [1, 2, 3])
    rows[2] = Sample("prod", "1", "a", None, PRODUCE_BYTE_RATE, T0, float("nan"))
    write_parquet(path, rows)
    with pytest.raises(SampleFileError, match=r"s.parquet: row 3: value NaN"):
        _read(path)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(SampleFileError, match="junk.parquet: not a Parquet sample file"):
        _read(tmp_path / "junk.parquet")


BATCH = 65536  # the Parquet reader's batch: rows past it are in a batch of their own


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"value": float("nan")}, "value NaN; allowed: a finite number, 0 or more"),
        ({"value": float("inf")}, "value inf; allowed: a finite number, 0 or more"),
        ({"value": -2.0}, "value -2.0 is negative; allowed: 0 or more"),
        ({"timestamp_ms": -1}, "timestamp_ms -1; allowed: milliseconds since the epoch"),
        ({"metric": "bytes"}, "unknown metric 'bytes'; allowed: fetch-byte-rate"),
        ({"broker": ""}, "broker ''; allowed: a broker id or name"),
        ({"cluster": "test"}, "a sample of cluster 'test', not of 'prod' (the cluster read)"),
    ],
)
def test_a_bad_parquet_row_in_a_later_batch_is_named_by_its_row(
    tmp_path: Path, bad: dict[str, object], said: str
) -> None:
    # The first batch passes the column-by-column check; the bad one is read row by row.
    from dataclasses import replace

    rows = series("a", None, PRODUCE_BYTE_RATE, range(BATCH + 10), step=1000)
    rows[BATCH + 4] = replace(rows[BATCH + 4], **bad)
    path = write_parquet(tmp_path / "s.parquet", rows)
    with pytest.raises(SampleFileError) as e:
        _read(path)
    assert str(e.value).startswith(f"{path}: row {BATCH + 5}: {said}")


def test_parquet_empty_tags_and_other_column_types_read_as_json_lines_do(tmp_path: Path) -> None:
    from dataclasses import replace

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = series("", "", PRODUCE_BYTE_RATE, range(5)) + series("b", "", FETCH_BYTE_RATE, [7])
    expected = [replace(r, user=r.user or None, client_id=None) for r in rows]
    assert _read(write_parquet(tmp_path / "s.parquet", rows)) == expected
    # An integer broker and an integer value: not the columns kquota writes, read all the same.
    table = pa.table(
        {
            "cluster": ["prod"],
            "broker": pa.array([3], pa.int32()),
            "user": ["a"],
            "client_id": pa.array([None], pa.string()),
            "metric": [PRODUCE_BYTE_RATE],
            "timestamp_ms": [T0],
            "value": [5],
        }
    )
    pq.write_table(table, tmp_path / "int.parquet")
    assert _read(tmp_path / "int.parquet") == [
        Sample("prod", "3", "a", None, PRODUCE_BYTE_RATE, T0, 5.0)
    ]


def _t(s: Sample) -> tuple[object, ...]:
    return (s.cluster, s.broker, s.user, s.client_id, s.metric, s.timestamp_ms, s.value)


def test_read_batches_are_the_samples_read_bytes_reads(tmp_path: Path) -> None:
    rows = series("a", None, PRODUCE_BYTE_RATE, range(BATCH + 3), step=1000)
    rows[BATCH + 1] = Sample("prod", "1", "a", "", PRODUCE_BYTE_RATE, T0 + 10**9, 1.0)
    files = [
        write_parquet(tmp_path / "s.parquet", rows),
        write_jsonl(tmp_path / "s.jsonl", rows[:10]),
    ]
    (tmp_path / "1.prom").write_text(SCRAPE)
    for path in [*files, tmp_path / "1.prom"]:
        data = path.read_bytes()
        by_rows = [_t(s) for s in SampleFiles((), "prod").read_bytes(path, data, T0)]
        batches = list(SampleFiles((), "prod").read_batches(path, data, T0))
        by_batches = [tuple(r.values()) for b in batches for r in b.to_pylist()]
        assert by_batches == by_rows and by_rows
    # A bad file is the same error either way.
    bad = write_jsonl(tmp_path / "bad.jsonl", series("a", None, PRODUCE_BYTE_RATE, [-1]))
    with pytest.raises(SampleFileError, match=r"bad.jsonl:1: value -1.0 is negative"):
        list(SampleFiles((), "prod").read_batches(bad, bad.read_bytes(), T0))


SCRAPE = "".join(
    line + "\n"
    for line in [
        "# HELP kafka_server_quota_byte_rate Produce/Fetch byte rate per principal",
        "# TYPE kafka_server_quota_byte_rate gauge",
        'kafka_server_quota_byte_rate{type="Produce",user="alice",client_id="",} 1048576.0 '
        "1767225600000",
        'kafka_server_quota_byte_rate{type="Fetch",user="",client_id="a \\"quoted\\" \\\\ id"} '
        "2.5e3 1767225660000",
        'kafka_server_quota_throttle_time{type="Produce",user="alice",client_id=""} 0.0',
        'jvm_memory_bytes_used{area="heap"} 1.2e8',
        'kafka_server_quota_request_time{broker="7",type="Request",user="alice",client_id="app"} '
        "12.5 1767225600000",
    ]
)


def test_a_scrape_reads_our_metrics_and_passes_over_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "3.prom"
    path.write_text(SCRAPE)
    os.utime(path, (1767225700, 1767225700))
    assert _read(path) == [
        Sample("prod", "3", "alice", None, PRODUCE_BYTE_RATE, T0, 1048576.0),
        Sample("prod", "3", None, 'a "quoted" \\ id', FETCH_BYTE_RATE, T0 + 60_000, 2500.0),
        # no timestamp: the file's modification time, when the scrape was written
        Sample("prod", "3", "alice", None, PRODUCE_THROTTLE_TIME, 1767225700000, 0.0),
        Sample("prod", "7", "alice", "app", "request-time", T0, 12.5),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'kafka_server_quota_byte_rate{type="Request",user="a"} 1',
            "type 'Request'; allowed: type=Fetch, Produce",
        ),
        ('kafka_server_quota_byte_rate{user="a"} 1', "type None"),
        ('kafka_server_quota_byte_rate{type="Produce",user="a"} NaN', "value NaN"),
        ('kafka_server_quota_byte_rate{type="Produce",user="a"} +Inf', "value inf"),
        ('kafka_server_quota_byte_rate{type="Produce",user="a"} -3', "is negative"),
        ('kafka_server_quota_byte_rate{type="Produce",user=a} 1', "labels not in the exposition"),
        ('kafka_server_quota_byte_rate{type="Produce",type="Fetch"} 1', "label type given twice"),
        ('kafka_server_quota_byte_rate{type="Produce"} 1 12.5', "timestamp '12.5'"),
        ('kafka_server_quota_byte_rate{type="Produce"} 1 2 3', "expected a value and an optional"),
        ('kafka_server_quota_byte_rate{type="Produce",cluster="qa"} 1', "of cluster 'qa', not"),
    ],
)
def test_a_bad_scrape_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "1.prom"
    path.write_text("# a scrape\n" + line + "\n")
    with pytest.raises(SampleFileError) as e:
        _read(path)
    assert str(e.value).startswith(f"{path}:2: ")
    assert message in str(e.value)


def test_a_scrape_needs_a_cluster(tmp_path: Path) -> None:
    path = tmp_path / "1.prom"
    path.write_text('kafka_server_quota_byte_rate{type="Produce",user="a"} 1 5\n')
    with pytest.raises(SampleFileError, match="1.prom:1: no cluster label, and no cluster named"):
        _read(path, cluster=None)


def test_a_real_exporter_scrape_reads(tmp_path: Path) -> None:
    """As the JMX exporter with kquota's rules writes it (tests/usage/test_usage_prometheus.py sees
    these lines): a never-throttled sensor's throttle time is NaN, read as 0 ms; a client-id
    with reserved characters is JMX-quoted, a user URL-encoded; both undone."""
    path = tmp_path / "1.prom"
    path.write_text(
        "# TYPE kafka_server_quota_throttle_time gauge\n"
        'kafka_server_quota_throttle_time{client_id="\\"odd,id=1\\"",type="Produce",} NaN\n'
        'kafka_server_quota_byte_rate{type="Produce",user="bob%20smith",} 12.5\n'
    )
    rows = _read(path)
    assert [(r.user, r.client_id, r.metric, r.value) for r in rows] == [
        (None, "odd,id=1", PRODUCE_THROTTLE_TIME, 0.0),
        ("bob smith", None, PRODUCE_BYTE_RATE, 12.5),
    ]


def test_a_byte_rate_of_nan_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "1.prom"
    path.write_text('kafka_server_quota_byte_rate{type="Produce"} NaN\n')
    with pytest.raises(SampleFileError, match="1.prom:1: value NaN"):
        _read(path)


def test_a_broken_jmx_quote_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "1.prom"
    path.write_text('kafka_server_quota_byte_rate{type="Produce",client_id="\\"open"} 1\n')
    with pytest.raises(SampleFileError, match="1.prom:1: .*client_id.*must end with a quote"):
        _read(path)
