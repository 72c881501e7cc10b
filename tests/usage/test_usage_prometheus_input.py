"""kquota.usage.prometheus against hostile or failing servers.

The answers a real Prometheus gives are tested in test_usage_prometheus.py. Here a FakePrometheus
(named fake: a real server cannot be made on demand to answer slowly, redirect, hold
negative quota values or millions of series) serves canned answers on loopback, and
records the Authorization header it was sent.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kquota.errors import KquotaError, UsageError
from kquota.runtime import deadline
from kquota.usage.prometheus import PrometheusError, default_step, prometheus_samples
from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample


class FakePrometheus:
    """FakePrometheus answers /api/v1/query with ``count`` and /api/v1/query_range with
    ``series``; ``status``/``body``/``delay``/``location`` override the answer."""

    def __init__(self) -> None:
        self.count = 1
        self.series: list[dict[str, Any]] = []
        self.status = 200
        self.body: bytes | None = None
        self.delay = 0.0
        self.location: str | None = None
        self.authorizations: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                fake.authorizations.append(self.headers.get("Authorization"))
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.body is not None:
                    body = fake.body
                elif self.path.startswith("/api/v1/query_range"):
                    data = {"resultType": "matrix", "result": fake.series}
                    body = json.dumps({"status": "success", "data": data}).encode()
                else:
                    result = [{"metric": {}, "value": [1, str(fake.count)]}]
                    data = {"resultType": "vector", "result": result}
                    body = json.dumps({"status": "success", "data": data}).encode()
                self.send_response(fake.status)
                if fake.location:
                    self.send_header("Location", fake.location)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (the slow tests)
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake() -> Iterator[FakePrometheus]:
    server = FakePrometheus()
    try:
        yield server
    finally:
        server.close()


def series(name: str, kind: str, values: list[tuple[float, str]], **labels: str) -> dict[str, Any]:
    metric = {"__name__": name, "type": kind, "instance": "b1:9404", **labels}
    return {"metric": metric, "values": [[t, v] for t, v in values]}


def read(url: str, **kwargs: Any) -> list[Sample]:
    kwargs.setdefault("start", 1000.0)
    kwargs.setdefault("end", 1060.0)
    kwargs.setdefault("step", 15.0)
    return list(prometheus_samples(url, "prod", **kwargs))


def test_rows_from_a_matrix(fake: FakePrometheus) -> None:
    fake.series = [
        series("kafka_server_quota_byte_rate", "Produce", [(1000, "12.5"), (1015.5, "0")],
               user="alice", client_id="app"),
        series("kafka_server_quota_throttle_time", "Produce", [(1000, "NaN")], client_id="app"),
    ]  # fmt: skip
    assert read(fake.url) == [
        Sample("prod", "b1:9404", "alice", "app", PRODUCE_BYTE_RATE, 1_000_000, 12.5),
        Sample("prod", "b1:9404", "alice", "app", PRODUCE_BYTE_RATE, 1_015_500, 0.0),
        # A throttle time of NaN: the sensor averaged no throttles in its window.
        Sample("prod", "b1:9404", None, "app", PRODUCE_THROTTLE_TIME, 1_000_000, 0.0),
    ]


def test_default_step_fits_prometheus(fake: FakePrometheus) -> None:
    assert default_step(0, 3600) == 15
    assert default_step(0, 7 * 86400) == 55
    fake.series = []
    assert read(fake.url, start=0.0, end=30 * 86400.0, step=None) == []


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        ("kafka_server_quota_byte_rate", "NaN"),
        ("kafka_server_quota_byte_rate", "-1"),
        ("kafka_server_quota_byte_rate", "+Inf"),
        ("kafka_server_quota_throttle_time", "-Inf"),
        ("kafka_server_quota_throttle_time", "-0.5"),
    ],
)
def test_bad_values_are_refused_with_where(fake: FakePrometheus, metric: str, value: str) -> None:
    fake.series = [series(metric, "Produce", [(1000, "1"), (1030, value)], user="bob")]
    with pytest.raises(PrometheusError) as e:
        read(fake.url)
    message = str(e.value)
    assert f"{metric} of {{user=bob}} on b1:9404 is {value} at 1030.000" in message
    assert "finite number, 0 or more" in message


def test_too_many_series_refused_with_the_count(fake: FakePrometheus) -> None:
    fake.count = 2_500_000
    with pytest.raises(PrometheusError, match=r"holds 2,500,000 quota series.*at most 100,000"):
        read(fake.url)
    assert len(fake.authorizations) == 1  # refused before the range query was sent


def test_more_series_than_counted_refused_too(fake: FakePrometheus) -> None:
    fake.count = 1
    fake.series = [
        series("kafka_server_quota_byte_rate", "Fetch", [(1000, "1")], user=f"u{i}")
        for i in range(3)
    ]
    with pytest.raises(PrometheusError, match="answered 3 quota series; kquota reads at most 2"):
        read(fake.url, max_series=2)


def test_slow_server_bounded_by_timeout(fake: FakePrometheus) -> None:
    fake.delay = 5.0
    began = time.monotonic()
    with pytest.raises(PrometheusError, match=r"Prometheus at http://127.0.0.1:\d+ did not answer"):
        read(fake.url, timeout=0.5)
    assert time.monotonic() - began < 4.5


def test_slow_server_bounded_by_the_command_deadline(fake: FakePrometheus) -> None:
    fake.delay = 5.0
    began = time.monotonic()
    with deadline.bounded(0.5, "usage"), pytest.raises(KquotaError, match="usage deadline"):
        read(fake.url)
    assert time.monotonic() - began < 4.5


def test_unreachable_names_the_url_without_credentials() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    with pytest.raises(PrometheusError) as e:
        read(f"http://reader:hunter2@127.0.0.1:{port}/prom/")
    message = str(e.value)
    assert message.startswith(f"cannot reach Prometheus at http://127.0.0.1:{port}/prom/: ")
    assert "hunter2" not in message and "reader" not in message


def test_credentials_sent_never_shown(fake: FakePrometheus) -> None:
    fake.status = 401
    fake.body = b'{"status":"error"}'
    env = {"PROM_TOKEN": "tok-very-secret"}
    with pytest.raises(PrometheusError) as e:
        read(fake.url, token_env="PROM_TOKEN", env=env)
    assert "refused the request (401)" in str(e.value)
    assert "tok-very-secret" not in str(e.value)
    assert fake.authorizations == ["Bearer tok-very-secret"]
    with pytest.raises(PrometheusError):
        read(fake.url.replace("//", "//u%40x:p%3Ass@"))
    assert fake.authorizations[-1] == "Basic dUB4OnA6c3M="  # u@x:p:ss


def test_redirect_not_followed(fake: FakePrometheus) -> None:
    fake.status = 302
    fake.location = "http://elsewhere.invalid/"
    with pytest.raises(PrometheusError, match="302 \\(a redirect\\); kquota follows none"):
        read(fake.url, token_env="T", env={"T": "x"})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>not here</html>", "answered 200 with no JSON"),
        (b'{"status":"error","error":"parse error at char 3"}', "refused the query: parse error"),
        (b'{"status":"success","data":{"resultType":"scalar"}}', "series count is not a vector"),
    ],
)
def test_odd_answers(fake: FakePrometheus, body: bytes, message: str) -> None:
    fake.body = body
    with pytest.raises(PrometheusError, match=message):
        read(fake.url)


def test_series_without_broker_label(fake: FakePrometheus) -> None:
    fake.series = [series("kafka_server_quota_byte_rate", "Produce", [(1000, "1")], instance="")]
    with pytest.raises(PrometheusError, match="has no instance label to name its broker by"):
        read(fake.url)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"token_env": "NOPE"}, r"\$NOPE is not set or empty"),
        ({"basic_auth_env": "B", "env": {"B": "no-colon"}}, r"\$B must hold user:password"),
        ({"token_env": "A", "basic_auth_env": "B"}, "not both"),
        ({"start": 2000.0}, "must end after it starts"),
        ({"step": 0.0}, "step must be a positive"),
        ({"start": 0.0, "end": 7 * 86400.0, "step": 15.0}, "use a step of at least 55s"),
        ({"selector": "}or vector(1){"}, "label matchers only"),
    ],
)
def test_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    kwargs.setdefault("env", {})
    with pytest.raises(UsageError, match=message):
        read("http://127.0.0.1:9", **kwargs)


@pytest.mark.parametrize(
    "url", ["ftp://h/", "http:///nohost", "http://h:99999/", "http://h/?q=1", "localhost:9090"]
)
def test_bad_urls(url: str) -> None:
    with pytest.raises(UsageError, match="--prometheus"):
        read(url)
